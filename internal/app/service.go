// Package service assembles the decision point from a configuration: the
// one place where its parts meet — logger, metrics, store, retention
// sweeper, assessor, live feed, decision log, engine, policy watcher and
// HTTP API. `pdp serve`, the commands that decide in-process, the load
// generator and the test server all build through it; tests swap parts
// through Options. What it builds it closes, in the reverse order.
package app

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolperm/pdp/internal/agents"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toolperm/pdp/adapters/decisionlog"
	"github.com/toolperm/pdp/adapters/notify"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/metrics"
	"github.com/toolperm/pdp/pdp"
)

// Service is a decision point built from a configuration.
type Service struct {
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	Store   Store
	Feed    *feed.Hub
	Engine  *pdp.Engine
	// Watcher reloads the configured policy; nil when Options.Policy
	// fixed it.
	Watcher *policysource.Watcher
	// Handler is the HTTP API.
	Handler http.Handler

	cfg config.Config
	// notifier sends the sinks of cfg.Notify their events; nil without.
	notifier *notify.Notifier
	// cert is the API's TLS certificate; nil serves plain HTTP.
	cert *tlsserve.Certificate
	// stopping is closed when shutting down starts: parked waits answer
	// at once.
	stopping chan struct{}
	// closers run in the reverse of the order they were added (Close).
	closers []func()
}

// Options are the parts a caller supplies instead of the ones the
// configuration describes.
type Options struct {
	// Store replaces the database cfg.DB names; the service closes it.
	Store Store
	// Policy, when set, is the only policy served: no source, no watcher.
	Policy *pdp.Policy
	// Logger replaces the one cfg.Log describes.
	Logger *slog.Logger
	// Configure changes the API's configuration and the engine's
	// components after the configuration's are set and before either is
	// built; they apply in order.
	Configure []func(*httpapi.Config, *pdp.Components)
}

// New builds every part cfg describes. On an error, what was built is
// closed again.
func New(ctx context.Context, cfg config.Config, opts Options) (s *Service, err error) {
	s = &Service{cfg: cfg, Logger: opts.Logger, stopping: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if err := CheckError(config.Origin{}, Check(cfg, os.Getenv)); err != nil {
		return s, err
	}
	if s.Logger == nil {
		if s.Logger, err = NewLogger(cfg.Log); err != nil {
			return s, err
		}
	}
	logger := s.Logger
	level, mode := api.Level(cfg.Sessions.PermissionLevel), api.Mode(cfg.Sessions.Mode)
	if err := pdp.ValidateSession(&pdp.SessionTree{PermissionLevel: level, Mode: mode}); err != nil {
		return s, fmt.Errorf("config sessions: %w", err)
	}
	tokens, err := Tokens(cfg.Auth.Tokens)
	if err != nil {
		return s, err
	}
	proxies, err := httpapi.ParseTrustedProxies(cfg.Server.TrustedProxies)
	if err != nil {
		return s, fmt.Errorf("config server.trusted_proxies: %w", err)
	}
	signIn, err := NewSignIn(ctx, cfg, os.Getenv)
	if err != nil {
		return s, err
	}
	if signIn != nil {
		logger.Info("people sign in with the OpenID provider", "issuer", cfg.Auth.OIDC.Issuer, "client_id", cfg.Auth.OIDC.ClientID, "redirect_url", RedirectURL(cfg))
		if cfg.Auth.OIDC.Cookie.KeyEnv == "" {
			logger.Warn("auth.oidc.cookie.key_env is not set: sign-ins are signed with a key of this process, so a restart signs everyone out and replicas do not share them")
		}
	}
	if len(tokens) == 0 && signIn == nil {
		if !httpapi.IsLoopback(cfg.Server.Addr) {
			return s, fmt.Errorf("refusing to listen on %s without access control: configure auth.tokens or auth.oidc, or listen on loopback", cfg.Server.Addr)
		}
		logger.Warn("no auth.tokens configured: every caller on this machine has every role; listening on loopback only", "addr", cfg.Server.Addr)
	}
	if s.cert, err = tlsserve.Open(tlsserve.SettingsOf(cfg.Server), cfg.Server.Addr, len(tokens) > 0 || signIn != nil, httpapi.IsLoopback(cfg.Server.Addr)); err != nil {
		return s, err
	}
	if cfg.Server.DecisionTimeout <= 0 {
		return s, fmt.Errorf("config server.decision_timeout %v: want a positive duration", cfg.Server.DecisionTimeout)
	}
	s.Metrics = metrics.New()
	tracing, err := s.openTracing(ctx, cfg.OTel, logger)
	if err != nil {
		return s, fmt.Errorf("config otel: %w", err)
	}
	src, err := PolicySource(cfg.Policy)
	if err != nil {
		return s, err
	}
	s.Store = opts.Store
	if s.Store == nil {
		if s.Store, err = OpenDatabase(ctx, cfg.DB, s.Metrics, &Serving{DecisionTimeout: cfg.Server.DecisionTimeout, Logger: logger}); err != nil {
			return s, err
		}
	}
	store := s.Store
	s.onClose(func() {
		if err := store.Close(); err != nil {
			logger.Error("closing the database", "err", err)
		}
		st := auditStatsOf(store)
		logger.Info("audit trail closed", "events", st.Events, "transactions", st.Transactions, "largest_batch", st.MaxBatch, "failed_transactions", st.Errors)
	})
	if h, ok := store.(httpapi.HealthReporter); ok {
		s.Metrics.StoreHealth(h.Health)
	}
	if err := checkSweeper(cfg.Audit, cfg.Asks, store, logger); err != nil {
		return s, err
	}
	assess, err := NewAssessor(cfg.Assessor, s.Metrics)
	if err != nil {
		return s, err
	}
	if assess == nil {
		logger.Warn("no assessor configured (assessor.url): SMART sessions ask before every shell command")
	}
	// The live feed reads the store's change log; the engine tells it of
	// asks, the API of answers and level changes.
	if s.Feed, err = feed.New(ctx, store, feed.Options{Logger: logger}); err != nil {
		return s, err
	}
	s.onClose(s.Feed.Close)
	// A store shared by replicas also tells it of the changes the others
	// commit.
	if shared, ok := store.(changeSource); ok {
		shared.OnChange(s.Feed.Changed)
	}
	if s.notifier, err = newNotifier(cfg, store, s.Feed, s.Metrics, logger); err != nil {
		return s, err
	}
	var audit pdp.AuditLog = store
	if cfg.DecisionLog.Path != "" {
		dlog, err := decisionlog.Open(cfg.DecisionLog.Path, decisionlog.Options{Mask: cfg.DecisionLog.Mask, ReplicaID: cfg.DecisionLog.ReplicaID, Logger: logger})
		if err != nil {
			return s, err
		}
		// Closed before the store, once the server has stopped: every line
		// of an answered decision is written.
		s.onClose(func() {
			if err := dlog.Close(); err != nil {
				logger.Error("closing the decision log", "err", err)
			}
			st := dlog.Stats()
			logger.Info("decision log closed", "lines", st.Lines, "dropped", st.Dropped)
		})
		audit = decisionlog.Tee(store, dlog)
	}
	parts := components(cfg, assess)
	parts.Audit = deadlineAudit{audit, cfg.Server.DecisionTimeout}
	parts.Logger, parts.Observer, parts.Changes = logger, s.Metrics, s.Feed
	api := httpapi.Config{
		Store:        store,
		Agents:       agents.All,
		DefaultLevel: level, DefaultMode: mode,
		MaxBodyBytes: cfg.Server.MaxBodyBytes, MaxWait: cfg.Server.MaxWait, DecisionTimeout: cfg.Server.DecisionTimeout,
		Logger: logger, Tokens: tokens, SignIn: signIn, Observer: s.Metrics, TrustedProxies: proxies, Feed: s.Feed,
		Impact:   ImpactOf(src, store),
		Metrics:  onMainListener(cfg.Metrics.Addr, s.Metrics.Handler()),
		Stopping: s.stopping,
	}
	if tracing != nil {
		parts.Tracer, parts.TraceCommand, api.Tracer = tracing.Tracer, traceCommand(cfg.DecisionLog), tracing.Tracer
	}
	for _, f := range opts.Configure {
		f(&api, &parts)
	}
	s.Engine = pdp.New(opts.Policy, parts)
	api.Engine = s.Engine
	if opts.Policy == nil {
		var observer policysource.Observer = s.Metrics
		if s.notifier != nil { // the sinks that want policy events hear of each activation
			observer = policyObservers{s.Metrics, s.notifier}
		}
		s.Watcher = policysource.NewWatcher(src, s.Engine, policysource.WatchOptions{Poll: cfg.Policy.PollInterval, Observer: observer, Logger: logger})
		if _, err := s.Watcher.Reload(ctx); err != nil {
			if policysource.KindOf(src.Path) != policysource.HTTP {
				return s, fmt.Errorf("no valid policy, not starting: %w", err)
			}
			// A bundle server may come up after us: serve unready (every
			// decision denied) and keep polling.
			logger.Error("no valid policy yet; not ready until one loads", "source", src.Path, "err", err)
		}
		if api.PolicyStatus == nil {
			api.PolicyStatus = func() any { return s.Watcher.Status() }
		}
	}
	s.Handler = httpapi.New(api)
	return s, nil
}

func (s *Service) onClose(f func()) { s.closers = append(s.closers, f) }

// Close closes what New built, in the reverse order: the decision log
// before the store it tees, the feed before both. It may be called more
// than once.
func (s *Service) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Stopping is closed when shutting down starts (Run), or by a caller
// that serves the handler itself: requests parked on ?wait= then answer
// with the decision as it stands.
func (s *Service) Stopping() { closeOnce(s.stopping) }

func closeOnce(c chan struct{}) {
	select {
	case <-c:
	default:
		close(c)
	}
}

// Run serves the HTTP API (and metrics, on their own address when
// configured), watches the policy and sweeps the trail until ctx ends,
// then shuts down gracefully: parked waits answer as they stand, event
// streams end, requests in flight finish. ready, when not nil, receives
// the listening address once the service answers requests. Close still
// follows.
func (s *Service) Run(ctx context.Context, ready chan<- string) error {
	cfg, logger := s.cfg, s.Logger
	background, stopBackground := context.WithCancel(ctx)
	defer stopBackground()
	stopSweeper := startSweeper(background, cfg.Audit, cfg.Asks, s.Store, s.Feed, s.Metrics, logger)
	defer stopSweeper() // before the store closes
	defer startNotifier(background, s.notifier)()
	if s.Watcher != nil {
		go s.Watcher.Run(background)
	}
	if cfg.Metrics.Addr != "" {
		mln, err := net.Listen("tcp", cfg.Metrics.Addr)
		if err != nil {
			return fmt.Errorf("listening for metrics on %s: %w", cfg.Metrics.Addr, err)
		}
		msrv := &http.Server{Handler: s.Metrics.Handler(), ReadHeaderTimeout: headerTimeout(cfg.Server.ReadTimeout),
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
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: headerTimeout(cfg.Server.ReadTimeout),
		ReadTimeout: cfg.Server.ReadTimeout, IdleTimeout: cfg.Server.IdleTimeout}
	// When shutting down starts, requests parked on ?wait= answer with the
	// decision as it stands (still pending) and streams of GET /v1/events
	// end; the other requests in flight finish.
	srv.RegisterOnShutdown(s.Stopping)
	srv.RegisterOnShutdown(s.Feed.Close)
	if s.cert != nil {
		go s.cert.Watch(background, tlsserve.WatchOptions{Logger: logger, Observer: s.Metrics})
	}
	errc := make(chan error, 1)
	go func() { errc <- tlsserve.Serve(srv, ln, s.cert) }()
	policy, revision := "", ""
	if s.Watcher != nil {
		st := s.Watcher.Status()
		policy, revision = st.Source, st.Revision
	} else if p := s.Engine.Policy(); p != nil {
		policy, revision = p.Source, p.Revision
	}
	logger.Info("serving", "addr", tlsserve.Scheme(s.cert)+"://"+ln.Addr().String(), "policy", policy, "revision", revision, "db", DBLabel(cfg.DB.Path))
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

// ImpactOf replays the trail in store against an uploaded bundle, loaded
// and checked as the server loads its own (signatures included).
func ImpactOf(src policysource.Config, trail pdp.RecordedDecisions) func(context.Context, []byte, pdp.ReplayFilter) (api.ImpactReport, error) {
	return func(ctx context.Context, bundle []byte, f pdp.ReplayFilter) (api.ImpactReport, error) {
		candidate, err := src.LoadBundle(ctx, bundle, "upload")
		if err != nil {
			return api.ImpactReport{}, pdp.Invalid("invalid_bundle", "the candidate bundle does not load: %v", err)
		}
		return pdp.Impact(ctx, candidate, trail, f, nil)
	}
}

// NewLogger is the logger cfg describes, on standard error.
func NewLogger(cfg config.Log) (*slog.Logger, error) {
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
