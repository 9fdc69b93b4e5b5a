package pdp

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// TrailPruner is what a store does for retention: it deletes the oldest
// events of the audit trail in short write transactions, so a decision
// recorded meanwhile waits for one batch at most, and gives their space
// back. Only the event's own time counts: an unanswered ask younger than
// the cut stays answerable, and grants never depend on the event that
// created them.
type TrailPruner interface {
	// PruneDecisions deletes at most limit events whose time is before
	// the cut, oldest first, in one transaction, and says how many it
	// deleted; fewer than limit means none is left.
	PruneDecisions(ctx context.Context, before time.Time, limit int) (int, error)
	// ReclaimSpace gives the space of deleted events back to the file
	// system, in short steps; a backend that reuses it anyway may do
	// nothing.
	ReclaimSpace(ctx context.Context) error
	// TrailSize measures the trail, cheaply enough to call every sweep.
	TrailSize(ctx context.Context) (TrailSize, error)
}

// TrailSize is how big the audit trail is.
type TrailSize struct {
	// Events in the trail (an estimate where counting would read it all).
	Events int64
	// Bytes the store occupies on disk.
	Bytes int64
}

// SweepObserver is told what the sweeper does, for metrics.
type SweepObserver interface {
	// Swept reports one sweep: the events it deleted, how long it took,
	// and its error, if any.
	Swept(deleted int, took time.Duration, err error)
	// TrailMeasured reports the trail's size after a sweep.
	TrailMeasured(size TrailSize)
}

// Default batching of a sweep.
const (
	DefaultSweepBatch = 256
	DefaultSweepPause = 5 * time.Millisecond
)

// Sweeper deletes the events of the audit trail older than the retention,
// every interval, in batches: after each batch it waits at least as long
// as the batch took, so deleting never holds more than half of the
// store's writer.
type Sweeper struct {
	Store TrailPruner
	// Retention is how long an event is kept; 0 keeps every event (Run
	// then only measures the trail).
	Retention time.Duration
	// Interval is the time between sweeps.
	Interval time.Duration
	// Batch is how many events one transaction deletes (default
	// DefaultSweepBatch).
	Batch int
	// Pause is the least wait between batches (default DefaultSweepPause).
	Pause time.Duration
	// ExpireAfter is how long an ask waits for a person's answer before
	// the sweep answers it api.Expired (expiry.go); 0 never.
	ExpireAfter time.Duration
	// Changes is told when the sweep expired asks (the live feed).
	Changes  ChangeListener
	Observer SweepObserver
	Logger   *slog.Logger
	Now      func() time.Time
}

// Run sweeps every interval until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	logger := s.logger()
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		if n, err := s.expire(ctx); err != nil && ctx.Err() == nil {
			logger.Error("expiring asks failed", "expired", n, "err", err)
		} else if n > 0 {
			logger.Info("expired unanswered asks", "expired", n, "after", s.ExpireAfter)
		}
		if s.Retention > 0 {
			if n, err := s.Prune(ctx, s.now().Add(-s.Retention), nil); err != nil && ctx.Err() == nil {
				logger.Error("audit sweep failed", "deleted", n, "err", err)
			} else if n > 0 {
				logger.Debug("audit sweep", "deleted", n)
			}
		}
		s.measure(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Prune deletes every event before the cut, batch by batch, then gives
// the space back; progress, when not nil, is told the running total after
// each batch. It returns how many events it deleted.
func (s *Sweeper) Prune(ctx context.Context, before time.Time, progress func(deleted int)) (int, error) {
	start := time.Now()
	batch, pause := s.Batch, s.Pause
	if batch <= 0 {
		batch = DefaultSweepBatch
	}
	if pause <= 0 {
		pause = DefaultSweepPause
	}
	deleted := 0
	var err error
	for {
		t := time.Now()
		var n int
		n, err = s.Store.PruneDecisions(ctx, before, batch)
		deleted += n
		if err != nil {
			err = fmt.Errorf("deleting events before %s: %w", before.UTC().Format(time.RFC3339), err)
			break
		}
		if progress != nil && n > 0 {
			progress(deleted)
		}
		if n < batch {
			break
		}
		if err = Wait(ctx, max(pause, time.Since(t))); err != nil {
			break
		}
	}
	if err == nil && deleted > 0 {
		if err = s.Store.ReclaimSpace(ctx); err != nil {
			err = fmt.Errorf("giving the space back: %w", err)
		}
	}
	if s.Observer != nil {
		s.Observer.Swept(deleted, time.Since(start), err)
	}
	return deleted, err
}

func (s *Sweeper) measure(ctx context.Context) {
	if s.Observer == nil {
		return
	}
	size, err := s.Store.TrailSize(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger().Warn("measuring the audit trail", "err", err)
		}
		return
	}
	s.Observer.TrailMeasured(size)
}

func (s *Sweeper) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Sweeper) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Wait waits d, or until ctx ends and returns its error: the pause a
// long job of a store takes between two steps, so decisions get the
// store's writer meanwhile.
func Wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
