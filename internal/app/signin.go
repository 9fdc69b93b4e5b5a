package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/toolperm/pdp/adapters/oidc"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
)

// personRoles are the roles a person may be given; dispatcher is a
// runtime's, never a person's.
var personRoles = []httpapi.Role{httpapi.User, httpapi.Auditor, httpapi.Admin}

// minCookieKey is the shortest cookie key taken (bytes).
const minCookieKey = 32

// checkOIDC adds the problems of auth.oidc (Check).
func checkOIDC(cfg config.Config, getenv func(string) string, add func(key, format string, args ...any)) {
	c := cfg.Auth.OIDC
	if c.Issuer == "" {
		if c.ClientID != "" || len(c.Roles) > 0 {
			add("auth.oidc.issuer", "empty, but auth.oidc is set otherwise: give the provider's issuer URL, or remove auth.oidc")
		}
		return
	}
	if msg := oidc.IssuerProblem(c.Issuer); msg != "" {
		add("auth.oidc.issuer", "%q: %s", c.Issuer, msg)
	}
	if c.ClientID == "" {
		add("auth.oidc.client_id", "empty: give the client id registered with the provider")
	}
	if c.ClientSecretEnv != "" && getenv(c.ClientSecretEnv) == "" {
		add("auth.oidc.client_secret_env", "environment variable %s is empty", c.ClientSecretEnv)
	}
	if c.RedirectURL != "" {
		if u, err := url.Parse(c.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("auth.oidc.redirect_url", "%q: want an absolute http(s) URL ending in /auth/callback", c.RedirectURL)
		}
	}
	if len(c.Roles) == 0 {
		add("auth.oidc.roles", "empty: nobody could sign in; map values of the %s claim to user, auditor or admin", orDefault(c.RolesClaim, "groups"))
	}
	for _, value := range slices.Sorted(maps.Keys(c.Roles)) {
		for _, r := range c.Roles[value] {
			if !slices.Contains(personRoles, httpapi.Role(r)) {
				add("auth.oidc.roles", "%s: unknown role %q (a person may be user, auditor or admin; dispatcher is a runtime's token)", value, r)
			}
		}
	}
	if c.Cookie.Lifetime <= 0 {
		add("auth.oidc.cookie.lifetime", "%s: want a positive duration", c.Cookie.Lifetime)
	}
	if c.Cookie.KeyEnv != "" && len(getenv(c.Cookie.KeyEnv)) < minCookieKey {
		add("auth.oidc.cookie.key_env", "environment variable %s holds fewer than %d bytes", c.Cookie.KeyEnv, minCookieKey)
	}
	if c.DiscoveryTimeout <= 0 {
		add("auth.oidc.discovery_timeout", "%s: want a positive duration", c.DiscoveryTimeout)
	}
}

// NewSignIn discovers the provider auth.oidc names and returns the API's
// sign-in; nil without an issuer. A provider that cannot be reached
// within auth.oidc.discovery_timeout is an error: serve refuses to start
// rather than serve people it cannot verify.
func NewSignIn(ctx context.Context, cfg config.Config, getenv func(string) string) (*httpapi.SignIn, error) {
	c := cfg.Auth.OIDC
	if c.Issuer == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.DiscoveryTimeout)
	defer cancel()
	p, err := oidc.Discover(ctx, oidc.Settings{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: secretOf(c.ClientSecretEnv, getenv),
		RedirectURL: RedirectURL(cfg), Scopes: c.Scopes, Audience: c.Audience, RolesClaim: c.RolesClaim})
	if err != nil {
		return nil, fmt.Errorf("auth.oidc: %w (serve starts only once the provider answers)", err)
	}
	key := []byte(secretOf(c.Cookie.KeyEnv, getenv))
	if len(key) == 0 {
		key = make([]byte, minCookieKey)
		_, _ = rand.Read(key) // never fails on supported platforms
	}
	roles := map[string][]httpapi.Role{}
	for value, rs := range c.Roles {
		for _, r := range rs {
			roles[value] = append(roles[value], httpapi.Role(r))
		}
	}
	return &httpapi.SignIn{Provider: provider{p}, Issuer: c.Issuer, ClientID: c.ClientID, Scopes: c.Scopes,
		Roles: roles, Lifetime: c.Cookie.Lifetime, Key: key}, nil
}

// RedirectURL is where the provider sends a browser back: auth.oidc's
// redirect_url, else the console's address (notify.console_url, else
// server.addr) and /auth/callback.
func RedirectURL(cfg config.Config) string {
	if cfg.Auth.OIDC.RedirectURL != "" {
		return cfg.Auth.OIDC.RedirectURL
	}
	if base := strings.TrimSuffix(cfg.Notify.ConsoleURL, "/"); base != "" {
		return base + "/auth/callback"
	}
	scheme := "http"
	if cfg.Server.TLSCertFile != "" {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(cfg.Server.Addr)
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/auth/callback"
}

func secretOf(env string, getenv func(string) string) string {
	if env == "" {
		return ""
	}
	return getenv(env)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// provider is the adapter as the API's OpenID.
type provider struct{ p *oidc.Provider }

func (p provider) AuthCodeURL(state, nonce, verifier string) string {
	return p.p.AuthCodeURL(state, nonce, verifier)
}

func (p provider) Exchange(ctx context.Context, code, verifier, nonce string) (httpapi.Person, error) {
	person, err := p.p.Exchange(ctx, code, verifier, nonce)
	return httpapi.Person{Subject: person.Subject, Email: person.Email, Claimed: person.Claimed}, err
}

func (p provider) Verify(ctx context.Context, raw string) (httpapi.Person, error) {
	person, err := p.p.Verify(ctx, raw)
	return httpapi.Person{Subject: person.Subject, Email: person.Email, Claimed: person.Claimed}, err
}

func (p provider) LogoutURL(returnTo string) string { return p.p.LogoutURL(returnTo) }

func (p provider) Random() string { return oidc.Random() }
