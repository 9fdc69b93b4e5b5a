// Package oidctest runs a real OpenID Connect provider in a test's
// process: zitadel/oidc's OpenID Provider (its op package, with the
// in-memory storage and login pages of its example server) on an
// httptest server. It serves discovery, JWKS, the authorization code
// flow with PKCE, the device authorization grant, refresh tokens (with
// offline_access) and RP-initiated logout; a test adds the users (with
// their groups claim) and the clients it needs, rotates the signing
// key, and signs a user in without a browser (SignIn).
package oidctest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	zstorage "github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2"
)

// Password is every test user's password.
const Password = "verysecure"

// User is a person the provider knows: Name is both the login name
// and the subject.
type User struct {
	Name, Email string
	Groups      []string
	// EmailUnverified: the provider has not verified the e-mail.
	EmailUnverified bool
}

// Client is an application registered with the provider: a public
// client (PKCE, no secret) that may also use the device grant.
type Client struct {
	ID           string
	RedirectURIs []string
	// PostLogoutRedirectURIs are where RP-initiated logout may return.
	PostLogoutRedirectURIs []string
	// IDTokenLifetime is how long its ID tokens last (default 1h); a
	// negative one issues tokens already expired.
	IDTokenLifetime time.Duration
	// JWTAccessTokens issues access tokens as JWTs (aud: the client,
	// with the groups claim) instead of opaque ones.
	JWTAccessTokens bool
}

// Provider is the running provider.
type Provider struct {
	*httptest.Server
	// Issuer is the provider's issuer URL (http://127.0.0.1:port).
	Issuer  string
	storage *storage
}

// New starts a provider that knows users; it stops when t ends.
func New(t testing.TB, users ...User) *Provider {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	us := userStore{users: map[string]*zstorage.User{}}
	st := &storage{clients: map[string]*zstorage.Client{}, settings: map[string]Client{}, groups: map[string][]string{}, refreshClients: map[string]string{}}
	for _, u := range users {
		us.users[u.Name] = &zstorage.User{ID: u.Name, Username: u.Name, Password: Password, Email: u.Email, EmailVerified: !u.EmailUnverified, FirstName: u.Name}
		st.groups[u.Name] = u.Groups
	}
	st.Storage = zstorage.NewStorageWithClients(us, st.clients)
	st.key = newKey(t)
	srv.Config.Handler = exampleop.SetupServer(issuer, st, nil, false)
	srv.Start()
	t.Cleanup(srv.Close)
	return &Provider{Server: srv, Issuer: issuer, storage: st}
}

// AddClient registers a client.
func (p *Provider) AddClient(c Client) {
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	if c.IDTokenLifetime == 0 {
		c.IDTokenLifetime = time.Hour
	}
	p.storage.settings[c.ID] = c
	p.storage.clients[c.ID] = zstorage.NativeClient(c.ID, c.RedirectURIs...)
}

// Rotate makes a new key the signing key and takes the old one out of
// the JWKS: tokens signed before no longer verify.
func (p *Provider) Rotate(t testing.TB) {
	key := newKey(t)
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	p.storage.key = key
}

// SignIn signs user in at client as a browser would, without one: the
// authorization request with PKCE, the provider's login form, the
// redirect to redirectURI (not followed) and the code's exchange. It
// returns the ID token and the access token.
func (p *Provider) SignIn(t testing.TB, clientID, redirectURI, user string) (idToken, accessToken string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	var landed *url.URL
	hc := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURI) {
			landed = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	conf := oauth2.Config{ClientID: clientID, RedirectURL: redirectURI, Scopes: []string{"openid", "email", "profile"},
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer + "/auth", TokenURL: p.Issuer + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	resp, err := hc.Get(conf.AuthCodeURL("state", oauth2.SetAuthURLParam("nonce", "nonce"), oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		t.Fatalf("authorization request: %v", err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("the authorization request did not reach the login page: %s", resp.Request.URL)
	}
	resp, err = hc.PostForm(p.Issuer+"/login/username", url.Values{"id": {id}, "username": {user}, "password": {Password}})
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	resp.Body.Close()
	if landed == nil {
		t.Fatalf("the login of %s did not return to %s (status %d at %s)", user, redirectURI, resp.StatusCode, resp.Request.URL)
	}
	tok, err := conf.Exchange(context.Background(), landed.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchanging the code: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	return raw, tok.AccessToken
}

// storage is the example's in-memory storage with the groups claim,
// clients the test registers, and a signing key that rotates.
type storage struct {
	*zstorage.Storage
	mu       sync.Mutex
	clients  map[string]*zstorage.Client
	settings map[string]Client
	groups   map[string][]string
	key      *signingKey
	// refreshClients are the clients of the refresh tokens the example
	// storage binds to none (it knows the client of a code flow's
	// request only, not a device grant's).
	refreshClients map[string]string
}

// CreateAccessAndRefreshTokens remembers the client of each refresh token.
func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	id, refresh, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, current)
	if c, ok := req.(interface{ GetClientID() string }); ok && err == nil && refresh != "" {
		s.mu.Lock()
		s.refreshClients[refresh] = c.GetClientID()
		s.mu.Unlock()
	}
	return id, refresh, exp, err
}

// TokenRequestByRefreshToken names the refresh token's client.
func (s *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	r, err := s.Storage.TokenRequestByRefreshToken(ctx, token)
	if err != nil || r.GetClientID() != "" {
		return r, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return refreshOf{r, s.refreshClients[token]}, nil
}

// refreshOf is a refresh token's request with its client.
type refreshOf struct {
	op.RefreshTokenRequest
	clientID string
}

func (r refreshOf) GetClientID() string { return r.clientID }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet is the current key only: a rotation removes the old one.
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []op.Key{publicKey{s.key}}, nil
}

func (s *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return client{Client: c, settings: s.settings[id]}, nil
}

// SetUserinfoFromRequest adds the groups claim to the ID token.
func (s *storage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, token, scopes); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.groups[token.GetSubject()]; len(g) > 0 {
		info.AppendClaims("groups", g)
	}
	return nil
}

// GetPrivateClaimsFromScopes adds the groups claim to JWT access tokens.
func (s *storage) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.groups[userID]; len(g) > 0 {
		if claims == nil {
			claims = map[string]any{}
		}
		claims["groups"] = g
	}
	return claims, nil
}

// client is a registered client with the test's settings: the e-mail in
// its ID tokens, its lifetime, the device grant, the logout returns.
type client struct {
	op.Client
	settings Client
}

func (c client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c client) IDTokenLifetime() time.Duration       { return c.settings.IDTokenLifetime }
func (c client) PostLogoutRedirectURIs() []string     { return c.settings.PostLogoutRedirectURIs }
func (c client) AccessTokenType() op.AccessTokenType {
	if c.settings.JWTAccessTokens {
		return op.AccessTokenTypeJWT
	}
	return c.Client.AccessTokenType()
}
func (c client) GrantTypes() []oidc.GrantType {
	return append(c.Client.GrantTypes(), oidc.GrantTypeDeviceCode)
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func newKey(t testing.TB) *signingKey {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &signingKey{id: fmt.Sprintf("key-%d", time.Now().UnixNano()), key: key}
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.key.PublicKey }

type userStore struct{ users map[string]*zstorage.User }

func (u userStore) GetUserByID(id string) *zstorage.User         { return u.users[id] }
func (u userStore) GetUserByUsername(name string) *zstorage.User { return u.users[name] }
func (u userStore) ExampleClientID() string                      { return "service" }
