package httpapi

import (
	"fmt"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// refuse records a refused request as an audit event, a metric and a log
// line. A flood of refusals is counted but not all written: the database's
// one writer belongs to decisions first. The remote is the socket's peer,
// or what X-Forwarded-For says only when the peer is a trusted proxy
// (Config.TrustedProxies).
func (s *Server) refuse(c echo.Context, code int, token, reason string) {
	ev := api.AccessEvent{Time: time.Now(), Method: c.Request().Method, Route: c.Path(), Code: code, Token: token, Reason: reason, Remote: c.RealIP()}
	if s.refusals.allow(ev.Time) {
		if err := s.cfg.Store.RecordAccessDenied(c.Request().Context(), ev); err != nil {
			s.cfg.Logger.Error("recording a refused request", "err", err)
		}
	}
	if s.cfg.Observer != nil {
		s.cfg.Observer.AccessDenied(code)
	}
	s.cfg.Logger.Warn("access denied", "code", code, "method", ev.Method, "route", ev.Route, "token", token, "remote", ev.Remote)
}

// forbid refuses a request the caller's role allows but its content does
// not: 403, recorded like a refusal of the role check (handleError
// records every pdp.Refusal).
func forbid(reason, format string, args ...any) error {
	return &pdp.Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// window is a per-second counter with a limit.
type window struct {
	mu    sync.Mutex
	limit int
	start time.Time
	n     int
}

func (w *window) allow(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Sub(w.start) >= time.Second {
		w.start, w.n = now, 0
	}
	w.n++
	return w.n <= w.limit
}

// listAccessEvents shows refused requests, newest first (auditor, admin).
func (s *Server) listAccessEvents(c echo.Context) error {
	return listed(c, "access_events", s.cfg.Store.AccessEvents)
}
