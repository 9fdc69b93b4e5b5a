package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

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

// core is the caller as the core's session rules see it.
func (c caller) core() pdp.Caller {
	return pdp.Caller{Name: c.name, Person: c.open || c.has(User), ReadsAll: c.open || c.has(User, Auditor)}
}
