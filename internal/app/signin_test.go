package app_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/oidctest"
)

// Serve refuses to start when the provider cannot be asked for its
// discovery document, and says so.
func TestServeRefusesAnUnreachableIssuer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	cfg := testConfig(t)
	cfg.Auth.OIDC.Issuer, cfg.Auth.OIDC.ClientID = closed, "toolperm"
	cfg.Auth.OIDC.Roles = map[string][]string{"staff": {"user"}}
	s, err := app.New(context.Background(), cfg, quiet)
	if err == nil {
		s.Close()
		t.Fatal("serve started without its OpenID provider")
	}
	if msg := err.Error(); !strings.Contains(msg, "auth.oidc: OpenID provider "+closed+": discovery") || !strings.Contains(msg, "serve starts only once the provider answers") {
		t.Fatalf("the error does not say what is wrong: %v", err)
	}
}

func TestServeStartsWithAProvider(t *testing.T) {
	p := oidctest.New(t)
	cfg := testConfig(t)
	cfg.Auth.OIDC.Issuer, cfg.Auth.OIDC.ClientID = p.Issuer, "toolperm"
	cfg.Auth.OIDC.Roles = map[string][]string{"staff": {"user"}}
	s, err := app.New(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestTheRedirectURL(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*config.Config)
		want string
	}{
		{"configured", func(c *config.Config) { c.Auth.OIDC.RedirectURL = "https://pdp.example.com/auth/callback" }, "https://pdp.example.com/auth/callback"},
		{"the console's address", func(c *config.Config) { c.Notify.ConsoleURL = "https://pdp.example.com/" }, "https://pdp.example.com/auth/callback"},
		{"the listen address", func(c *config.Config) { c.Server.Addr = "0.0.0.0:8181" }, "http://localhost:8181/auth/callback"},
		{"with TLS", func(c *config.Config) { c.Server.Addr, c.Server.TLSCertFile = "pdp.example.com:443", "c.pem" }, "https://pdp.example.com:443/auth/callback"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			c.set(&cfg)
			if got := app.RedirectURL(cfg); got != c.want {
				t.Fatalf("%s, want %s", got, c.want)
			}
		})
	}
}
