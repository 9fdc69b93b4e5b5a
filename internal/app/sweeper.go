package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
)

// checkSweeper checks the retention and expiry settings before anything
// serves.
func checkSweeper(cfg config.Audit, asks config.Asks, store pdp.TrailPruner, logger *slog.Logger) error {
	if cfg.Retention < 0 {
		return fmt.Errorf("config audit.retention %s: want 0 (keep everything) or a positive duration", cfg.Retention)
	}
	if cfg.SweepInterval <= 0 {
		return fmt.Errorf("config audit.sweep_interval %s: want a positive duration", cfg.SweepInterval)
	}
	if asks.ExpireAfter < 0 {
		return fmt.Errorf("config asks.expire_after %s: want 0 (never) or a positive duration", asks.ExpireAfter)
	}
	if inc, ok := store.(interface{ Incremental() bool }); ok && cfg.Retention > 0 && !inc.Incremental() {
		logger.Warn("the database reuses the space of expired events but does not give it back; stop the server and run `pdp audit vacuum` once to switch")
	}
	return nil
}

// startSweeper runs the audit trail's retention sweeper in the
// background (settings checked by checkSweeper), which also expires the
// asks past asks.expire_after and tells changes of them; stop ends it
// and waits, so it is called before the store closes.
func startSweeper(ctx context.Context, cfg config.Audit, asks config.Asks, store pdp.TrailPruner, changes pdp.ChangeListener, observer pdp.SweepObserver, logger *slog.Logger) (stop func()) {
	sw := &pdp.Sweeper{Store: store, Retention: cfg.Retention, Interval: cfg.SweepInterval, Observer: observer, Logger: logger,
		ExpireAfter: asks.ExpireAfter, Changes: changes}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sw.Run(ctx)
	}()
	return func() { cancel(); <-done }
}
