package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/decisionlog"
	"github.com/toolperm/pdp/adapters/httpapi"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/metrics"
	"github.com/toolperm/pdp/pdp"
)

// impactOf replays the trail in store against an uploaded bundle, loaded
// and checked as the server loads its own (signatures included).
func impactOf(src policysource.Config, trail pdp.RecordedDecisions) func(context.Context, []byte, pdp.ReplayFilter) (pdp.ImpactReport, error) {
	return func(ctx context.Context, bundle []byte, f pdp.ReplayFilter) (pdp.ImpactReport, error) {
		candidate, err := src.LoadBundle(ctx, bundle, "upload")
		if err != nil {
			return pdp.ImpactReport{}, pdp.Invalid("invalid_bundle", "the candidate bundle does not load: %v", err)
		}
		return pdp.Impact(ctx, candidate, trail, f, nil)
	}
}

func serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the decision point's HTTP API",
		Long: `Runs the HTTP API (POST /v1/decide, sessions, answers, grants, the audit
trail) on config.yaml's settings: 127.0.0.1:8181, the SQLite file pdp.db
(created on first start), the built-in policy. --db (db.path) may instead
be a postgres:// URL: replicas on one PostgreSQL database behave as one
decision point. Flags override the file;
PDP_<KEY PATH> environment variables override both file and defaults
(PDP_SERVER_ADDR, PDP_DB_PATH, PDP_POLICY_PATH, ...).

SIGINT or SIGTERM stops it gracefully: decisions in flight finish and their
audit events are committed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, nil)
		},
	}
	cmd.Flags().String("addr", "", "listen address HOST:PORT (default: config's server.addr, 127.0.0.1:8181)")
	cmd.Flags().String("db", "", "SQLite file or postgres:// URL (default: config's db.path, pdp.db)")
	cmd.Flags().String("policies", "", "policy: a DIR, a BUNDLE (.tar.gz) or an http(s) URL of a bundle (default: config's policy.path, else the built-in policy)")
	return cmd
}

// serve runs the service until ctx ends. ready, when not nil, receives
// the listening address once the service answers requests.
func serve(ctx context.Context, cfg config.Config, ready chan<- string) error {
	logger, err := newLogger(cfg.Log)
	if err != nil {
		return err
	}
	level, mode := pdp.Level(cfg.Sessions.PermissionLevel), pdp.Mode(cfg.Sessions.Mode)
	if err := pdp.ValidateSession(&pdp.Session{PermissionLevel: level, Mode: mode}); err != nil {
		return fmt.Errorf("config sessions: %w", err)
	}
	tokens, err := loadTokens(cfg.Auth.Tokens)
	if err != nil {
		return err
	}
	proxies, err := httpapi.ParseTrustedProxies(cfg.Server.TrustedProxies)
	if err != nil {
		return fmt.Errorf("config server.trusted_proxies: %w", err)
	}
	if len(tokens) == 0 {
		if !httpapi.IsLoopback(cfg.Server.Addr) {
			return fmt.Errorf("refusing to listen on %s without access control: configure auth.tokens, or listen on loopback", cfg.Server.Addr)
		}
		logger.Warn("no auth.tokens configured: every caller on this machine has every role; listening on loopback only", "addr", cfg.Server.Addr)
	}
	m := metrics.New()
	src, err := policySource(cfg.Policy)
	if err != nil {
		return err
	}
	if cfg.Server.DecisionTimeout <= 0 {
		return fmt.Errorf("config server.decision_timeout %v: want a positive duration", cfg.Server.DecisionTimeout)
	}
	store, err := openDatabase(ctx, cfg.DB, m, &serving{decisionTimeout: cfg.Server.DecisionTimeout, logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		if err := store.Close(); err != nil {
			logger.Error("closing the database", "err", err)
		}
		st := auditStatsOf(store)
		logger.Info("audit trail closed", "events", st.Events, "transactions", st.Transactions, "largest_batch", st.MaxBatch, "failed_transactions", st.Errors)
	}()
	stopSweeper, err := startSweeper(ctx, cfg.Audit, store, m, logger)
	if err != nil {
		return err
	}
	defer stopSweeper() // before the store closes
	assess, err := newAssessor(cfg.Assessor, m)
	if err != nil {
		return err
	}
	if assess == nil {
		logger.Warn("no assessor configured (assessor.url): SMART sessions ask before every shell command")
	}
	// The live feed reads the store's change log; the engine tells it of
	// asks, the API of answers and level changes.
	changes, err := feed.New(ctx, store, feed.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer changes.Close()
	// A store shared by replicas also tells it of the changes the others
	// commit.
	if shared, ok := store.(changeSource); ok {
		shared.OnChange(changes.Changed)
	}
	var audit pdp.AuditLog = store
	if cfg.DecisionLog.Path != "" {
		dlog, err := decisionlog.Open(cfg.DecisionLog.Path, decisionlog.Options{Mask: cfg.DecisionLog.Mask, ReplicaID: cfg.DecisionLog.ReplicaID, Logger: logger})
		if err != nil {
			return err
		}
		// Deferred after the store's close, so it runs before it, once the
		// server has stopped: every line of an answered decision is written.
		defer func() {
			if err := dlog.Close(); err != nil {
				logger.Error("closing the decision log", "err", err)
			}
			st := dlog.Stats()
			logger.Info("decision log closed", "lines", st.Lines, "dropped", st.Dropped)
		}()
		audit = decisionlog.Tee(store, dlog)
	}
	audit = deadlineAudit{audit, cfg.Server.DecisionTimeout}
	engine := pdp.New(nil, pdp.Components{
		Assessor:    assess,
		Audit:       audit,
		Shell:       shell.Parser{},
		Workspace:   workspaceResolver(cfg.Paths),
		Logger:      logger,
		Observer:    m,
		EvalTimeout: cfg.Policy.EvalTimeout,
		MemoBytes:   cfg.Policy.MemoBytes,
		Changes:     changes,
	})
	watcher := policysource.NewWatcher(src, engine, policysource.WatchOptions{Poll: cfg.Policy.PollInterval, Observer: m, Logger: logger})
	if _, err := watcher.Reload(ctx); err != nil {
		if policysource.KindOf(src.Path) != policysource.HTTP {
			return fmt.Errorf("no valid policy, not starting: %w", err)
		}
		// A bundle server may come up after us: serve unready (every
		// decision denied) and keep polling.
		logger.Error("no valid policy yet; not ready until one loads", "source", src.Path, "err", err)
	}
	go watcher.Run(ctx)
	// Closed when shutting down starts: parked waits answer at once.
	stopping := make(chan struct{})
	api := httpapi.New(httpapi.Config{
		Engine: engine, Store: store,
		DefaultLevel: level, DefaultMode: mode,
		MaxBodyBytes: cfg.Server.MaxBodyBytes, MaxWait: cfg.Server.MaxWait, DecisionTimeout: cfg.Server.DecisionTimeout,
		Logger: logger, Tokens: tokens, Observer: m, TrustedProxies: proxies, Feed: changes,
		PolicyStatus: func() any { return watcher.Status() },
		Impact:       impactOf(src, store),
		Metrics:      onMainListener(cfg.Metrics.Addr, m.Handler()),
		Stopping:     stopping,
	})
	if cfg.Metrics.Addr != "" {
		mln, err := net.Listen("tcp", cfg.Metrics.Addr)
		if err != nil {
			return fmt.Errorf("listening for metrics on %s: %w", cfg.Metrics.Addr, err)
		}
		msrv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: headerTimeout(cfg.Server.ReadTimeout),
			ReadTimeout: cfg.Server.ReadTimeout, IdleTimeout: cfg.Server.IdleTimeout}
		go func() { _ = msrv.Serve(mln) }()
		defer msrv.Close()
		logger.Info("serving metrics", "addr", "http://"+mln.Addr().String()+"/metrics")
	}
	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Server.Addr, err)
	}
	// ReadTimeout covers reading a request, body included; no write
	// timeout, so an answer held for ?wait= is not cut.
	srv := &http.Server{Handler: api, ReadHeaderTimeout: headerTimeout(cfg.Server.ReadTimeout),
		ReadTimeout: cfg.Server.ReadTimeout, IdleTimeout: cfg.Server.IdleTimeout}
	// When shutting down starts, requests parked on ?wait= answer with the
	// decision as it stands (still pending) and streams of GET /v1/events
	// end; the other requests in flight finish.
	srv.RegisterOnShutdown(func() { close(stopping) })
	srv.RegisterOnShutdown(changes.Close)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	st := watcher.Status()
	logger.Info("serving", "addr", "http://"+ln.Addr().String(), "policy", st.Source, "revision", st.Revision, "db", dbLabel(cfg.DB.Path))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: answering parked waits as they stand, ending event streams, finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

func newLogger(cfg config.Log) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.Level)); err != nil {
		return nil, fmt.Errorf("config log.level %q: want debug, info, warn or error", cfg.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(cfg.Format) {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("config log.format %q: want text or json", cfg.Format)
}

// onMainListener is the metrics handler for the API's listener, or nil
// when metrics have a listen address of their own.
func onMainListener(metricsAddr string, h http.Handler) http.Handler {
	if metricsAddr != "" {
		return nil
	}
	return h
}

// headerTimeout bounds reading a request's headers: 10s, or the read
// timeout when that is shorter.
func headerTimeout(read time.Duration) time.Duration {
	if read > 0 && read < 10*time.Second {
		return read
	}
	return 10 * time.Second
}
