package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/metrics"
	"github.com/toolperm/pdp/pdp"
)

// token is a bearer token whose secret is secret.
var token = testserver.Token

// as returns a client of the same service that sends secret as its token.
func (s *service) as(secret string) *service {
	c := *s
	c.token = secret
	return &c
}

// securedService requires tokens and writes every refused call to the
// database (the tests refuse more than the default 20 a second).
func securedService(t *testing.T, tokens ...httpapi.Token) *service {
	return startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.RefusalsPerSecond = 1000
		c.Tokens = tokens
	})
}

func newSecuredService(t *testing.T) *service {
	return securedService(t,
		token("runtime", "d-secret", httpapi.Dispatcher),
		token("desktop", "u-secret", httpapi.User),
		token("audit", "a-secret", httpapi.Auditor),
		token("root", "r-secret", httpapi.Admin),
	)
}

func TestRolesMayDoWhatTheyMayAndNothingElse(t *testing.T) {
	s := newSecuredService(t)
	admin := s.as("r-secret")
	admin.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s1", "workspace": "/w"})
	ask := admin.decide(map[string]any{"session_id": "s1", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"})
	askID := ask["decision_id"].(string)

	type step struct {
		method, path string
		body         any
	}
	steps := map[string]step{
		"decide":       {"POST", "/v1/decide", map[string]any{"session_id": "s1", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"}},
		"create":       {"POST", "/v1/sessions", map[string]any{"workspace": "/w"}},
		"get session":  {"GET", "/v1/sessions/s1", nil},
		"patch":        {"PATCH", "/v1/sessions/s1", map[string]any{"mode": "on-demand"}},
		"grants":       {"GET", "/v1/sessions/s1/grants", nil},
		"delete grant": {"DELETE", "/v1/sessions/s1/grants/999", nil},
		"list":         {"GET", "/v1/decisions", nil},
		"get decision": {"GET", "/v1/decisions/" + askID, nil},
		"answer":       {"POST", "/v1/decisions/nope/answer", map[string]any{"answer": "deny"}},
		"health":       {"GET", "/health", nil},
		"ready":        {"GET", "/ready", nil},
	}
	// Allowed calls answer with their own status (404 for the ids that do
	// not exist); refused ones with 401 or 403.
	allowed := map[string]map[string]int{
		"d-secret": {"decide": 200, "create": 201, "get session": 200, "get decision": 200, "health": 200, "ready": 200},
		"u-secret": {"create": 201, "get session": 200, "patch": 200, "grants": 200, "delete grant": 404, "list": 200, "get decision": 200, "answer": 404, "health": 200, "ready": 200},
		"a-secret": {"get session": 200, "grants": 200, "list": 200, "get decision": 200, "health": 200, "ready": 200},
		"r-secret": {"decide": 200, "create": 201, "get session": 200, "patch": 200, "grants": 200, "delete grant": 404, "list": 200, "get decision": 200, "answer": 404, "health": 200, "ready": 200},
		"":         {"health": 200, "ready": 200},
		"wrong":    {"health": 200, "ready": 200},
	}
	for secret, may := range allowed {
		for name, st := range steps {
			t.Run(fmt.Sprintf("%s/%s", secret, name), func(t *testing.T) {
				want, ok := may[name]
				if !ok {
					want = 403
					if secret == "" || secret == "wrong" {
						want = 401
					}
				}
				code, body := s.as(secret).call(st.method, st.path, st.body)
				if code != want {
					t.Fatalf("status %d, want %d: %v", code, want, body)
				}
			})
		}
	}
	out := s.as("a-secret").mustStatus(200, "GET", "/v1/access-events?limit=500", nil)
	counts := map[int]int{}
	for _, ev := range out["access_events"].([]any) {
		counts[int(ev.(map[string]any)["code"].(float64))]++
	}
	s.as("d-secret").mustStatus(403, "GET", "/v1/access-events", nil)
	if counts[401] != 18 || counts[403] != 11 {
		t.Fatalf("access events: %d×401, %d×403", counts[401], counts[403])
	}
}

func TestDispatcherCannotRaiseOrAnswer(t *testing.T) {
	s := newSecuredService(t)
	runtime, person := s.as("d-secret"), s.as("u-secret")
	runtime.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "agent", "workspace": "/w"})
	ask := runtime.decide(map[string]any{"session_id": "agent", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"})
	id := ask["decision_id"].(string)

	runtime.mustStatus(403, "PATCH", "/v1/sessions/agent", map[string]any{"permission_level": "FULL"})
	runtime.mustStatus(403, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_session"})
	for name, body := range map[string]map[string]any{
		"a higher level": {"permission_level": "FULL"},
		"a looser mode":  {"mode": "allow-all"},
		"always-ask":     {"mode": "always-ask"},
		"an allow rule":  {"rules": map[string]string{"mcp.*": "allow"}},
		"an ask rule":    {"rules": map[string]string{"mcp.github.*": "ask"}},
	} {
		code, _ := runtime.call("POST", "/v1/sessions", body)
		if code != 403 {
			t.Errorf("a dispatcher created a session with %s: %d", name, code)
		}
	}
	for name, body := range map[string]map[string]any{
		"defaults":       {},
		"a deny rule":    {"rules": map[string]string{"net.*": "deny"}},
		"CLOUD":          {"execution_mode": "CLOUD"},
		"a sub-agent":    {"parent_session_id": "agent", "scope": []string{"fs.*"}},
		"the same level": {"permission_level": "READ_ONLY", "mode": "on-demand"},
	} {
		code, out := runtime.call("POST", "/v1/sessions", body)
		if code != 201 {
			t.Errorf("a dispatcher could not create a session with %s: %d %v", name, code, out)
		}
	}
	if got := s.as("r-secret").mustStatus(200, "GET", "/v1/decisions/"+id, nil); got["answer"] != nil {
		t.Fatalf("the ask was answered: %v", got)
	}

	// The person's channel can.
	person.mustStatus(200, "PATCH", "/v1/sessions/agent", map[string]any{"permission_level": "READ_WRITE"})
	person.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_session", "channel": "desktop"})
	expectDecision(t, runtime.decide(map[string]any{"session_id": "agent", "tool": "shell", "args": map[string]any{"command": "make check"}, "cwd": "/w"}), "allow", "session-grant")
}

func TestMetricsCountWhatHappened(t *testing.T) {
	m := metrics.New()
	s := startServiceWith(t, func(c *httpapi.Config, comp *pdp.Components) {
		c.Observer, c.Metrics = m, m.Handler()
		comp.Observer = m
	})
	read := map[string]any{"session_id": "m", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"}
	s.decide(read)
	s.decide(read)
	s.decide(map[string]any{"session_id": "m", "tool": "write_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})
	s.decide(map[string]any{"session_id": "m", "tool": "read_file", "args": map[string]any{"path": "/etc/passwd"}, "cwd": "/w"})
	s.call("POST", "/v1/decide", "{")

	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	for series, want := range map[string]float64{
		`pdp_decisions_total{decision="allow",source="level"}`:                 2,
		`pdp_decisions_total{decision="ask",source="level"}`:                   1,
		`pdp_decisions_total{decision="deny",source="default"}`:                1,
		`pdp_decide_duration_seconds_count`:                                    4,
		`pdp_policy_memo_hits_total`:                                           1,
		`pdp_policy_eval_duration_seconds_count`:                               3,
		`pdp_http_requests_total{code="200",method="POST",route="/v1/decide"}`: 4,
		`pdp_http_requests_total{code="400",method="POST",route="/v1/decide"}`: 1,
	} {
		if got := sample(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	m.Request("/v1/x", strings.Repeat("X", 2000), 405, 0)
	resp2, _ := http.Get(s.srv.URL + "/metrics")
	raw2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if strings.Contains(string(raw2), "XXXX") || !strings.Contains(string(raw2), `method="other"`) {
		t.Error("an odd HTTP method became a label value")
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "pdp_decide_duration_seconds_bucket{le=\"1e-05\"}"} {
		if !regexp.MustCompile(regexp.QuoteMeta(name)).MatchString(text) {
			t.Errorf("%s is not exported", name)
		}
	}
	if regexp.MustCompile(`session_id|make check|/etc/passwd`).MatchString(text) {
		t.Error("a session id, command or path leaked into the labels")
	}
}

// sample reads one sample's value from the exposition text.
func sample(t *testing.T, text, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s is missing", series)
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestPolicyStatusIsForAdmins(t *testing.T) {
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Tokens = []httpapi.Token{token("root", "r-secret", httpapi.Admin), token("audit", "a-secret", httpapi.Auditor)}
		c.PolicyStatus = func() any { return map[string]any{"revision": "r7", "last_error": nil} }
	})
	if got := s.as("r-secret").mustStatus(200, "GET", "/v1/policy", nil); got["revision"] != "r7" {
		t.Fatalf("policy status: %v", got)
	}
	s.as("a-secret").mustStatus(403, "GET", "/v1/policy", nil)
	s.mustStatus(401, "GET", "/v1/policy", nil)
}

func TestBrowsersFromOtherSitesAreRefused(t *testing.T) {
	s := newService(t)
	post := func(origin, host string) (int, http.Header) {
		req, _ := http.NewRequest("POST", s.srv.URL+"/v1/sessions", strings.NewReader(`{"mode":"allow-all","permission_level":"FULL"}`))
		req.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	if code, _ := post("https://evil.example", ""); code != 403 {
		t.Fatalf("a cross-site POST: %d", code)
	}
	if code, _ := post("", "rebind.evil.example:8181"); code != 403 {
		t.Fatalf("a rebound host name without tokens: %d", code)
	}
	code, h := post(s.srv.URL, "")
	if code != 201 {
		t.Fatalf("a same-origin POST (the console): %d", code)
	}
	if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("framing headers: %v", h)
	}
}

func TestDispatchersKeepToTheirOwnSessions(t *testing.T) {
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Tokens = []httpapi.Token{
			token("runtime-a", "a", httpapi.Dispatcher), token("runtime-b", "b", httpapi.Dispatcher),
			token("desktop", "u", httpapi.User), token("audit", "x", httpapi.Auditor),
		}
	})
	a, b, person := s.as("a"), s.as("b"), s.as("u")
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "cc:1", "workspace": "/w", "execution_mode": "CLOUD"})
	read := map[string]any{"session_id": "cc:1", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"}
	a.mustStatus(200, "POST", "/v1/decide", read)
	b.mustStatus(403, "POST", "/v1/decide", read)
	b.mustStatus(403, "POST", "/v1/sessions", map[string]any{"id": "cc:1:agent", "parent_session_id": "cc:1"})
	// An auto-created session belongs to the dispatcher that created it too.
	a.mustStatus(200, "POST", "/v1/decide", map[string]any{"session_id": "auto-a", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})
	b.mustStatus(403, "POST", "/v1/decide", map[string]any{"session_id": "auto-a", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})
	// A session a person created is anyone's to use.
	person.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "shared", "workspace": "/w"})
	b.mustStatus(200, "POST", "/v1/decide", map[string]any{"session_id": "shared", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})

	a.mustStatus(403, "POST", "/v1/sessions", map[string]any{"assessor_model": "tiny-yes-model"})
	s.as("x").mustStatus(403, "POST", "/v1/simulate", map[string]any{"tool": "shell", "args": map[string]any{"command": "ls"}, "assess": true})
	s.as("x").mustStatus(200, "POST", "/v1/simulate", map[string]any{"tool": "shell", "args": map[string]any{"command": "ls"}})
}

func TestRefusalFloodsAreNotAllWritten(t *testing.T) {
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Tokens = []httpapi.Token{token("root", "r", httpapi.Admin)}
		c.RefusalsPerSecond = 5
	})
	for i := 0; i < 50; i++ {
		s.call("GET", "/v1/decisions", nil)
	}
	events, _ := s.store.AccessEvents(t.Context(), 1000)
	if len(events) < 5 || len(events) > 15 {
		t.Fatalf("%d access events written for 50 refusals with a limit of 5 a second", len(events))
	}
}
