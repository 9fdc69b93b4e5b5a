package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/toolperm/pdp/adapters/oidc"
)

// provider is the least of an OpenID provider that verification needs:
// discovery and a key set whose fetch can be made to stall.
type provider struct {
	srv    *httptest.Server
	issuer string
	mu     sync.Mutex
	keys   []jose.JSONWebKey
	stall  atomic.Bool
	done   chan struct{}
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{done: make(chan struct{})}
	p.srv = httptest.NewUnstartedServer(nil)
	p.issuer = "http://" + p.srv.Listener.Addr().String()
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"id_token_signing_alg_values_supported":["RS256"]}`,
				p.issuer, p.issuer+"/auth", p.issuer+"/token", p.issuer+"/keys")
		case "/keys":
			if p.stall.Load() {
				<-p.done
				return
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: p.keys})
		}
	})
	p.srv.Start()
	t.Cleanup(func() { close(p.done); p.srv.Close() })
	return p
}

func (p *provider) key(t *testing.T, kid string) func(claims map[string]any) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.keys = append(p.keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
	p.mu.Unlock()
	return func(claims map[string]any) string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(claims)
		o, err := s.Sign(b)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := o.CompactSerialize()
		return raw
	}
}

func (p *provider) claims(sub string, aud any) map[string]any {
	return map[string]any{"iss": p.issuer, "sub": sub, "aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(), "groups": []string{"approvers"}}
}

func TestVerification(t *testing.T) {
	p := newProvider(t)
	sign := p.key(t, "k1")
	pr, err := oidc.Discover(context.Background(), oidc.Settings{Issuer: p.issuer, ClientID: "toolperm", Audience: "pdp-api"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		claims map[string]any
		want   string // "" for accepted, else a part of the error
	}{
		{"an ID token of the client", p.claims("alice", "toolperm"), ""},
		{"an access token for the audience", p.claims("alice", "pdp-api"), ""},
		{"another audience", p.claims("alice", "other"), "audience"},
		{"no subject", p.claims("", "toolperm"), "no subject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			person, err := pr.Verify(context.Background(), sign(c.claims))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "" && (person.Subject != "alice" || len(person.Claimed) != 1):
				t.Fatalf("person %+v", person)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %+v, %v; want an error saying %q", person, err, c.want)
			}
		})
	}
	t.Run("an e-mail names the person only when verified", func(t *testing.T) {
		for verified, want := range map[any]string{true: "alice@example.com", false: "", "true": ""} {
			claims := p.claims("alice", "toolperm")
			claims["email"], claims["email_verified"] = "alice@example.com", verified
			person, err := pr.Verify(context.Background(), sign(claims))
			if err != nil || person.Email != want {
				t.Fatalf("email_verified %v: %+v %v, want e-mail %q", verified, person, err, want)
			}
		}
	})
}

// TestAStalledKeyFetchEnds: a key fetch that hangs ends with the
// client's timeout, so the next rotation is fetched when the provider
// answers again (go-oidc waits on one fetch at a time).
func TestAStalledKeyFetchEnds(t *testing.T) {
	p := newProvider(t)
	first := p.key(t, "k1")
	pr, err := oidc.Discover(context.Background(), oidc.Settings{Issuer: p.issuer, ClientID: "toolperm", HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Verify(context.Background(), first(p.claims("alice", "toolperm"))); err != nil {
		t.Fatal(err)
	}
	second := p.key(t, "k2")
	p.stall.Store(true)
	if _, err := pr.Verify(context.Background(), second(p.claims("alice", "toolperm"))); err == nil {
		t.Fatal("a token verified while the key set could not be fetched")
	}
	p.stall.Store(false)
	// go-oidc ends a fetch for its waiters a moment before it takes the
	// next one: a token then may still read the ended fetch's error. The
	// deadline bounds a failure only.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := pr.Verify(context.Background(), second(p.claims("alice", "toolperm")))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the provider answers again: %v", err)
		}
	}
}
