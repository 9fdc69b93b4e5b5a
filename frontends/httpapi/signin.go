package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// People sign in with the organisation's OpenID Connect provider
// (docs/design.md §7, "Signing in"): /auth/login starts the
// authorization code flow with PKCE, state and nonce; /auth/callback
// checks them, verifies the ID token (adapters/oidc), maps the roles
// claim to roles and sets the session cookie; /auth/logout clears it and
// sends the browser to the provider's end_session_endpoint when it has
// one. A token from the provider is also taken as a bearer token
// (authenticate).

// OpenID is the provider as sign-in uses it (adapters/oidc.Provider,
// wired by internal/app).
type OpenID interface {
	// AuthCodeURL is the authorization request of one sign-in.
	AuthCodeURL(state, nonce, verifier string) string
	// Exchange trades the callback's code for a verified ID token whose
	// nonce is nonce.
	Exchange(ctx context.Context, code, verifier, nonce string) (Person, error)
	// Verify checks a presented token: signature, issuer, audience, expiry.
	Verify(ctx context.Context, raw string) (Person, error)
	// LogoutURL is the provider's logout with the way back; "" when it
	// has none.
	LogoutURL(returnTo string) string
	// Random is a fresh unguessable value (state, nonce, verifier).
	Random() string
}

// Person is who a verified token names.
type Person struct {
	Subject, Email string
	// Claimed are the values of the configured roles claim.
	Claimed []string
}

// SignIn is how people sign in (Config.SignIn).
type SignIn struct {
	Provider OpenID
	// Issuer, ClientID and Scopes are the provider and the client, as
	// GET /auth/me tells pdp login (public: a public client's id is no
	// secret).
	Issuer, ClientID string
	Scopes           []string
	// Roles maps a value of the roles claim to roles (never dispatcher).
	Roles map[string][]Role
	// Lifetime is the session cookie's (default 8h).
	Lifetime time.Duration
	// Key signs the cookies (32 bytes or more).
	Key []byte
	// Now is the clock of the cookies' expiry (default time.Now).
	Now func() time.Time
}

// rolesOf maps the claimed values to roles, each once.
func (si *SignIn) rolesOf(p Person) []Role {
	var roles []Role
	for _, v := range p.Claimed {
		for _, r := range si.Roles[v] {
			if !slices.Contains(roles, r) && r != Dispatcher {
				roles = append(roles, r)
			}
		}
	}
	return roles
}

func (si *SignIn) now() time.Time {
	if si.Now != nil {
		return si.Now()
	}
	return time.Now()
}

// personCaller is the caller a person is.
func personCaller(subject, email string, roles []Role) caller {
	name := email
	if name == "" {
		name = subject
	}
	return caller{name: name, subject: subject, roles: roles}
}

const flowLifetime = 10 * time.Minute

// login starts a sign-in: ?next= is the local page to return to.
func (s *Server) login(c echo.Context) error {
	si := s.cfg.SignIn
	if si == nil {
		return fail(http.StatusNotFound, "not_found", "sign-in is not configured (auth.oidc)")
	}
	f := signInFlow{State: si.Provider.Random(), Nonce: si.Provider.Random(), Verifier: si.Provider.Random(),
		Next: localPath(c.QueryParam("next")), Expires: si.now().Add(flowLifetime)}
	v, err := seal(si.Key, flowCookie, f)
	if err != nil {
		return err
	}
	setCookie(c, flowCookie, v, "/auth/", f.Expires)
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Redirect(http.StatusFound, si.Provider.AuthCodeURL(f.State, f.Nonce, f.Verifier))
}

// callback ends a sign-in: the state must be this browser's, the code
// is exchanged with its PKCE verifier, the ID token verified with its
// nonce; a person with a role gets the session cookie.
func (s *Server) callback(c echo.Context) error {
	si := s.cfg.SignIn
	if si == nil {
		return fail(http.StatusNotFound, "not_found", "sign-in is not configured (auth.oidc)")
	}
	var f signInFlow
	ck, err := c.Cookie(flowCookie)
	if err == nil {
		err = unseal(si.Key, flowCookie, ck.Value, &f, func() time.Time { return f.Expires }, si.now())
	}
	clearCookie(c, flowCookie, "/auth/")
	if err != nil || f.State == "" || c.QueryParam("state") != f.State {
		s.refuse(c, http.StatusBadRequest, "", "sign-in state")
		return s.signInPage(c, http.StatusBadRequest, "Not signed in", "This sign-in was not started here, or took longer than 10 minutes. Sign in again.")
	}
	if e := c.QueryParam("error"); e != "" {
		s.refuse(c, http.StatusForbidden, "", "provider: "+e)
		return s.signInPage(c, http.StatusForbidden, "Not signed in", "The provider said: "+e+" "+c.QueryParam("error_description"))
	}
	p, err := si.Provider.Exchange(c.Request().Context(), c.QueryParam("code"), f.Verifier, f.Nonce)
	if err != nil {
		s.refuse(c, http.StatusUnauthorized, "", "sign-in: "+err.Error())
		return s.signInPage(c, http.StatusUnauthorized, "Not signed in", err.Error())
	}
	who := personCaller(p.Subject, p.Email, si.rolesOf(p))
	if len(who.roles) == 0 {
		s.refuse(c, http.StatusForbidden, who.name, "no role")
		return s.signInPage(c, http.StatusForbidden, "No role", noRole(who.name, p.Claimed))
	}
	sess := personSession{Subject: p.Subject, Email: p.Email, Roles: who.roles, Expires: si.now().Add(si.lifetime())}
	v, err := seal(si.Key, sessionCookie, sess)
	if err != nil {
		return err
	}
	setCookie(c, sessionCookie, v, "/", sess.Expires)
	c.Set(callerKey, who)
	next := f.Next
	if next == "" {
		next = "/ui/"
	}
	return c.Redirect(http.StatusFound, next)
}

func (si *SignIn) lifetime() time.Duration {
	if si.Lifetime > 0 {
		return si.Lifetime
	}
	return 8 * time.Hour
}

func noRole(name string, claimed []string) string {
	return fmt.Sprintf("%s signed in, but none of the values of the roles claim (%s) is mapped to a role in auth.oidc.roles: ask an administrator for one.",
		name, strings.Join(claimed, ", "))
}

// logout clears the session cookie and, when the provider has an
// end_session_endpoint, sends the browser there to end the provider's
// session too (RP-initiated logout).
func (s *Server) logout(c echo.Context) error {
	clearCookie(c, sessionCookie, "/")
	if si := s.cfg.SignIn; si != nil {
		back := "http://" + c.Request().Host + "/ui/"
		if c.IsTLS() || !IsLoopback(c.Request().Host) {
			back = "https://" + c.Request().Host + "/ui/"
		}
		if u := si.Provider.LogoutURL(back); u != "" {
			return c.Redirect(http.StatusSeeOther, u)
		}
	}
	return c.Redirect(http.StatusSeeOther, "/ui/")
}

// whoami says who the caller is (GET /auth/me), no one when the name is
// empty, and whether people can sign in: the console shows it.
func (s *Server) whoami(c echo.Context) error {
	who := callerOf(c)
	roles := who.roles
	if who.open {
		roles = []Role{Admin}
	}
	me := map[string]any{"name": who.name, "subject": who.subject, "roles": roles, "signed_in": who.subject != "", "sign_in": s.cfg.SignIn != nil}
	if si := s.cfg.SignIn; si != nil {
		me["provider"] = map[string]any{"issuer": si.Issuer, "client_id": si.ClientID, "scopes": si.Scopes}
	}
	return c.JSON(http.StatusOK, me)
}

// localPath is next when it is a path on this server, else "": at most
// 2 KiB, so the sign-in cookie that keeps it stays one a browser keeps.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || len(next) > 2048 || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) || u.Host != "" || u.Scheme != "" {
		return ""
	}
	return next
}

func (s *Server) signInPage(c echo.Context, status int, title, msg string) error {
	return s.ticketPage(c, status, pageData{Title: title, Message: msg, SignIn: "/auth/login"})
}
