package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/oidctest"
	"github.com/toolperm/pdp/internal/testserver"
)

// TestLoginThenAnswer: pdp login signs alice in with the provider by the
// device grant (the test plays alice at the provider's device page),
// keeps the token 0600, and pdp asks and pdp answer use it: the answer
// names her. pdp logout forgets it.
func TestLoginThenAnswer(t *testing.T) {
	p, srv, env := loginSetup(t, oidctest.Client{ID: "toolperm", RedirectURIs: []string{"http://127.0.0.1/auth/callback"}})
	home := strings.TrimPrefix(env[0], "HOME=")
	signInAtTheTerminal(t, p, srv.URL, env)
	kept := filepath.Join(home, ".config", "toolperm", "tokens.json")
	if info, err := os.Stat(kept); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v %v", info, err)
	}

	d, err := client.New(srv.URL, client.WithToken("d-secret")).Decide(t.Context(), client.DecideRequest{SessionID: "login", Tool: "shell",
		Args: map[string]any{"command": "make deploy"}, Cwd: "/w"}, false)
	if err != nil || d.Decision != client.Ask {
		t.Fatalf("the ask: %+v %v", d, err)
	}
	if r := runPDPProcessWith(t, "", env, "asks"); r.status != 0 || !strings.Contains(r.stdout, d.DecisionID) {
		t.Fatalf("pdp asks with the kept token:\n%s", r)
	}
	if r := runPDPProcessWith(t, "", env, "answer", d.DecisionID, "allow_once"); r.status != 0 || !strings.Contains(r.stdout, "answered by alice@example.com") {
		t.Fatalf("pdp answer with the kept token:\n%s", r)
	}
	if r := runPDPProcessWith(t, "", env, "logout"); r.status != 0 || !strings.Contains(r.stdout, "signed out of "+srv.URL) {
		t.Fatalf("pdp logout:\n%s", r)
	}
	if r := runPDPProcessWith(t, "", env, "asks"); r.status == 0 || !strings.Contains(r.stderr, "pdp login") {
		t.Fatalf("pdp asks after logout:\n%s", r)
	}
}

// loginSetup is a provider that knows alice (a user by her group) and
// the client, a PDP that trusts it with a dispatcher token d-secret,
// and the variables of a person's shell with a home of its own.
func loginSetup(t *testing.T, c oidctest.Client, scopes ...string) (*oidctest.Provider, *httptest.Server, []string) {
	t.Helper()
	p := oidctest.New(t, oidctest.User{Name: "alice", Email: "alice@example.com", Groups: []string{"approvers"}})
	p.AddClient(c)
	srv := testserver.New(t, testserver.Tokens(testserver.Token("runtime", "d-secret", httpapi.Dispatcher)),
		testserver.Config(func(cfg *config.Config, base string) {
			o := &cfg.Auth.OIDC
			o.Issuer, o.ClientID, o.RedirectURL = p.Issuer, c.ID, base+"/auth/callback"
			o.Roles = map[string][]string{"approvers": {"user"}}
			if len(scopes) > 0 {
				o.Scopes = scopes
			}
		}))
	home := t.TempDir()
	return p, srv.Server, []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PDP_URL=" + srv.URL, "PDP_TOKEN="}
}

// signInAtTheTerminal runs pdp login with env and plays alice at the provider's
// device page with the code it prints.
func signInAtTheTerminal(t *testing.T, p *oidctest.Provider, pdpURL string, env []string) {
	t.Helper()
	cmd := pdpProcess([]string{"login"}, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	prompt := regexp.MustCompile(`open (\S+) in a browser and enter the code (\S+)`)
	var code string
	for code == "" && lines.Scan() {
		if m := prompt.FindStringSubmatch(lines.Text()); m != nil {
			if !strings.HasPrefix(m[1], p.Issuer+"/device") {
				t.Fatalf("verification URL %s", m[1])
			}
			code = m[2]
		}
	}
	if code == "" {
		t.Fatalf("pdp login printed no code: %s", errOut.String())
	}
	approveDevice(t, p, code, "alice")
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(rest.String(), "Signed in to "+pdpURL+" as alice@example.com") {
		t.Fatalf("pdp login: %v\n%s\n%s", err, rest.String(), errOut.String())
	}
}

// TestAnExpiringSignInIsRenewed: an ID token about to expire is renewed
// with the refresh token pdp login kept (the provider gives one for
// offline_access), and the renewed one is kept.
func TestAnExpiringSignInIsRenewed(t *testing.T) {
	// Tokens that last 30 s: good when pdp login checks the first, and
	// already within the 30 s before its expiry in which pdp renews a
	// token when pdp asks uses it.
	p, srv, env := loginSetup(t, oidctest.Client{ID: "toolperm", RedirectURIs: []string{"http://127.0.0.1/auth/callback"}, IDTokenLifetime: 30 * time.Second},
		"openid", "email", "profile", "offline_access")
	signInAtTheTerminal(t, p, srv.URL, env)
	home := strings.TrimPrefix(env[0], "HOME=")
	first := keptIDToken(t, home, srv.URL)
	if r := runPDPProcessWith(t, "", env, "asks"); r.status != 0 {
		t.Fatalf("pdp asks with a renewed token:\n%s", r)
	}
	if renewed := keptIDToken(t, home, srv.URL); renewed == first || renewed == "" {
		t.Fatal("the ID token was not renewed and kept")
	}
}

func keptIDToken(t *testing.T, home, pdpURL string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(home, ".config", "toolperm", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]struct {
		IDToken string `json:"id_token"`
	}
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	return all[pdpURL].IDToken
}

// TestLoginWithoutSignIn says that the PDP has none.
func TestLoginWithoutSignIn(t *testing.T) {
	srv, _ := pdpTestServer(t)
	home := t.TempDir()
	r := runPDPProcessWith(t, "", []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home}, "login", "--url", srv.URL)
	if r.status == 0 || !strings.Contains(r.stderr, "has no sign-in configured (auth.oidc)") {
		t.Fatalf("pdp login against a PDP without sign-in:\n%s", r)
	}
}

// TestLoginWithoutADeviceEndpoint: a provider whose discovery document
// names no device_authorization_endpoint is said to have none.
func TestLoginWithoutADeviceEndpoint(t *testing.T) {
	doc := httptest.NewUnstartedServer(nil)
	issuer := "http://" + doc.Listener.Addr().String()
	doc.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"id_token_signing_alg_values_supported":["RS256"]}`,
			issuer, issuer+"/auth", issuer+"/token", issuer+"/keys")
	})
	doc.Start()
	defer doc.Close()
	home := t.TempDir()
	r := runPDPProcessWith(t, "", []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home}, "login", "--issuer", issuer, "--client-id", "toolperm")
	if r.status == 0 || !strings.Contains(r.stderr, "advertises no device_authorization_endpoint: pdp login needs the device authorization grant (RFC 8628)") {
		t.Fatalf("pdp login against a provider without a device endpoint:\n%s", r)
	}
}

// approveDevice is the person at the provider's device page: the code,
// the login, the consent.
func approveDevice(t *testing.T, p *oidctest.Provider, code, user string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.PostForm(p.Issuer+"/device/login", url.Values{"user_code": {code}, "username": {user}, "password": {oidctest.Password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = hc.PostForm(p.Issuer+"/device/confirm", url.Values{"action": {"allowed"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the device confirmation: %d", resp.StatusCode)
	}
}

// TestLoginSendsTheSignInOnlyOverTLS: pdp login keeps a bearer token for
// the PDP it names, so it refuses one it would reach in the clear.
func TestLoginSendsTheSignInOnlyOverTLS(t *testing.T) {
	r := runPDPProcess(t, "", "login", "--url", "http://pdp.example.com:8181")
	if r.status == 0 || !strings.Contains(r.stderr, "plain http") || !strings.Contains(r.stderr, "sends your sign-in") {
		t.Fatalf("pdp login to a plain-http PDP off loopback:\n%s", r)
	}
	r = runPDPProcess(t, "", "login", "--url", "https://pdp.example.com", "--issuer", "http://login.example.com", "--client-id", "toolperm")
	if r.status == 0 || !strings.Contains(r.stderr, "plain http") {
		t.Fatalf("pdp login with a plain-http provider off loopback:\n%s", r)
	}
}

// TestServeWithSignIn: `pdp serve` from a configuration file with
// auth.oidc (discovery at start), alice signs in at the terminal by the
// device grant, answers the ask a dispatcher's token made, and the trail
// names her; the dispatcher's token still decides, and hers does not.
func TestServeWithSignIn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := oidctest.New(t, oidctest.User{Name: "alice", Email: "alice@example.com", Groups: []string{"approvers"}})
	p.AddClient(oidctest.Client{ID: "toolperm", RedirectURIs: []string{"http://127.0.0.1/auth/callback"}})
	dir := t.TempDir()
	cfg := writeConfig(t, dir, tokensConfig("")+"  oidc:\n    issuer: "+p.Issuer+"\n    client_id: toolperm\n"+
		"    redirect_url: http://127.0.0.1/auth/callback\n    roles:\n      approvers: [user]\n")
	base, _ := testserver.Process(t, serveProcess(filepath.Join(dir, "pdp.db"), cfg, tokenEnv...), 60*time.Second)

	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PDP_URL=" + base, "PDP_TOKEN="}
	signInAtTheTerminal(t, p, base, env)

	d, err := client.New(base, client.WithToken("d-secret")).Decide(t.Context(), client.DecideRequest{SessionID: "serve-signin", Tool: "shell",
		Args: map[string]any{"command": "make deploy"}, Cwd: "/w"}, false)
	if err != nil || d.Decision != client.Ask {
		t.Fatalf("the dispatcher's ask: %+v %v", d, err)
	}
	if r := runPDPProcessWith(t, "", env, "answer", d.DecisionID, "deny"); r.status != 0 || !strings.Contains(r.stdout, "answered by alice@example.com") {
		t.Fatalf("pdp answer as alice:\n%s", r)
	}
	alice := client.New(base, client.WithToken(keptIDToken(t, home, base)))
	ev, err := alice.Decision(t.Context(), d.DecisionID, 0)
	if err != nil || ev.Answer == nil || ev.Answer.AnsweredBy != "alice@example.com" || ev.Answer.AnsweredBySubject != "alice" {
		t.Fatalf("the trail: %+v %v", ev, err)
	}
	if _, err := alice.Decide(t.Context(), client.DecideRequest{SessionID: "serve-signin", Tool: "shell", Args: map[string]any{"command": "ls"}, Cwd: "/w"}, false); err == nil {
		t.Fatal("a person's token decided")
	}
}
