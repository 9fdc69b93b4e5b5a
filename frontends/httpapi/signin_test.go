package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/oidctest"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
)

// The people of these tests, as the provider knows them.
var (
	alice = oidctest.User{Name: "alice", Email: "alice@example.com", Groups: []string{"staff", "pdp-approvers"}}
	bob   = oidctest.User{Name: "bob", Email: "bob@example.com", Groups: []string{"staff"}}
	carol = oidctest.User{Name: "carol", Email: "carol@example.com", Groups: []string{"security"}}
	// dave claims alice's address, which the provider has not verified.
	dave = oidctest.User{Name: "dave", Email: "alice@example.com", Groups: []string{"pdp-approvers"}, EmailUnverified: true}
)

// signInService is a PDP whose people sign in with a real OpenID
// provider started here (the client "toolperm"), with a dispatcher token.
type signInService struct {
	*service
	provider *oidctest.Provider
}

const dispatcherSecret = "runtime-secret"

func startSignIn(t *testing.T, opts ...testserver.Option) *signInService {
	t.Helper()
	p := oidctest.New(t, alice, bob, carol, dave)
	s := startService(t, append([]testserver.Option{testserver.Tokens(testserver.Token("runtime", dispatcherSecret, httpapi.Dispatcher)),
		testserver.Config(func(cfg *config.Config, base string) {
			p.AddClient(oidctest.Client{ID: "toolperm", RedirectURIs: []string{base + "/auth/callback"}, PostLogoutRedirectURIs: []string{base + "/ui/"}})
			o := &cfg.Auth.OIDC
			o.Issuer, o.ClientID, o.RedirectURL = p.Issuer, "toolperm", base+"/auth/callback"
			o.Roles = map[string][]string{"pdp-approvers": {"user"}, "security": {"auditor"}}
		})}, opts...)...)
	return &signInService{service: s, provider: p}
}

// cookieClient is an HTTP client with cookies, as a browser signs in.
type cookieClient struct {
	t      *testing.T
	client *http.Client
	base   string
}

func (s *signInService) cookies() *cookieClient {
	jar, _ := cookiejar.New(nil)
	return &cookieClient{t: s.t, client: &http.Client{Jar: jar}, base: s.srv.URL}
}

// signIn goes through /auth/login, the provider's login form and
// /auth/callback, and returns the last response's status and its URL
// and body.
func (b *cookieClient) signIn(user string) (int, string) {
	b.t.Helper()
	return b.signInTo(user, "/ui/#inbox")
}

// signInTo signs in with ?next=next.
func (b *cookieClient) signInTo(user, next string) (int, string) {
	b.t.Helper()
	resp, err := b.client.Get(b.base + "/auth/login?next=" + url.QueryEscape(next))
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		b.t.Fatalf("/auth/login did not lead to the provider's login page: %s", resp.Request.URL)
	}
	login := resp.Request.URL.Scheme + "://" + resp.Request.URL.Host + "/login/username"
	resp, err = b.client.PostForm(login, url.Values{"id": {id}, "username": {user}, "password": {oidctest.Password}})
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Request.URL.String() + "\n" + string(body)
}

// do sends a request with the browser's cookies and the headers given.
func (b *cookieClient) do(method, path string, body any, headers ...string) (int, map[string]any) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, b.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// ask makes an ask with the dispatcher token and returns its id.
func (s *signInService) ask(session string) string {
	s.t.Helper()
	s.token = dispatcherSecret
	defer func() { s.token = "" }()
	d := s.decide(shell(session, "make deploy"))
	expectDecision(s.t, d, "ask", "level")
	return d["decision_id"].(string)
}

// withBearer calls the API with a bearer token.
func (s *signInService) withBearer(token, method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	s.token = token
	defer func() { s.token = "" }()
	return s.call(method, path, body)
}

// signedIn is a sign-in service and user signed in to it with cookies.
func signedIn(t *testing.T, user string) (*signInService, *cookieClient) {
	t.Helper()
	s := startSignIn(t)
	b := s.cookies()
	if code, page := b.signIn(user); code != http.StatusOK {
		t.Fatalf("sign-in of %s: %d %s", user, code, page)
	}
	return s, b
}

func TestAPersonSignsInAndAnswers(t *testing.T) {
	s := startSignIn(t)
	b := s.cookies()
	if code, page := b.signIn("alice"); code != http.StatusOK || !strings.Contains(page, "/ui/") {
		t.Fatalf("sign-in ended with %d at %s", code, page)
	}
	code, me := b.do("GET", "/auth/me", nil)
	if code != http.StatusOK || me["name"] != "alice@example.com" || me["subject"] != "alice" || !slices.Equal(toStrings(me["roles"]), []string{"user"}) {
		t.Fatalf("/auth/me: %d %v", code, me)
	}
	id := s.ask("signin-1")
	code, rec := b.do("POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_once", "channel": "console"}, "Origin", s.srv.URL)
	if code != http.StatusOK {
		t.Fatalf("answer with the session cookie: %d %v", code, rec)
	}
	_, page := b.do("GET", "/v1/decisions?session_id=signin-1", nil)
	ans := page["decisions"].([]any)[0].(map[string]any)["answer"].(map[string]any)
	if ans["answered_by"] != "alice@example.com" || ans["answered_by_subject"] != "alice" || ans["channel"] != "console" {
		t.Fatalf("the trail's answer does not name alice: %v", ans)
	}
}

func TestSignInRefusals(t *testing.T) {
	s := startSignIn(t)

	t.Run("a person without a role", func(t *testing.T) {
		b := s.cookies()
		code, page := b.signIn("bob")
		if code != http.StatusForbidden || !strings.Contains(page, "bob@example.com signed in, but none of the values of the roles claim (staff)") {
			t.Fatalf("bob: %d %s", code, page)
		}
		if _, me := b.do("GET", "/auth/me", nil); me["signed_in"] != false || me["name"] != "" {
			t.Fatalf("bob has a session: %v", me)
		}
		events, err := s.store.AccessEvents(t.Context(), 10)
		if err != nil || len(events) == 0 || events[0].Token != "bob@example.com" || events[0].Reason != "no role" || events[0].Code != http.StatusForbidden {
			t.Fatalf("the refusal is not recorded: %v %+v", err, events)
		}
		idt, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "bob")
		if code, out := s.withBearer(idt, "GET", "/v1/decisions", nil); code != http.StatusForbidden || !strings.Contains(errorOf(out), "holds no role") {
			t.Fatalf("bob's token: %d %v", code, out)
		}
	})

	t.Run("a role from a group", func(t *testing.T) {
		idt, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "carol")
		if code, out := s.withBearer(idt, "GET", "/v1/decisions", nil); code != http.StatusOK {
			t.Fatalf("carol the auditor reads the trail: %d %v", code, out)
		}
		id := s.ask("signin-carol")
		if code, out := s.withBearer(idt, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_once"}); code != http.StatusForbidden {
			t.Fatalf("carol the auditor answered: %d %v", code, out)
		}
	})

	t.Run("an expired token", func(t *testing.T) {
		s.provider.AddClient(oidctest.Client{ID: "toolperm", RedirectURIs: []string{s.srv.URL + "/auth/callback"}, IDTokenLifetime: -time.Minute})
		defer s.provider.AddClient(oidctest.Client{ID: "toolperm", RedirectURIs: []string{s.srv.URL + "/auth/callback"}})
		idt, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
		if code, out := s.withBearer(idt, "GET", "/v1/decisions", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(out), "expired") {
			t.Fatalf("an expired token: %d %v", code, out)
		}
	})

	t.Run("another audience", func(t *testing.T) {
		s.provider.AddClient(oidctest.Client{ID: "wiki", RedirectURIs: []string{"http://127.0.0.1/wiki/callback"}})
		idt, _ := s.provider.SignIn(t, "wiki", "http://127.0.0.1/wiki/callback", "alice")
		if code, out := s.withBearer(idt, "GET", "/v1/decisions", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(out), "audience") {
			t.Fatalf("a token for another audience: %d %v", code, out)
		}
	})

	t.Run("a forged or huge token", func(t *testing.T) {
		idt, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
		parts := strings.Split(idt, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+s.provider.Issuer+`","aud":"toolperm","sub":"mallory","exp":4102444800}`)) + "." + parts[2]
		if code, out := s.withBearer(forged, "GET", "/v1/decisions", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(out), "signature") {
			t.Fatalf("a forged token: %d %v", code, out)
		}
		huge := parts[0] + "." + strings.Repeat("A", 20<<10) + "." + parts[2]
		if code, out := s.withBearer(huge, "GET", "/v1/decisions", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(out), "longer than") {
			t.Fatalf("a huge token: %d %v", code, out)
		}
	})

	t.Run("a forged cookie", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.srv.URL+"/v1/decisions", nil)
		req.AddCookie(&http.Cookie{Name: "pdp_session", Value: "eyJzdWIiOiJtYWxsb3J5Iiwicm9sZXMiOlsiYWRtaW4iXSwiZXhwIjoiMjEwMC0wMS0wMVQwMDowMDowMFoifQ.AAAA"})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a forged cookie: %d", resp.StatusCode)
		}
	})
}

func TestKeyRotation(t *testing.T) {
	s := startSignIn(t)
	before, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
	if code, out := s.withBearer(before, "GET", "/v1/decisions", nil); code != http.StatusOK {
		t.Fatalf("a token signed with the first key: %d %v", code, out)
	}
	s.provider.Rotate(t)
	after, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
	if code, out := s.withBearer(after, "GET", "/v1/decisions", nil); code != http.StatusOK {
		t.Fatalf("a token signed with the new key: %d %v", code, out)
	}
	// go-oidc tells the token that asked for the new key set before it
	// keeps that set: for a moment after, the old set still answers. The
	// removed key is refused once it is kept; the deadline bounds a
	// failure only.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, out := s.withBearer(before, "GET", "/v1/decisions", nil)
		if code == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token signed with the removed key: %d %v", code, out)
		}
	}
}

func TestBearerTokensFromTheProvider(t *testing.T) {
	s := startSignIn(t)
	idt, access := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
	id := s.ask("signin-bearer")
	code, rec := s.withBearer(idt, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny", "channel": "cli"})
	ans, _ := rec["answer"].(map[string]any)
	if code != http.StatusOK || ans["answered_by"] != "alice@example.com" || ans["answered_by_subject"] != "alice" {
		t.Fatalf("an answer with alice's ID token: %d %v", code, rec)
	}
	// An e-mail the provider has not verified names no one: dave's answer
	// is dave's, not the address he typed.
	daves, _ := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "dave")
	code, rec = s.withBearer(daves, "POST", "/v1/decisions/"+s.ask("signin-unverified")+"/answer", map[string]any{"answer": "deny", "channel": "cli"})
	if ans, _ := rec["answer"].(map[string]any); code != http.StatusOK || ans["answered_by"] != "dave" || ans["answered_by_subject"] != "dave" {
		t.Fatalf("an answer with an unverified e-mail: %d %v", code, rec)
	}
	// The provider's access tokens are opaque here: not a JWT, refused.
	if code, _ := s.withBearer(access, "GET", "/v1/decisions", nil); code != http.StatusUnauthorized {
		t.Fatalf("an opaque access token: %d", code)
	}
	// A JWT access token for the PDP's audience is the person too.
	s.provider.AddClient(oidctest.Client{ID: "toolperm", RedirectURIs: []string{s.srv.URL + "/auth/callback"}, JWTAccessTokens: true})
	_, jwtAccess := s.provider.SignIn(t, "toolperm", s.srv.URL+"/auth/callback", "alice")
	if code, out := s.withBearer(jwtAccess, "GET", "/v1/decisions", nil); code != http.StatusOK {
		t.Fatalf("a JWT access token: %d %v", code, out)
	}
	// The dispatcher's token decides as before, and a person's token does not.
	s.ask("signin-dispatcher")
	if code, _ := s.withBearer(idt, "POST", "/v1/decide", shell("signin-dispatcher", "ls")); code != http.StatusForbidden {
		t.Fatalf("a person decided: %d", code)
	}
}

func TestSignOut(t *testing.T) {
	s, b := signedIn(t, "alice")
	// RP-initiated logout: the provider's end_session_endpoint, then
	// back to the console, the cookie cleared on the way.
	var hops []string
	b.client.CheckRedirect = func(req *http.Request, _ []*http.Request) error { hops = append(hops, req.URL.String()); return nil }
	req, _ := http.NewRequest("POST", s.srv.URL+"/auth/logout", nil)
	req.Header.Set("Origin", s.srv.URL)
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(hops) < 2 || !strings.HasPrefix(hops[0], s.provider.Issuer+"/") || !strings.Contains(hops[0], "client_id=toolperm") || resp.Request.URL.String() != s.srv.URL+"/ui/" {
		t.Fatalf("logout went %v, ended at %s", hops, resp.Request.URL)
	}
	if _, me := b.do("GET", "/auth/me", nil); me["signed_in"] != false {
		t.Fatalf("still signed in after logout: %v", me)
	}
}

func TestCookieRequestsFromAnotherOrigin(t *testing.T) {
	s, b := signedIn(t, "alice")
	id := s.ask("signin-csrf")
	answer := map[string]any{"answer": "allow_session"}
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"another origin", []string{"Origin", "https://evil.example"}},
		{"a cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}},
		{"no origin at all", nil},
		{"a null origin", []string{"Origin", "null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := b.do("POST", "/v1/decisions/"+id+"/answer", answer, tc.headers...)
			if code != http.StatusForbidden || !strings.Contains(errorOf(out), "cross_origin") {
				t.Fatalf("%d %v", code, out)
			}
		})
	}
	if _, rec := b.do("GET", "/v1/decisions/"+id, nil); rec["answer"] != nil {
		t.Fatalf("a cross-origin request answered: %v", rec["answer"])
	}
	if code, out := b.do("POST", "/v1/decisions/"+id+"/answer", answer, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Fatalf("a same-origin request: %d %v", code, out)
	}
}

func errorOf(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	return e["code"].(string) + ": " + e["message"].(string)
}

func TestSignInFlowChecks(t *testing.T) {
	s := startSignIn(t)

	t.Run("next is a path on this server", func(t *testing.T) {
		// Too long a path would make the sign-in cookie one a browser drops.
		for _, next := range []string{"https://evil.example/x", "//evil.example/x", `/\evil.example`, "/ui/" + strings.Repeat("x", 6000)} {
			code, page := s.cookies().signInTo("alice", next)
			if code != http.StatusOK || !strings.HasPrefix(page, s.srv.URL+"/ui/\n") {
				t.Errorf("next=%s: %d, ended at %s", next, code, strings.SplitN(page, "\n", 2)[0])
			}
		}
	})

	t.Run("a callback this browser did not start", func(t *testing.T) {
		resp, err := http.Get(s.srv.URL + "/auth/callback?code=stolen&state=guessed")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || len(resp.Cookies()) == 0 || resp.Cookies()[0].Name != "pdp_signin" {
			t.Fatalf("a foreign callback: %d, cookies %v", resp.StatusCode, resp.Cookies())
		}
	})

	t.Run("an answer link needs a signed-in person", func(t *testing.T) {
		id := s.ask("signin-link")
		tickets, err := s.store.IssueTickets(t.Context(), id, "slack", []string{"allow_once"}, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		link := "/v1/decisions/" + id + "/answer?ticket=" + tickets["allow_once"]
		resp, err := http.Get(s.srv.URL + link)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), `id="sign-in" href="/auth/login?next=`) || strings.Contains(string(page), `id="confirm"`) {
			t.Fatalf("the link's page without sign-in:\n%s", page)
		}
		if code, out := s.call("POST", link, nil); code != http.StatusUnauthorized {
			t.Fatalf("the link answered for no one: %d %v", code, out)
		}
		// Carol, an auditor, may not answer with it.
		auditor := s.cookies()
		if code, page := auditor.signIn("carol"); code != http.StatusOK {
			t.Fatalf("sign-in: %d %s", code, page)
		}
		req, _ := http.NewRequest("GET", s.srv.URL+link, nil)
		req.Header.Set("Accept", "text/html")
		resp, err = auditor.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(page), "carol@example.com may not answer: that needs the user role.") || strings.Contains(string(page), `id="confirm"`) {
			t.Fatalf("the link's page for an auditor:\n%s", page)
		}
		if code, out := auditor.do("POST", link, nil, "Origin", s.srv.URL); code != http.StatusForbidden {
			t.Fatalf("an auditor answered with the link: %d %v", code, out)
		}
		// The ticket was not used: a signed-in person still answers with it.
		b := s.cookies()
		if code, page := b.signIn("alice"); code != http.StatusOK {
			t.Fatalf("sign-in: %d %s", code, page)
		}
		code, rec := b.do("POST", link, nil, "Origin", s.srv.URL)
		if ans, _ := rec["answer"].(map[string]any); code != http.StatusOK || ans["answered_by"] != "alice@example.com" || ans["channel"] != "slack" {
			t.Fatalf("the link signed in: %d %v", code, rec)
		}
	})
}

// TestTheSessionCookieExpires: past auth.oidc.cookie.lifetime the cookie
// signs no one in.
func TestTheSessionCookieExpires(t *testing.T) {
	var later atomic.Int64
	clock := testserver.Configure(func(c *httpapi.Config, _ *pdp.Components) {
		c.SignIn.Now = func() time.Time { return time.Now().Add(time.Duration(later.Load())) }
	})
	s := startSignIn(t, clock)
	b := s.cookies()
	if code, page := b.signIn("alice"); code != http.StatusOK {
		t.Fatalf("sign-in: %d %s", code, page)
	}
	if code, out := b.do("GET", "/v1/decisions", nil); code != http.StatusOK {
		t.Fatalf("signed in: %d %v", code, out)
	}
	later.Store(int64(8*time.Hour + time.Minute))
	if code, out := b.do("GET", "/v1/decisions", nil); code != http.StatusUnauthorized || !strings.Contains(errorOf(out), "expired") {
		t.Fatalf("past the cookie's lifetime: %d %v", code, out)
	}
}
