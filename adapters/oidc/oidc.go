// Package oidc signs people in with the organisation's OpenID Connect
// provider (docs/operations.md, "Signing in with OpenID Connect"): the
// provider's discovery document read once at start, the authorization
// code flow with PKCE, state and nonce for the console, and the
// verification of every ID token or JWT access token a person presents
// (signature by the provider's JWKS, issuer, audience, expiry) with
// github.com/coreos/go-oidc. It knows nothing of roles: it hands back
// the person and the values of the claim the roles are mapped from.
package oidc

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Settings are what a provider is discovered and trusted with.
type Settings struct {
	// Issuer is the provider's issuer URL, exactly as its discovery
	// document and its tokens spell it.
	Issuer       string
	ClientID     string
	ClientSecret string // empty: a public client (PKCE alone)
	// RedirectURL is the PDP's /auth/callback as the browser reaches it.
	RedirectURL string
	Scopes      []string
	// Audience is the aud a presented JWT access token may carry instead
	// of ClientID (default ClientID); an ID token always names ClientID.
	Audience string
	// RolesClaim names the claim (a string or a list of strings) whose
	// values are mapped to roles (default "groups").
	RolesClaim string
	// HTTPClient talks to the provider (default: a client whose requests
	// end within 10 s, so a stalled key fetch cannot block every later
	// one).
	HTTPClient *http.Client
	// Now is the clock expiry is checked against (default time.Now).
	Now func() time.Time
}

// Provider is a discovered provider: its endpoints and the verifier of
// its tokens. Its key set is fetched on first use and again whenever a
// token names a key it does not hold (a rotation).
type Provider struct {
	s     Settings
	oauth oauth2.Config
	// verifiers check a token's aud: the client's own (ID tokens), then
	// the configured audience where it differs (access tokens).
	verifiers  []*gooidc.IDTokenVerifier
	endSession string
}

// Person is who a verified token names.
type Person struct {
	Subject string
	Email   string
	// Claimed are the values of the roles claim.
	Claimed []string
	// Expiry is when the token stops being good.
	Expiry time.Time
}

// Discover reads the issuer's discovery document. An issuer that cannot
// be reached, or whose document names another issuer, is an error.
func Discover(ctx context.Context, s Settings) (*Provider, error) {
	if s.HTTPClient == nil {
		s.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if s.Audience == "" {
		s.Audience = s.ClientID
	}
	if s.RolesClaim == "" {
		s.RolesClaim = "groups"
	}
	if len(s.Scopes) == 0 {
		s.Scopes = []string{gooidc.ScopeOpenID, "email", "profile"}
	}
	ctx = gooidc.ClientContext(ctx, s.HTTPClient)
	p, err := gooidc.NewProvider(ctx, s.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OpenID provider %s: discovery: %w", s.Issuer, err)
	}
	var doc struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&doc); err != nil {
		return nil, fmt.Errorf("OpenID provider %s: discovery: %w", s.Issuer, err)
	}
	// The key set outlives the start's context: it is fetched again on
	// a key the provider rotated in.
	keys := gooidc.ClientContext(context.Background(), s.HTTPClient)
	verifiers := []*gooidc.IDTokenVerifier{p.VerifierContext(keys, &gooidc.Config{ClientID: s.ClientID, Now: s.Now})}
	if s.Audience != s.ClientID {
		verifiers = append(verifiers, p.VerifierContext(keys, &gooidc.Config{ClientID: s.Audience, Now: s.Now}))
	}
	return &Provider{
		s: s,
		oauth: oauth2.Config{ClientID: s.ClientID, ClientSecret: s.ClientSecret, Endpoint: p.Endpoint(),
			RedirectURL: s.RedirectURL, Scopes: s.Scopes},
		verifiers:  verifiers,
		endSession: doc.EndSession,
	}, nil
}

// AuthCodeURL is where a browser signs in: the authorization request
// with state, nonce and the PKCE challenge of verifier (S256).
func (p *Provider) AuthCodeURL(state, nonce, verifier string) string {
	return p.oauth.AuthCodeURL(state, gooidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
}

// Exchange trades the callback's code (with the PKCE verifier) for the
// tokens and verifies the ID token, its nonce included.
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (Person, error) {
	ctx = gooidc.ClientContext(ctx, p.s.HTTPClient)
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return Person{}, fmt.Errorf("exchanging the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return Person{}, errors.New("the provider returned no ID token")
	}
	person, idt, err := p.verify(ctx, raw)
	if err != nil {
		return Person{}, err
	}
	if idt.Nonce == "" || idt.Nonce != nonce {
		return Person{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	return person, nil
}

// Verify checks a token a person presents (an ID token, or a JWT access
// token issued for the audience): signature, issuer, audience, expiry.
func (p *Provider) Verify(ctx context.Context, raw string) (Person, error) {
	person, _, err := p.verify(gooidc.ClientContext(ctx, p.s.HTTPClient), raw)
	return person, err
}

func (p *Provider) verify(ctx context.Context, raw string) (Person, *gooidc.IDToken, error) {
	var idt *gooidc.IDToken
	var err error
	for _, v := range p.verifiers {
		if idt, err = v.Verify(ctx, raw); err == nil {
			break
		}
	}
	if err != nil {
		return Person{}, nil, fmt.Errorf("token refused: %w", err)
	}
	if idt.Subject == "" {
		// A token that names no one (a client's own, from the client
		// credentials grant) is no person.
		return Person{}, nil, errors.New("token refused: it names no subject")
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return Person{}, nil, fmt.Errorf("token refused: %w", err)
	}
	person := Person{Subject: idt.Subject, Expiry: idt.Expiry}
	// The e-mail names the person only when the provider verified it:
	// an address a person typed into their profile could be anyone's.
	var verified bool
	if v, ok := claims["email_verified"]; ok && json.Unmarshal(v, &verified) == nil && verified {
		if e, ok := claims["email"]; ok {
			_ = json.Unmarshal(e, &person.Email) // not a string: no e-mail
		}
	}
	person.Claimed = values(claims[p.s.RolesClaim])
	return person, idt, nil
}

// values reads a claim that is a string or a list of strings; anything
// else holds no values.
func values(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	return nil
}

// LogoutURL is the provider's end_session_endpoint with the client's id
// and where to come back to (RP-initiated logout; the PDP keeps no ID
// token to hint with); "" when the provider advertises none, and then
// only the PDP's own cookie is cleared.
func (p *Provider) LogoutURL(returnTo string) string {
	if p.endSession == "" {
		return ""
	}
	u, err := url.Parse(p.endSession)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", p.s.ClientID)
	if returnTo != "" {
		q.Set("post_logout_redirect_uri", returnTo)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// OAuth2 is the client's OAuth 2.0 configuration (pdp login's device
// authorization grant reads its endpoints).
func (p *Provider) OAuth2() oauth2.Config { return p.oauth }

// HTTPClient is the client that talks to the provider.
func (p *Provider) HTTPClient() *http.Client { return p.s.HTTPClient }

// Random is a fresh 32-byte random value, base64url: a state, a nonce,
// a PKCE verifier.
func Random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// LooksLikeJWT says whether a bearer token has a JWT's three dotted parts.
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// IssuerProblem says what is wrong with an issuer URL, "" for nothing:
// an issuer is https, or http on a loopback host (a provider on the same
// machine, a test's). pdp login holds the PDP's URL to the same rule:
// both carry tokens.
func IssuerProblem(issuer string) string {
	u, err := url.Parse(issuer)
	switch {
	case err != nil || u.Host == "":
		return "want an absolute URL such as https://login.example.com/realms/main"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && loopback(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "plain http is taken only on loopback: tokens and codes would cross the network in the clear"
	}
	return "want an https URL"
}

// loopback: localhost or a loopback address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
