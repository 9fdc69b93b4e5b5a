// Package httpapi serves the PDP's HTTP API (DESIGN §7) with Echo: the
// decide endpoint for dispatchers, sessions, answers to asks, grants, the
// audit trail, and the health endpoints.
package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/toolperm/pdp/adapters/sqlite"
	"github.com/toolperm/pdp/pdp"
)

// Config is what the API is built from.
type Config struct {
	Engine *pdp.Engine
	Store  *sqlite.Store
	// DefaultLevel and DefaultMode apply to sessions created without them.
	DefaultLevel pdp.Level
	DefaultMode  pdp.Mode
	// MaxBodyBytes bounds request bodies (413 beyond it).
	MaxBodyBytes int64
	// MaxWait bounds GET /v1/decisions/{id}?wait=….
	MaxWait time.Duration
	Logger  *slog.Logger
}

// Server holds the API's handlers and their shared state.
type Server struct {
	cfg     Config
	waiters *waiters
}

// New returns the API as an http.Handler-compatible Echo instance.
func New(cfg Config) *echo.Echo {
	if cfg.DefaultLevel == "" {
		cfg.DefaultLevel = pdp.ReadOnly
	}
	if cfg.DefaultMode == "" {
		cfg.DefaultMode = pdp.OnDemand
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, waiters: newWaiters()}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit(strconv.FormatInt(cfg.MaxBodyBytes, 10) + "B"))
	s.routes(e)
	return e
}

func (s *Server) routes(e *echo.Echo) {
	e.POST("/v1/decide", s.decide)
	e.POST("/v1/sessions", s.createSession)
	e.GET("/v1/sessions/:id", s.getSession)
	e.PATCH("/v1/sessions/:id", s.patchSession)
	e.GET("/v1/sessions/:id/grants", s.listGrants)
	e.DELETE("/v1/sessions/:id/grants/:gid", s.deleteGrant)
	e.GET("/v1/decisions", s.listDecisions)
	e.GET("/v1/decisions/:id", s.getDecision)
	e.POST("/v1/decisions/:id/answer", s.answer)
	e.GET("/health", s.health)
	e.GET("/ready", s.ready)
}

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// ready: a policy is active and the database takes writes.
func (s *Server) ready(c echo.Context) error {
	p := s.cfg.Engine.Policy()
	if p == nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "reason": "no policy is active"})
	}
	if err := s.cfg.Store.Writable(c.Request().Context()); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "not_ready", "reason": err.Error()})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready", "revision": p.Revision})
}
