// Package httpapi serves the PDP's HTTP API (docs/design.md §7) with Echo: the
// decide endpoint for dispatchers, sessions, answers to asks, grants, the
// audit trail, and the health endpoints.
package httpapi

import (
	"context"
	"embed"
	"github.com/toolperm/pdp/frontends/hooks/hookflow"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/pdp"
	"go.opentelemetry.io/otel/trace"
)

// Store is what the API keeps and reads: the core's store roles, and
// whether the store can take writes (GET /ready).
type Store interface {
	pdp.SessionStore
	pdp.DecisionStore
	pdp.GrantStore
	pdp.AccessLog
	pdp.OutcomeStore
	Writable(ctx context.Context) error
}

// Config is what the API is built from.
type Config struct {
	Engine *pdp.Engine
	Store  Store
	// Agents are the agents whose own hook events POST /v1/hooks/{agent}
	// answers (internal/agents.All); an agent not here is 404.
	Agents []hookflow.Agent
	// DefaultLevel and DefaultMode apply to sessions created without them.
	DefaultLevel api.Level
	DefaultMode  api.Mode
	// MaxBodyBytes bounds request bodies (413 beyond it).
	MaxBodyBytes int64
	// MaxWait bounds GET /v1/decisions/{id}?wait=….
	MaxWait time.Duration
	// DecisionTimeout bounds reading (or creating) a decision's session
	// tree (default 2s); past it the answer is 503 store_unavailable.
	DecisionTimeout time.Duration
	Logger          *slog.Logger
	// Tokens are the bearer tokens and their roles; none, and no
	// SignIn, means every caller has every role (the server must then
	// listen on loopback).
	Tokens []Token
	// SignIn, when set, lets people sign in with the organisation's
	// OpenID Connect provider (signin.go); without it /auth/* is 404.
	SignIn *SignIn
	// Observer is told of every request (metrics); may be nil.
	Observer Observer
	// Metrics, when set, is served at GET /metrics without a token.
	Metrics http.Handler
	// PolicyStatus, when set, is served at GET /v1/policy (admin).
	PolicyStatus func() any
	// Impact serves POST /v1/policy/impact (admin): it replays the
	// recorded decisions in range against the bundle (a tar.gz); without
	// one the route answers 503.
	Impact func(ctx context.Context, bundle []byte, f pdp.ReplayFilter) (api.ImpactReport, error)
	// RefusalsPerSecond bounds how many refused requests (401/403) a
	// second are written to the database (default 20); the rest are only
	// counted and logged, so a flood cannot crowd out decisions.
	RefusalsPerSecond int
	// TrustedProxies are the peers whose X-Forwarded-For is believed when
	// recording who sent a refused request; without them the remote is
	// always the socket's peer (see ParseTrustedProxies).
	TrustedProxies []*net.IPNet
	// Feed serves GET /v1/events and is told of every answer and level
	// change the API records (the engine tells it of asks); without one
	// the route answers 503.
	Feed feed.Feed
	// MaxListArgBytes bounds each argument string of an item that
	// GET /v1/decisions returns (default 4 KiB); longer ones are cut and
	// the item says "truncated": true. GET /v1/decisions/{id} is whole.
	MaxListArgBytes int
	// Stopping, when set, is closed when the server starts shutting down:
	// every request parked on GET /v1/decisions/{id}?wait= then returns the
	// decision as it stands and every event stream ends, so a graceful
	// stop does not wait for them.
	Stopping <-chan struct{}
	// Tracer, when set, traces POST /v1/decide, the hook endpoint and
	// GET /v1/decisions/{id} (tracing.go), continuing a caller's
	// traceparent; nil: no spans.
	Tracer trace.Tracer
}

// AnswerSource is a store that hears of the answers other processes
// commit to the same database (replicas on PostgreSQL, which announce
// them with NOTIFY). The API subscribes when its store is one, so a
// request waiting here wakes when a person answers on another replica.
type AnswerSource interface {
	// OnAnswer calls fn with the decision id of every answer committed;
	// fn does not block.
	OnAnswer(fn func(decisionID string))
}

// Observer is told of every request and every refusal.
type Observer interface {
	Request(route, method string, code int, took time.Duration)
	AccessDenied(code int)
}

// Server holds the API's handlers and their shared state.
type Server struct {
	cfg      Config
	desk     *pdp.Desk
	sessions *pdp.Sessions
	frames   *eventFrames
	refusals window
}

// New returns the API as an http.Handler-compatible Echo instance.
func New(cfg Config) *echo.Echo {
	if cfg.DefaultLevel == "" {
		cfg.DefaultLevel = api.ReadOnly
	}
	if cfg.DefaultMode == "" {
		cfg.DefaultMode = api.OnDemand
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	if cfg.DecisionTimeout <= 0 {
		cfg.DecisionTimeout = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RefusalsPerSecond <= 0 {
		cfg.RefusalsPerSecond = 20
	}
	if cfg.MaxListArgBytes <= 0 {
		cfg.MaxListArgBytes = 4 << 10
	}
	s := &Server{cfg: cfg, frames: newEventFrames(), refusals: window{limit: cfg.RefusalsPerSecond}}
	s.desk = pdp.NewDesk(cfg.Engine, cfg.Store, pdp.DeskOptions{DefaultLevel: cfg.DefaultLevel, DefaultMode: cfg.DefaultMode,
		SessionTimeout: cfg.DecisionTimeout, Stopping: cfg.Stopping, Changed: s.changed})
	s.sessions = s.desk.Sessions
	if src, ok := cfg.Store.(AnswerSource); ok {
		src.OnAnswer(s.desk.Answered)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = remoteExtractor(cfg.TrustedProxies)
	e.HTTPErrorHandler = s.handleError
	e.Use(s.logRequests)
	e.Use(middleware.Recover())
	e.Use(s.sameOrigin)
	// The hook endpoint bounds its body itself, so that an event over the
	// limit is the agent's deny, not a 413 the agent runs the tool on.
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{Limit: strconv.FormatInt(cfg.MaxBodyBytes, 10) + "B", Skipper: isHookRoute}))
	e.Use(s.authenticate)
	s.routes(e)
	return e
}

// routes registers every route with the roles that may call it.
func (s *Server) routes(e *echo.Echo) {
	anyone := []Role{Dispatcher, User, Auditor}
	e.POST("/v1/decide", s.decide, s.traceRoute, s.require(Dispatcher))
	e.POST("/v1/simulate", s.simulate, s.require(User, Auditor))
	e.GET("/v1/sessions", s.listSessions, s.require(User, Auditor))
	e.POST("/v1/sessions", s.createSession, s.require(Dispatcher, User))
	e.GET("/v1/sessions/:id", s.getSession, s.require(anyone...))
	e.PATCH("/v1/sessions/:id", s.patchSession, s.require(User))
	e.GET("/v1/sessions/:id/grants", s.listGrants, s.require(User, Auditor))
	e.DELETE("/v1/sessions/:id/grants/:gid", s.deleteGrant, s.require(User))
	e.GET("/v1/decisions", s.listDecisions, s.require(User, Auditor))
	e.GET("/v1/decisions/:id", s.getDecision, s.traceRoute, s.require(anyone...))
	e.POST("/v1/decisions/:id/answer", s.answer, s.ticketOr(s.require(User)))
	e.GET("/v1/decisions/:id/answer", s.confirmTicket) // ?ticket=: the ticket is the credential (tickets.go)
	e.POST("/v1/decisions/by-tool-use/:id/outcome", s.outcome, s.require(Dispatcher))
	// Each agent's own hook input and output; every failure, a refused
	// token included, is answered as the agent's deny (hooks.go).
	e.POST(hookRoute, s.hook, s.traceRoute, s.hookAnswers, s.require(Dispatcher))
	e.GET("/v1/events", s.events, s.require(anyone...))
	e.GET("/v1/access-events", s.listAccessEvents, s.require(Auditor))
	e.GET("/v1/suggestions", s.listSuggestions, s.require(User, Auditor, Dispatcher))
	e.POST("/v1/suggestions/accept", s.acceptSuggestion, s.require(User))
	if s.cfg.PolicyStatus != nil {
		e.GET("/v1/policy", s.policyStatus, s.require(Admin))
	}
	e.POST("/v1/policy/impact", s.policyImpact, s.require(Admin))
	e.GET("/v1/openapi.json", s.openapi)
	e.GET("/auth/login", s.login)
	e.GET("/auth/callback", s.callback)
	e.POST("/auth/logout", s.logout)
	e.GET("/auth/me", s.whoami)
	toConsole := func(c echo.Context) error { return c.Redirect(http.StatusFound, "/ui/") }
	e.GET("/", toConsole)
	e.GET("/ui", toConsole)
	e.GET("/ui/*", echo.WrapHandler(http.StripPrefix("/ui/", http.FileServerFS(consoleFiles))))
	e.GET("/health", s.health)
	e.GET("/ready", s.ready)
	if s.cfg.Metrics != nil {
		e.GET("/metrics", echo.WrapHandler(s.cfg.Metrics))
	}
}

// logRequests writes one line per request — never a command, a path
// argument or a token — and tells the observer.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		code, took := c.Response().Status, time.Since(start)
		if s.cfg.Observer != nil {
			s.cfg.Observer.Request(route, c.Request().Method, code, took)
		}
		attrs := []any{"method", c.Request().Method, "route", route, "status", code, "duration", took, "caller", callerOf(c).name}
		if id, ok := c.Get(decisionIDKey).(string); ok {
			attrs = append(attrs, "decision_id", id)
		}
		s.cfg.Logger.Info("request", attrs...)
		return nil
	}
}

// decisionIDKey carries the decision id of a request to its log line.
const decisionIDKey = "pdp.decision_id"

// policyStatus shows the active revision, its source, when it was
// activated and the last error.
func (s *Server) policyStatus(c echo.Context) error {
	return c.JSON(http.StatusOK, s.cfg.PolicyStatus())
}

// consoleFiles are the web console's pages, served at /ui/.
//
//go:embed ui
var consoleRoot embed.FS

var consoleFiles, _ = fs.Sub(consoleRoot, "ui")

// OpenAPI is the OpenAPI 3 document of this API.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) openapi(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/json", OpenAPI)
}

// health answers that the process is up; an admin (or anyone, when no
// tokens are configured) also gets the build (pdp version).
func (s *Server) health(c echo.Context) error {
	if callerOf(c).has(Admin) {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok", "version": buildinfo.Read().String()})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// HealthReporter is a store that knows, without asking the database,
// whether the audit trail can be written now (the last commits' results,
// its own probes, the file check).
type HealthReporter interface {
	Health() error
}

// readyProbeTimeout bounds asking a store that does not report its
// health (GET /ready answers within it).
const readyProbeTimeout = 100 * time.Millisecond

// ready: a policy is active and the audit trail can be written. It
// reads the store's recent health, so a probe never queues with
// decisions.
func (s *Server) ready(c echo.Context) error {
	p := s.cfg.Engine.Policy()
	if p == nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "reason": "no policy is active"})
	}
	var err error
	if h, ok := s.cfg.Store.(HealthReporter); ok {
		err = h.Health()
	} else {
		ctx, cancel := context.WithTimeout(c.Request().Context(), readyProbeTimeout)
		err = s.cfg.Store.Writable(ctx)
		cancel()
	}
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "reason": err.Error()})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready", "revision": p.Revision})
}
