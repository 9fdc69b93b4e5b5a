package httpapi_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/metrics"
	"github.com/toolperm/pdp/pdp"
)

// twoRuntimes is a secured service with two dispatchers (a, b), a person
// (u), an auditor (x) and an admin (r), and its metrics.
func twoRuntimes(t *testing.T, more ...func(*httpapi.Config, *pdp.Components)) (*service, *metrics.Metrics) {
	m := metrics.New()
	s := startServiceWith(t, func(c *httpapi.Config, comp *pdp.Components) {
		c.RefusalsPerSecond = 1000
		c.Observer, c.Metrics = m, m.Handler()
		c.Tokens = []httpapi.Token{
			token("runtime-a", "a", httpapi.Dispatcher), token("runtime-b", "b", httpapi.Dispatcher),
			token("desktop", "u", httpapi.User), token("audit", "x", httpapi.Auditor), token("root", "r", httpapi.Admin),
		}
		for _, f := range more {
			f(c, comp)
		}
	})
	return s, m
}

func TestARefusedRequestChangesNothing(t *testing.T) {
	s, _ := twoRuntimes(t)
	a, b, admin := s.as("a"), s.as("b"), s.as("r")
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s-A"})
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s-A:child", "parent_session_id": "s-A"})
	before := admin.mustStatus(200, "GET", "/v1/sessions/s-A", nil)

	refused := map[string]struct {
		who          *service
		method, path string
		body         any
	}{
		// The reproduction: B's decide in A's session carried cwd "/",
		// which A's session adopted as its workspace before the 403.
		"decide in a foreign session with cwd /": {b, "POST", "/v1/decide", map[string]any{"session_id": "s-A", "tool": "ask.user", "cwd": "/"}},
		"decide in a foreign sub-agent":          {b, "POST", "/v1/decide", map[string]any{"session_id": "s-A:child", "tool": "read_file", "args": map[string]any{"path": "/etc/shadow"}, "cwd": "/"}},
		"a sub-agent under a foreign session":    {b, "POST", "/v1/sessions", map[string]any{"id": "s-B:child", "parent_session_id": "s-A", "workspace": "/"}},
		"a sub-agent under a foreign sub-agent":  {b, "POST", "/v1/sessions", map[string]any{"id": "s-B:grandchild", "parent_session_id": "s-A:child"}},
		"PATCH by a foreign dispatcher":          {b, "PATCH", "/v1/sessions/s-A", map[string]any{"permission_level": "FULL"}},
		"a looser session by the owner":          {a, "POST", "/v1/sessions", map[string]any{"id": "s-A:loose", "parent_session_id": "s-A", "permission_level": "FULL"}},
		"a simulation asking the LLM":            {s.as("x"), "POST", "/v1/simulate", map[string]any{"session_id": "s-A", "tool": "shell", "args": map[string]any{"command": "ls"}, "cwd": "/", "assess": true}},
	}
	for name, r := range refused {
		t.Run(name, func(t *testing.T) {
			r.who.mustStatus(403, r.method, r.path, r.body)
		})
	}

	after := admin.mustStatus(200, "GET", "/v1/sessions/s-A", nil)
	if fmt.Sprint(before) != fmt.Sprint(after) || after["workspace"] != "" {
		t.Fatalf("a refused request changed the session:\nbefore %v\nafter  %v", before, after)
	}
	for _, id := range []string{"s-B:child", "s-B:grandchild", "s-A:loose"} {
		admin.mustStatus(404, "GET", "/v1/sessions/"+id, nil)
	}
	if list := admin.mustStatus(200, "GET", "/v1/decisions", nil)["decisions"].([]any); len(list) != 0 {
		t.Fatalf("refused requests left decisions: %v", list)
	}
	// A's session still confines A: /etc/shadow is outside, and the
	// first cwd A itself sends becomes the workspace.
	read := map[string]any{"session_id": "s-A", "tool": "read_file", "args": map[string]any{"path": "/etc/shadow"}, "cwd": "/home/a/proj"}
	expectDecision(t, a.decide(read), "deny", "default")
	if got := admin.mustStatus(200, "GET", "/v1/sessions/s-A", nil); got["workspace"] != "/home/a/proj" {
		t.Fatalf("the owner's first cwd was not adopted: %v", got)
	}
}

func TestDispatchersReadOnlyTheirOwnSessions(t *testing.T) {
	s, _ := twoRuntimes(t)
	a, b, person, auditor := s.as("a"), s.as("b"), s.as("u"), s.as("x")
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s-A", "workspace": "/w"})
	ask := a.decide(map[string]any{"session_id": "s-A", "tool": "shell", "args": map[string]any{"command": "mysql -psecret"}, "cwd": "/w"})
	id := ask["decision_id"].(string)
	a.decide(map[string]any{"session_id": "auto-A", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s-A:sub", "parent_session_id": "s-A"})
	person.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "shared", "workspace": "/w"})

	// What B gets for A's things is exactly what it gets for unknown ids.
	hidden := map[string]string{
		"A's decision":          "/v1/decisions/" + id,
		"A's decision, waiting": "/v1/decisions/" + id + "?wait=3s",
		"A's session":           "/v1/sessions/s-A",
		"A's auto-created one":  "/v1/sessions/auto-A",
		"A's sub-agent":         "/v1/sessions/s-A:sub",
		"an unknown decision":   "/v1/decisions/d-unknown",
		"an unknown session":    "/v1/sessions/s-unknown",
		"an unknown, waiting":   "/v1/decisions/d-unknown?wait=3s",
	}
	for name, path := range hidden {
		t.Run(name, func(t *testing.T) {
			code, body := b.call("GET", path, nil)
			target := strings.TrimPrefix(strings.SplitN(path, "?", 2)[0], "/v1/")
			kind, ident, _ := strings.Cut(target, "/")
			want := fmt.Sprintf("%s %q: not found", strings.TrimSuffix(kind, "s"), ident)
			e, _ := body["error"].(map[string]any)
			if code != 404 || e["code"] != "not_found" || e["message"] != want || len(body) != 1 {
				t.Fatalf("%d %v, want 404 not_found %q", code, body, want)
			}
		})
	}
	// The owner, a person's channel, an auditor and anyone for shared sessions still read.
	a.mustStatus(200, "GET", "/v1/decisions/"+id, nil)
	a.mustStatus(200, "GET", "/v1/sessions/s-A:sub", nil)
	person.mustStatus(200, "GET", "/v1/decisions/"+id, nil)
	auditor.mustStatus(200, "GET", "/v1/sessions/s-A", nil)
	b.mustStatus(200, "GET", "/v1/sessions/shared", nil)
	// The list routes and grants are not the dispatcher's to read at all.
	for _, path := range []string{"/v1/decisions?session_id=s-A", "/v1/sessions", "/v1/sessions/s-A/grants"} {
		b.mustStatus(403, "GET", path, nil)
	}
	// A waiting owner is still woken by the answer.
	var wg sync.WaitGroup
	wg.Add(1)
	var waited map[string]any
	go func() {
		defer wg.Done()
		_, waited = a.call("GET", "/v1/decisions/"+id+"?wait=5s", nil)
	}()
	time.Sleep(100 * time.Millisecond)
	person.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny"})
	wg.Wait()
	if waited["answer"] == nil {
		t.Fatalf("the owner's wait did not see the answer: %v", waited)
	}
}

func TestEveryRefusalIsRecorded(t *testing.T) {
	s, _ := twoRuntimes(t)
	a, b := s.as("a"), s.as("b")
	a.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "s-A", "workspace": "/w"})
	d := a.decide(map[string]any{"session_id": "s-A", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})

	refusals := []struct {
		name         string
		who          *service
		method, path string
		body         any
		code         int
		reason       string
	}{
		{"a looser level", a, "POST", "/v1/sessions", map[string]any{"permission_level": "FULL"}, 403, "looser level"},
		{"a looser mode", a, "POST", "/v1/sessions", map[string]any{"mode": "allow-all"}, 403, "looser mode"},
		{"an allow rule", a, "POST", "/v1/sessions", map[string]any{"rules": map[string]string{"fs.*": "allow"}}, 403, "non-deny rule"},
		{"an assessor model", a, "POST", "/v1/sessions", map[string]any{"assessor_model": "yes-model"}, 403, "assessor model"},
		{"decide in a foreign session", b, "POST", "/v1/decide", map[string]any{"session_id": "s-A", "tool": "ask.user", "cwd": "/"}, 403, "another dispatcher's session"},
		{"parent under a foreign session", b, "POST", "/v1/sessions", map[string]any{"parent_session_id": "s-A"}, 403, "parent in another dispatcher's session"},
		{"simulate with assess", s.as("x"), "POST", "/v1/simulate", map[string]any{"tool": "shell", "args": map[string]any{"command": "ls"}, "assess": true}, 403, "simulate with assess"},
		{"a foreign decision", b, "GET", "/v1/decisions/" + d["decision_id"].(string), nil, 404, "another dispatcher's session"},
		{"a foreign session", b, "GET", "/v1/sessions/s-A", nil, 404, "another dispatcher's session"},
		{"the role check", b, "GET", "/v1/decisions", nil, 403, "role"},
	}
	for _, r := range refusals {
		r.who.mustStatus(r.code, r.method, r.path, r.body)
	}
	events := s.as("x").mustStatus(200, "GET", "/v1/access-events?limit=100", nil)["access_events"].([]any)
	if len(events) != len(refusals) {
		t.Fatalf("%d access events for %d refusals: %v", len(events), len(refusals), events)
	}
	for i, r := range refusals {
		ev := events[len(events)-1-i].(map[string]any)
		if ev["reason"] != r.reason || int(ev["code"].(float64)) != r.code || ev["method"] != r.method || ev["token"] == "" {
			t.Errorf("%s: recorded as %v", r.name, ev)
		}
	}
	text := scrape(t, s)
	if got := sample(t, text, `pdp_access_denied_total{code="403"}`); got != 8 {
		t.Errorf("pdp_access_denied_total 403 = %v, want 8", got)
	}
	if got := sample(t, text, `pdp_access_denied_total{code="404"}`); got != 2 {
		t.Errorf("pdp_access_denied_total 404 = %v, want 2", got)
	}
}

func scrape(t *testing.T, s *service) string {
	t.Helper()
	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

func TestForwardedForIsTrustedOnlyFromTrustedProxies(t *testing.T) {
	cidr := func(list ...string) []*net.IPNet {
		n, err := httpapi.ParseTrustedProxies(list)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cases := []struct {
		name    string
		trusted []*net.IPNet
		headers map[string]string
		want    string
	}{
		{"no trusted proxies: the header is ignored", nil, map[string]string{"X-Forwarded-For": "203.0.113.9"}, "127.0.0.1"},
		{"no trusted proxies: X-Real-IP is ignored", nil, map[string]string{"X-Real-IP": "203.0.113.9"}, "127.0.0.1"},
		{"a trusted range that is not the peer", cidr("10.0.0.0/8"), map[string]string{"X-Forwarded-For": "203.0.113.9"}, "127.0.0.1"},
		{"the peer is a trusted proxy", cidr("127.0.0.1"), map[string]string{"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9"},
		{"a spoofed hop before the real client", cidr("127.0.0.0/8"), map[string]string{"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}, "203.0.113.9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := twoRuntimes(t, func(c *httpapi.Config, _ *pdp.Components) { c.TrustedProxies = tc.trusted })
			req, _ := http.NewRequest("GET", s.srv.URL+"/v1/decisions", nil)
			req.Header.Set("Authorization", "Bearer wrong")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			events := s.as("x").mustStatus(200, "GET", "/v1/access-events", nil)["access_events"].([]any)
			if len(events) != 1 || events[0].(map[string]any)["remote"] != tc.want {
				t.Fatalf("recorded %v, want remote %s", events, tc.want)
			}
		})
	}
	if _, err := httpapi.ParseTrustedProxies([]string{"not-an-ip"}); err == nil {
		t.Error("a bad trusted proxy was accepted")
	}
}

// clock is a settable time for the engine's events.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now, _ = time.Parse(time.RFC3339Nano, s)
}

func TestSinceComparesTimes(t *testing.T) {
	clk := &clock{}
	s := startServiceWith(t, func(_ *httpapi.Config, comp *pdp.Components) { comp.Now = clk.Now })
	for _, at := range []string{"2026-11-29T10:00:14.999Z", "2026-11-29T10:00:15Z", "2026-11-29T10:00:15.3Z", "2026-11-29T10:00:15.30001Z", "2026-11-29T10:00:16Z"} {
		clk.set(at)
		s.decide(map[string]any{"session_id": "t", "tool": "read_file", "args": map[string]any{"path": at}, "cwd": "/w"})
	}
	for since, want := range map[string]int{
		"2026-11-29T10:00:15Z":        4, // the reproduction: …:15.3Z is after …:15Z
		"2026-11-29T10:00:15.000Z":    4,
		"2026-11-29T10:00:15.2Z":      3,
		"2026-11-29T10:00:15.3Z":      3,
		"2026-11-29T10:00:15.300001Z": 2,
		"2026-11-29T11:00:15+01:00":   4,
		"2026-11-29T10:00:16Z":        1,
		"2026-11-29T10:00:16.5Z":      0,
	} {
		list := s.mustStatus(200, "GET", "/v1/decisions?since="+strings.ReplaceAll(since, "+", "%2B"), nil)["decisions"].([]any)
		if len(list) != want {
			t.Errorf("since=%s: %d decisions, want %d", since, len(list), want)
		}
	}
}

func TestListsCutLongArguments(t *testing.T) {
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) { c.MaxBodyBytes = 1 << 20 })
	long := "echo " + strings.Repeat("x", 300<<10)
	var ids []string
	for i := 0; i < 10; i++ {
		d := s.decide(map[string]any{"session_id": "big", "tool": "shell", "args": map[string]any{"command": fmt.Sprintf("%s %d", long, i)}, "cwd": "/w"})
		ids = append(ids, d["decision_id"].(string))
	}
	nested := s.decide(map[string]any{"session_id": "big", "tool": "edit_file",
		"args": map[string]any{"path": "a", "edits": []any{map[string]any{"new_string": strings.Repeat("é", 5000)}}}, "cwd": "/w"})
	small := s.decide(map[string]any{"session_id": "big", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})

	resp, err := http.Get(s.srv.URL + "/v1/decisions?limit=20")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(raw) > 100<<10 {
		t.Fatalf("the list of 12 decisions is %d bytes", len(raw))
	}
	list := s.mustStatus(200, "GET", "/v1/decisions?limit=20", nil)["decisions"].([]any)
	for _, item := range list {
		d := item.(map[string]any)
		args := d["args"].(map[string]any)
		switch d["decision_id"] {
		case small["decision_id"]:
			if _, ok := d["truncated"]; ok || args["path"] != "a" {
				t.Errorf("a small call was marked or cut: %v", d)
			}
		case nested["decision_id"]:
			s := args["edits"].([]any)[0].(map[string]any)["new_string"].(string)
			if d["truncated"] != true || len(s) > 4096 || len(s) < 4094 || !strings.HasPrefix(strings.Repeat("é", 5000), s) {
				t.Errorf("a nested long string: truncated=%v, %d bytes", d["truncated"], len(s))
			}
		default:
			fp, _ := d["fingerprint"].(string)
			if d["truncated"] != true || len(args["command"].(string)) != 4096 || len(fp) > 4096 {
				t.Errorf("a long command: truncated=%v, %d bytes", d["truncated"], len(args["command"].(string)))
			}
		}
	}
	// One decision is still whole.
	one := s.mustStatus(200, "GET", "/v1/decisions/"+ids[3], nil)
	if one["args"].(map[string]any)["command"] != fmt.Sprintf("%s %d", long, 3) || one["truncated"] != nil {
		t.Fatalf("GET /v1/decisions/{id} was cut: %d bytes", len(one["args"].(map[string]any)["command"].(string)))
	}
}

func TestSubAgentChainsHaveAMaximumDepth(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "c0", "workspace": "/w"})
	for i := 1; i <= pdp.MaxSubAgentDepth; i++ {
		s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": fmt.Sprintf("c%d", i), "parent_session_id": fmt.Sprintf("c%d", i-1)})
	}
	deepest := fmt.Sprintf("c%d", pdp.MaxSubAgentDepth)
	// Everything that could be created can be decided in.
	expectDecision(t, s.decide(map[string]any{"session_id": deepest, "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"}), "allow", "level")
	code, body := s.call("POST", "/v1/sessions", map[string]any{"parent_session_id": deepest})
	if code != 400 || body["error"].(map[string]any)["code"] != "chain_too_deep" {
		t.Fatalf("one deeper: %d %v", code, body)
	}
	// Another branch of the tree meets the same limit.
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "b1", "parent_session_id": fmt.Sprintf("c%d", pdp.MaxSubAgentDepth-1)})
	s.mustStatus(400, "POST", "/v1/sessions", map[string]any{"id": "b2", "parent_session_id": "b1"})
	// The reproduction: a 34-deep chain is refused long before it exists.
	for i := pdp.MaxSubAgentDepth + 1; i <= 34; i++ {
		s.mustStatus(400, "POST", "/v1/sessions", map[string]any{"id": fmt.Sprintf("c%d", i), "parent_session_id": fmt.Sprintf("c%d", i-1)})
	}
	s.mustStatus(404, "GET", fmt.Sprintf("/v1/sessions/c%d", pdp.MaxSubAgentDepth+1), nil)
}
