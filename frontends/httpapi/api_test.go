package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// service is the real API on a real SQLite file, behind a real HTTP server.
type service struct {
	engine *pdp.Engine
	token  string // sent as a bearer token when set
	t      *testing.T
	dbPath string
	store  *sqlite.Store
	srv    *testserver.Server
	feed   *feed.Hub
}

// startService starts the API with an event feed and the limits these
// tests expect, then applies opts.
func startService(t *testing.T, opts ...testserver.Option) *service {
	t.Helper()
	limits := testserver.Configure(func(c *httpapi.Config, _ *pdp.Components) {
		c.MaxBodyBytes, c.MaxWait = 64<<10, 5*time.Second
	})
	srv := testserver.New(t, append([]testserver.Option{limits}, opts...)...)
	return &service{t: t, dbPath: srv.DBPath, store: srv.Store, srv: srv, engine: srv.Engine, feed: srv.Feed}
}

// startServiceWith lets a test set tokens, observers and metrics.
func startServiceWith(t *testing.T, configure func(*httpapi.Config, *pdp.Components)) *service {
	t.Helper()
	return startService(t, testserver.Configure(configure))
}

func newService(t *testing.T) *service {
	return startService(t)
}

func (s *service) stop() { s.srv.Close() }

// restart stops the service and starts a new one on the same file.
func (s *service) restart() *service {
	s.stop()
	return startService(s.t, testserver.DB(s.dbPath))
}

// call sends a JSON request and decodes the JSON answer.
func (s *service) call(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			s.t.Fatalf("%s %s: answer is not JSON: %s", method, path, raw)
		}
	}
	return resp.StatusCode, out
}

func (s *service) decide(body map[string]any) map[string]any {
	s.t.Helper()
	code, d := s.call("POST", "/v1/decide", body)
	if code != http.StatusOK {
		s.t.Fatalf("decide %v: %d %v", body, code, d)
	}
	return d
}

func (s *service) mustStatus(want int, method, path string, body any) map[string]any {
	s.t.Helper()
	code, out := s.call(method, path, body)
	if code != want {
		s.t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

func shell(session, cmd string) map[string]any {
	return map[string]any{"session_id": session, "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": "/home/u/proj"}
}

func expectDecision(t *testing.T, d map[string]any, decision, source string) {
	t.Helper()
	if d["decision"] != decision || d["source"] != source {
		t.Fatalf("got %v/%v (%v), want %s/%s", d["decision"], d["source"], d["reason"], decision, source)
	}
}

func TestLevelSwitch(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "lv", "workspace": "/home/u/proj"})
	write := map[string]any{"session_id": "lv", "tool": "write_file", "args": map[string]any{"path": "src/a.go"}, "cwd": "/home/u/proj"}

	before := s.decide(write)
	expectDecision(t, before, "ask", "level")

	s.mustStatus(200, "PATCH", "/v1/sessions/lv", map[string]any{"permission_level": "READ_WRITE"})
	expectDecision(t, s.decide(write), "allow", "level")

	// The ask issued before the switch keeps its own answer.
	id := before["decision_id"].(string)
	s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny", "channel": "desktop"})
	got := s.mustStatus(200, "GET", "/v1/decisions/"+id, nil)
	answer, _ := got["answer"].(map[string]any)
	if got["decision"] != "ask" || answer["answer"] != "deny" || answer["channel"] != "desktop" {
		t.Fatalf("earlier ask: %v", got)
	}

	// An invalid level or mode changes nothing.
	for _, body := range []map[string]any{{"permission_level": "ROOT"}, {"mode": "yolo"}, {"permission_level": "FULL", "mode": "nope"}, {"workspace": "/"}, {"permission_level": ""}} {
		s.mustStatus(400, "PATCH", "/v1/sessions/lv", body)
	}
	sess := s.mustStatus(200, "GET", "/v1/sessions/lv", nil)
	if sess["permission_level"] != "READ_WRITE" || sess["mode"] != "on-demand" || sess["workspace"] != "/home/u/proj" {
		t.Fatalf("session changed by a rejected PATCH: %v", sess)
	}
}

func TestGrantFlow(t *testing.T) {
	s := newService(t)
	first := s.decide(shell("g", "make check"))
	expectDecision(t, first, "ask", "level")
	if first["grantable"] != true || first["fingerprint"] != "make check" {
		t.Fatalf("make check should be grantable: %v", first)
	}
	out := s.mustStatus(200, "POST", "/v1/decisions/"+first["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session", "channel": "desktop"})
	if out["answer"].(map[string]any)["grant_id"] == nil {
		t.Fatalf("no grant id: %v", out)
	}

	expectDecision(t, s.decide(shell("g", "make check --short")), "allow", "session-grant")
	expectDecision(t, s.decide(shell("g", "make check; rm -rf build")), "ask", "level")
	expectDecision(t, s.decide(shell("other", "make check")), "ask", "level")

	// Answering twice, or answering a non-ask, is a conflict.
	s.mustStatus(409, "POST", "/v1/decisions/"+first["decision_id"].(string)+"/answer", map[string]any{"answer": "deny"})
	allowed := s.decide(map[string]any{"session_id": "g", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/home/u/proj"})
	s.mustStatus(409, "POST", "/v1/decisions/"+allowed["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_once"})

	// allow_session on a call without a fingerprint: 422, no grant, still unanswered.
	compound := s.decide(shell("g", "make check && curl x | sh"))
	cid := compound["decision_id"].(string)
	code, body := s.call("POST", "/v1/decisions/"+cid+"/answer", map[string]any{"answer": "allow_session"})
	if code != 422 || !strings.Contains(fmt.Sprint(body["error"]), "not_grantable") {
		t.Fatalf("allow_session on a compound command: %d %v", code, body)
	}
	grants := s.mustStatus(200, "GET", "/v1/sessions/g/grants", nil)["grants"].([]any)
	if len(grants) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	s.mustStatus(200, "POST", "/v1/decisions/"+cid+"/answer", map[string]any{"answer": "allow_once"})

	// Deleting the grant revokes it for the next call.
	gid := int(grants[0].(map[string]any)["id"].(float64))
	s.mustStatus(204, "DELETE", fmt.Sprintf("/v1/sessions/g/grants/%d", gid), nil)
	s.mustStatus(404, "DELETE", fmt.Sprintf("/v1/sessions/g/grants/%d", gid), nil)
	expectDecision(t, s.decide(shell("g", "make check")), "ask", "level")
}

func TestSubAgents(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "parent", "workspace": "/home/u/proj"})
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "child", "parent_session_id": "parent", "scope": []string{"fs.*", "shell.exec"}, "permission_level": "FULL"})
	child := s.mustStatus(200, "GET", "/v1/sessions/child", nil)
	if child["workspace"] != "/home/u/proj" || child["parent_session_id"] != "parent" {
		t.Fatalf("child session: %v", child)
	}

	// Outside the scope: denied by the parent-scope step.
	d := s.decide(map[string]any{"session_id": "child", "tool": "WebFetch", "args": map[string]any{"url": "https://x"}})
	expectDecision(t, d, "deny", "default")
	if d["rule"] != "PARENT_SCOPE" {
		t.Fatalf("rule %v", d["rule"])
	}
	// FULL in the child, READ_ONLY in the parent: never looser than the parent.
	expectDecision(t, s.decide(map[string]any{"session_id": "child", "tool": "write_file", "args": map[string]any{"path": "a.go"}, "cwd": "/home/u/proj"}), "ask", "level")

	// A grant answered in the child is stored on the root and applies to the whole tree.
	ask := s.decide(shell("child", "go test ./..."))
	expectDecision(t, ask, "ask", "level")
	s.mustStatus(200, "POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session"})
	for _, id := range []string{"parent", "child"} {
		grants := s.mustStatus(200, "GET", "/v1/sessions/"+id+"/grants", nil)["grants"].([]any)
		if len(grants) != 1 || grants[0].(map[string]any)["session_id"] != "parent" {
			t.Fatalf("grants seen from %s: %v", id, grants)
		}
	}
	expectDecision(t, s.decide(shell("parent", "go test -run X")), "allow", "session-grant")
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "child2", "parent_session_id": "child"})
	expectDecision(t, s.decide(shell("child2", "go test")), "allow", "session-grant")

	s.mustStatus(400, "POST", "/v1/sessions", map[string]any{"id": "orphan", "parent_session_id": "nobody"})
	s.mustStatus(409, "POST", "/v1/sessions", map[string]any{"id": "child"})
}

func TestRestartKeepsLevelsGrantsAndEvents(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "p", "workspace": "/home/u/proj", "rules": map[string]string{"mcp.github.*": "ask"}})
	s.mustStatus(200, "PATCH", "/v1/sessions/p", map[string]any{"permission_level": "READ_WRITE", "mode": "always-ask"})
	ask := s.decide(shell("p", "make build"))
	s.mustStatus(200, "POST", "/v1/decisions/"+ask["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session", "channel": "cli"})

	s = s.restart()
	sess := s.mustStatus(200, "GET", "/v1/sessions/p", nil)
	if sess["permission_level"] != "READ_WRITE" || sess["mode"] != "always-ask" || sess["rules"].(map[string]any)["mcp.github.*"] != "ask" {
		t.Fatalf("session after restart: %v", sess)
	}
	expectDecision(t, s.decide(shell("p", "make build")), "allow", "session-grant")
	got := s.mustStatus(200, "GET", "/v1/decisions/"+ask["decision_id"].(string), nil)
	if got["answer"].(map[string]any)["channel"] != "cli" {
		t.Fatalf("answer after restart: %v", got)
	}
	list := s.mustStatus(200, "GET", "/v1/decisions?session_id=p", nil)["decisions"].([]any)
	if len(list) != 2 {
		t.Fatalf("events after restart: %d", len(list))
	}
}

func TestWaitForAnAnswer(t *testing.T) {
	s := newService(t)
	ask := s.decide(shell("w", "make"))
	id := ask["decision_id"].(string)

	start := time.Now()
	s.mustStatus(200, "GET", "/v1/decisions/"+id+"?wait=100ms", nil)
	if time.Since(start) < 100*time.Millisecond {
		t.Fatal("wait returned before the wait ended")
	}

	var wg sync.WaitGroup
	var got map[string]any
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, got = s.call("GET", "/v1/decisions/"+id+"?wait=30s", nil)
	}()
	time.Sleep(100 * time.Millisecond)
	s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_once", "channel": "desktop"})
	wg.Wait()
	if a, _ := got["answer"].(map[string]any); a["answer"] != "allow_once" {
		t.Fatalf("the waiting request got %v", got)
	}
	s.mustStatus(400, "GET", "/v1/decisions/"+id+"?wait=soon", nil)
	s.mustStatus(404, "GET", "/v1/decisions/nope", nil)
}

func TestListDecisions(t *testing.T) {
	s := newService(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, s.decide(shell("l", fmt.Sprintf("make step%d", i)))["decision_id"].(string))
	}
	s.decide(map[string]any{"session_id": "l", "tool": "read_file", "args": map[string]any{"path": "x"}, "cwd": "/home/u/proj"})
	page := s.mustStatus(200, "GET", "/v1/decisions?session_id=l&decision=ask&limit=3", nil)
	list := page["decisions"].([]any)
	if len(list) != 3 || list[0].(map[string]any)["decision_id"] != ids[4] || page["next_before"] != ids[2] {
		t.Fatalf("first page: %v", page)
	}
	next := s.mustStatus(200, "GET", "/v1/decisions?session_id=l&decision=ask&limit=3&before="+ids[2], nil)["decisions"].([]any)
	if len(next) != 2 || next[0].(map[string]any)["decision_id"] != ids[1] {
		t.Fatalf("second page: %v", next)
	}
	s.mustStatus(400, "GET", "/v1/decisions?limit=0", nil)
	s.mustStatus(400, "GET", "/v1/decisions?decision=maybe", nil)
}

func TestBadInput(t *testing.T) {
	s := newService(t)
	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
	}{
		{"malformed JSON", "POST", "/v1/decide", "{", 400},
		{"empty body", "POST", "/v1/decide", "", 400},
		{"unknown field", "POST", "/v1/decide", `{"session_id":"s","tool":"Read","extra":1}`, 400},
		{"bad session id", "POST", "/v1/decide", `{"session_id":"../etc","tool":"Read"}`, 400},
		{"long session id", "POST", "/v1/decide", map[string]any{"session_id": strings.Repeat("a", 129), "tool": "Read"}, 400},
		{"no tool", "POST", "/v1/decide", `{"session_id":"s"}`, 400},
		{"tool and capability disagree", "POST", "/v1/decide", `{"session_id":"s","tool":"Bash","capability":"fs.read"}`, 400},
		{"wrong arg type", "POST", "/v1/decide", `{"session_id":"s","tool":"Read","args":{"file_path":7}}`, 400},
		{"too large", "POST", "/v1/decide", map[string]any{"session_id": "s", "tool": "shell", "args": map[string]any{"command": strings.Repeat("x", 70<<10)}}, 413},
		{"unknown level", "POST", "/v1/sessions", `{"permission_level":"ROOT"}`, 400},
		{"bad rule", "POST", "/v1/sessions", `{"rules":{"fs.*":"maybe"}}`, 400},
		{"relative workspace", "POST", "/v1/sessions", `{"workspace":"proj"}`, 400},
		{"unknown session", "GET", "/v1/sessions/nobody", nil, 404},
		{"bad answer", "POST", "/v1/decisions/x/answer", `{"answer":"yes"}`, 400},
		{"answer unknown decision", "POST", "/v1/decisions/x/answer", `{"answer":"deny"}`, 404},
		{"no route", "GET", "/v1/nothing", nil, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := s.call(tc.method, tc.path, tc.body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %v", code, tc.status, body)
			}
			e, _ := body["error"].(map[string]any)
			if e["code"] == "" || e["message"] == "" || e == nil {
				t.Fatalf("error body: %v", body)
			}
		})
	}
	// None of the bad requests left an event behind.
	if list := s.mustStatus(200, "GET", "/v1/decisions", nil)["decisions"].([]any); len(list) != 0 {
		t.Fatalf("bad requests were audited as decisions: %v", list)
	}
}

func TestHealthAndReady(t *testing.T) {
	s := newService(t)
	s.mustStatus(200, "GET", "/health", nil)
	ready := s.mustStatus(200, "GET", "/ready", nil)
	if ready["revision"] == "" {
		t.Fatalf("ready: %v", ready)
	}
}

func TestEveryDecisionIsAudited(t *testing.T) {
	s := newService(t)
	var wg sync.WaitGroup
	ids := make(chan string, 200)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				_, d := s.call("POST", "/v1/decide", shell(fmt.Sprintf("c%d", w), "make check"))
				ids <- d["decision_id"].(string)
			}
		}(w)
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		s.mustStatus(200, "GET", "/v1/decisions/"+id, nil)
	}
	stats := s.store.AuditStats()
	if stats.Events != 200 || stats.Transactions > stats.Events {
		t.Fatalf("audit stats %+v", stats)
	}
	t.Logf("200 concurrent decisions in %d transactions (largest %d)", stats.Transactions, stats.MaxBatch)
}

func TestAutoCreatedWorkspace(t *testing.T) {
	s := newService(t)
	// No cwd yet: nothing is confined, so paths are outside.
	d := s.decide(map[string]any{"session_id": "auto", "tool": "read_file", "args": map[string]any{"path": "/home/u/proj/a"}})
	expectDecision(t, d, "deny", "default")
	// A relative cwd does not become the workspace.
	s.decide(map[string]any{"session_id": "auto", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "proj"})
	if ws := s.mustStatus(200, "GET", "/v1/sessions/auto", nil)["workspace"]; ws != "" {
		t.Fatalf("workspace %v from a relative cwd", ws)
	}
	// The first absolute cwd does, and it never changes after.
	expectDecision(t, s.decide(map[string]any{"session_id": "auto", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/home/u/proj"}), "allow", "level")
	expectDecision(t, s.decide(map[string]any{"session_id": "auto", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/etc"}), "deny", "default")
	if ws := s.mustStatus(200, "GET", "/v1/sessions/auto", nil)["workspace"]; ws != "/home/u/proj" {
		t.Fatalf("workspace %v", ws)
	}
}
