package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
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

// caller is who sent a request: a token, or a person signed in with the
// provider (subject set), by the session cookie or a bearer JWT.
type caller struct {
	name    string
	subject string
	roles   []Role
	open    bool   // no tokens and no sign-in are configured: every role
	cookie  bool   // authenticated by the session cookie
	refused string // why a presented credential was refused (401)
}

// answerer is who the caller's answer names.
func (c caller) answerer() api.Answerer { return api.Answerer{Name: c.name, Subject: c.subject} }

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

// open says whether there is no access control: no tokens and no
// sign-in configured (the server then listens on loopback only).
func (s *Server) open() bool { return len(s.cfg.Tokens) == 0 && s.cfg.SignIn == nil }

// authenticate finds the caller of every request: a configured token
// (compared first, in constant time), else a JWT from the provider, else
// the session cookie. With no access control every caller has every
// role.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.open() {
			c.Set(callerKey, caller{name: "anonymous", open: true})
			return next(c)
		}
		header := c.Request().Header.Get("Authorization")
		presented, ok := strings.CutPrefix(header, "Bearer ")
		switch {
		case ok && presented != "":
			c.Set(callerKey, s.bearer(c, presented))
		default:
			who := s.fromCookie(c)
			if who.cookie && unsafeMethod(c.Request().Method) && !sameOriginRequest(c.Request()) {
				s.refuse(c, http.StatusForbidden, who.name, "cross origin")
				return fail(http.StatusForbidden, "cross_origin", "a request signed in by cookie that changes something must come from this origin (Origin or Sec-Fetch-Site: same-origin)")
			}
			c.Set(callerKey, who)
		}
		return next(c)
	}
}

// bearer is the caller a bearer token names: a configured token, or a
// person's token from the provider.
func (s *Server) bearer(c echo.Context, presented string) caller {
	if t := s.match(presented); t != nil {
		return caller{name: t.Name, roles: t.Roles}
	}
	si := s.cfg.SignIn
	if si == nil || strings.Count(presented, ".") != 2 {
		return caller{}
	}
	if len(presented) > maxJWTBytes {
		return caller{refused: fmt.Sprintf("token refused: longer than %d bytes", maxJWTBytes)}
	}
	p, err := si.Provider.Verify(c.Request().Context(), presented)
	if err != nil {
		// The reason is recorded: it may quote the token (its issuer),
		// so it is cut.
		reason, _ := truncateString(err.Error(), 200)
		return caller{refused: reason}
	}
	return personCaller(p.Subject, p.Email, si.rolesOf(p))
}

// maxJWTBytes bounds a bearer JWT the provider is asked about; ID tokens
// are a few KiB.
const maxJWTBytes = 16 << 10

// fromCookie is the person of a good session cookie, or no one.
func (s *Server) fromCookie(c echo.Context) caller {
	si := s.cfg.SignIn
	if si == nil {
		return caller{}
	}
	ck, err := c.Cookie(sessionCookie)
	if err != nil {
		return caller{}
	}
	var sess personSession
	if err := unseal(si.Key, sessionCookie, ck.Value, &sess, func() time.Time { return sess.Expires }, si.now()); err != nil {
		return caller{refused: "session cookie: " + err.Error()}
	}
	who := personCaller(sess.Subject, sess.Email, sess.Roles)
	who.cookie = true
	return who
}

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// sameOriginRequest says whether a browser says the request comes from
// this origin: an Origin naming this host (sameOrigin has refused any
// other), or Sec-Fetch-Site: same-origin. A cookie alone never says so.
func sameOriginRequest(req *http.Request) bool {
	if origin := req.Header.Get("Origin"); origin != "" && origin != "null" {
		return true
	}
	return req.Header.Get("Sec-Fetch-Site") == "same-origin"
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
			case who.name == "" && who.refused != "":
				s.refuse(c, http.StatusUnauthorized, "", who.refused)
				return fail(http.StatusUnauthorized, "unauthenticated", "%s", who.refused)
			case who.name == "":
				s.refuse(c, http.StatusUnauthorized, "", "missing or unknown bearer token")
				return fail(http.StatusUnauthorized, "unauthenticated", "a valid bearer token is required")
			case who.subject != "" && len(who.roles) == 0:
				s.refuse(c, http.StatusForbidden, who.name, "no role")
				return fail(http.StatusForbidden, "no_role", "%s is signed in but holds no role: no value of the roles claim is mapped in auth.oidc.roles", who.name)
			case who.subject != "":
				s.refuse(c, http.StatusForbidden, who.name, "role")
				return fail(http.StatusForbidden, "forbidden", "%s may not %s %s (needs one of %v, has %v)", who.name, c.Request().Method, c.Path(), roles, who.roles)
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
