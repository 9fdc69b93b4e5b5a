package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/pdp"
)

// Role is what a token may do.
type Role string

// The roles. A dispatcher (the agent runtime) decides and creates
// sessions; only a person's channel (user) answers asks, changes levels
// and modes, and revokes grants; an auditor reads; an admin does all.
const (
	Dispatcher Role = "dispatcher"
	User       Role = "user"
	Auditor    Role = "auditor"
	Admin      Role = "admin"
)

// Token is a bearer token, known by its SHA-256 hash only.
type Token struct {
	Name  string
	Hash  [32]byte
	Roles []Role
}

// caller is who sent a request.
type caller struct {
	name  string
	roles []Role
	open  bool // no tokens are configured: every role
}

func (c caller) has(roles ...Role) bool {
	if c.open || slices.Contains(c.roles, Admin) {
		return true
	}
	for _, r := range roles {
		if slices.Contains(c.roles, r) {
			return true
		}
	}
	return false
}

const callerKey = "pdp.caller"

func callerOf(c echo.Context) caller {
	who, _ := c.Get(callerKey).(caller)
	return who
}

// authenticate finds the caller of every request. With no tokens
// configured every caller has every role (the server then listens on
// loopback only).
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if len(s.cfg.Tokens) == 0 {
			c.Set(callerKey, caller{name: "anonymous", open: true})
			return next(c)
		}
		header := c.Request().Header.Get("Authorization")
		presented, ok := strings.CutPrefix(header, "Bearer ")
		if ok && presented != "" {
			if t := s.match(presented); t != nil {
				c.Set(callerKey, caller{name: t.Name, roles: t.Roles})
				return next(c)
			}
		}
		c.Set(callerKey, caller{})
		return next(c)
	}
}

// match compares the token's hash with every configured hash in constant
// time, without stopping at the first match.
func (s *Server) match(presented string) *Token {
	sum := sha256.Sum256([]byte(presented))
	var found *Token
	for i := range s.cfg.Tokens {
		if subtle.ConstantTimeCompare(sum[:], s.cfg.Tokens[i].Hash[:]) == 1 {
			found = &s.cfg.Tokens[i]
		}
	}
	return found
}

// require lets a request through when its caller has one of roles: 401
// without a known token, 403 with the wrong role. Both are recorded.
func (s *Server) require(roles ...Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			who := callerOf(c)
			switch {
			case who.open || who.has(roles...):
				return next(c)
			case who.name == "":
				s.refuse(c, http.StatusUnauthorized, "", "missing or unknown bearer token")
				return fail(http.StatusUnauthorized, "unauthenticated", "a valid bearer token is required")
			default:
				s.refuse(c, http.StatusForbidden, who.name, "role")
				return fail(http.StatusForbidden, "forbidden", "token %q may not %s %s (needs one of %v)", who.name, c.Request().Method, c.Path(), roles)
			}
		}
	}
}

// refuse records a refused request as an audit event, a metric and a log
// line. A flood of refusals is counted but not all written: the database's
// one writer belongs to decisions first. The remote is the socket's peer,
// or what X-Forwarded-For says only when the peer is a trusted proxy
// (Config.TrustedProxies).
func (s *Server) refuse(c echo.Context, code int, token, reason string) {
	ev := pdp.AccessEvent{Time: time.Now(), Method: c.Request().Method, Route: c.Path(), Code: code, Token: token, Reason: reason, Remote: c.RealIP()}
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

// sameOrigin keeps web pages on other sites away from the API: a request
// a browser sends from another origin is refused, and without tokens
// (where the network is the only protection) so is one addressed to a
// host name that is not loopback (DNS rebinding). The console may not be
// framed by another site.
func (s *Server) sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		req := c.Request()
		if origin := req.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host != req.Host {
				s.refuse(c, http.StatusForbidden, "", "cross origin")
				return fail(http.StatusForbidden, "cross_origin", "requests from another origin (%s) are refused", origin)
			}
		}
		if len(s.cfg.Tokens) == 0 && !IsLoopback(req.Host) {
			s.refuse(c, http.StatusForbidden, "", "not loopback")
			return fail(http.StatusForbidden, "not_loopback", "without access tokens the API answers loopback host names only, not %q", req.Host)
		}
		return next(c)
	}
}

// IsLoopback reports whether a host, or HOST:PORT (a Host header, a
// listen address), names this machine's loopback only.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// core is the caller as the core's session rules see it.
func (c caller) core() pdp.Caller {
	return pdp.Caller{Name: c.name, Person: c.open || c.has(User), ReadsAll: c.open || c.has(User, Auditor)}
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
	limit, err := listLimit(c)
	if err != nil {
		return err
	}
	events, err := s.cfg.Store.AccessEvents(c.Request().Context(), limit)
	if err != nil {
		return storeUnavailable(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"access_events": events})
}
