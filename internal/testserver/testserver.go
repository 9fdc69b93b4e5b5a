// Package testserver starts the PDP's real server for a test: the built-in
// policy, a SQLite store in the test's temporary directory, the engine
// with the real shell parser and path resolver, the HTTP API behind an
// httptest server — all closed when the test ends.
package testserver

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
	"github.com/toolperm/pdp/store/sqlite"
)

// Server is a running PDP and the parts it was built from.
type Server struct {
	*httptest.Server
	// Handler is the HTTP API, for tests that call it without a socket.
	Handler http.Handler
	Engine  *pdp.Engine
	Policy  *pdp.Policy
	Store   *sqlite.Store
	// DBPath is the store's file, for a restart or a CLI command on it.
	DBPath string
	// Feed serves the event stream.
	Feed *feed.Hub
	// Service is what New built, as `pdp serve` builds it.
	Service *app.Service
	close   sync.Once
}

// Option changes how New builds the server.
type Option func(*settings)

type settings struct {
	dbPath    string
	sqlite    sqlite.Options
	configure []func(*httpapi.Config, *pdp.Components)
	config    []func(cfg *config.Config, url string)
}

// Config changes the configuration the server is built from; url is
// where it will serve (http://127.0.0.1:port), known before it is built.
func Config(f func(cfg *config.Config, url string)) Option {
	return func(s *settings) { s.config = append(s.config, f) }
}

// DB puts the store at path instead of a new file in the test's
// temporary directory (a restart passes the old server's DBPath).
func DB(path string) Option { return func(s *settings) { s.dbPath = path } }

// SQLite opens the store with opts.
func SQLite(opts sqlite.Options) Option { return func(s *settings) { s.sqlite = opts } }

// Tokens makes the API require these bearer tokens.
func Tokens(tokens ...httpapi.Token) Option {
	return Configure(func(c *httpapi.Config, _ *pdp.Components) { c.Tokens = tokens })
}

// Assessor judges the SMART level's shell commands.
func Assessor(a pdp.Assessor) Option {
	return Configure(func(_ *httpapi.Config, c *pdp.Components) { c.Assessor = a })
}

// Configure changes the API's configuration and the engine's components
// after the defaults are set and before either is built; options apply in
// order.
func Configure(f func(*httpapi.Config, *pdp.Components)) Option {
	return func(s *settings) { s.configure = append(s.configure, f) }
}

// Token is a bearer token whose secret is secret.
func Token(name, secret string, roles ...httpapi.Role) httpapi.Token {
	return httpapi.Token{Name: name, Hash: sha256.Sum256([]byte(secret)), Roles: roles}
}

// New starts a server over the built-in policy; it closes when t ends.
// It is built as `pdp serve` builds one (internal/app), from the
// default configuration, with the store and the policy given.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var set settings
	for _, o := range opts {
		o(&set)
	}
	if set.dbPath == "" {
		set.dbPath = filepath.Join(t.TempDir(), "pdp.db")
	}
	ctx := context.Background()
	policy, err := policysource.LoadFS(ctx, policies.FS, "builtin")
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, set.dbPath, set.sqlite)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.DB.Path = set.dbPath
	// Tests judge what is decided, not how fast: a generous evaluation
	// timeout keeps a loaded machine or the race detector from turning an
	// answer into the fail-closed deny (tests of the timeout set their own).
	cfg.Policy.EvalTimeout = 30 * time.Second
	srv := httptest.NewUnstartedServer(nil)
	for _, f := range set.config {
		f(&cfg, "http://"+srv.Listener.Addr().String())
	}
	svc, err := app.New(ctx, cfg, app.Options{
		Store: store, Policy: policy, Logger: slog.New(slog.DiscardHandler), Configure: set.configure,
	})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	s := &Server{Policy: policy, Store: store, DBPath: set.dbPath, Service: svc, Engine: svc.Engine, Feed: svc.Feed, Handler: svc.Handler}
	srv.Config.Handler = s.Handler
	srv.Start()
	s.Server = srv
	t.Cleanup(s.Close)
	return s
}

// Close ends the event streams, then stops the server and closes the
// store; it may be called more than once.
func (s *Server) Close() {
	s.close.Do(func() {
		s.Feed.Close() // ends the event streams, so the server can close
		s.Server.Close()
		s.Service.Close()
	})
}
