package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/store/sqlite"
)

const payloads = "../../frontends/hooks/claudecode/testdata"

type hookAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

// runHook runs `pdp hook claude-code` with stdin and returns its answer;
// the command must succeed (exit 0) whatever happens.
func runHook(t *testing.T, stdin string, args ...string) hookAnswer {
	t.Helper()
	cmd := rootCommand()
	var out bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetArgs(append([]string{"hook", "claude-code", "--config", repoConfig}, args...))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("the hook failed (a runtime would run the tool): %v", err)
	}
	var a hookAnswer
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		t.Fatalf("the hook printed no valid answer: %v\n%s", err, out.String())
	}
	if a.HookSpecificOutput.HookEventName != "PreToolUse" || a.HookSpecificOutput.PermissionDecisionReason == "" {
		t.Fatalf("answer %+v", a)
	}
	return a
}

func payload(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(payloads, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// pdpTestServer is a real server with an event feed, and its store.
func pdpTestServer(t *testing.T) (*httptest.Server, *sqlite.Store) {
	t.Helper()
	s := testserver.New(t)
	return s.Server, s.Store
}

var hookCases = map[string]string{
	"bash_compound.json":      "ask",
	"bash_git_status.json":    "allow", // a read, judged by its effects
	"bash_make_check.json":    "ask",
	"read_inside.json":        "allow",
	"read_outside.json":       "deny",
	"write.json":              "ask",
	"edit.json":               "ask",
	"webfetch.json":           "deny",
	"mcp.json":                "deny",
	"subagent_read.json":      "allow",
	"subagent_bash.json":      "ask",
	"write_accept_edits.json": "ask", // a server keeps the level itself
}

func TestClaudeCodeHookAgainstAServer(t *testing.T) {
	srv, store := pdpTestServer(t)
	for name, want := range hookCases {
		t.Run(name, func(t *testing.T) {
			got := runHook(t, payload(t, name), "--url", srv.URL).HookSpecificOutput
			if got.PermissionDecision != want {
				t.Fatalf("%s: %s (%s), want %s", name, got.PermissionDecision, got.PermissionDecisionReason, want)
			}
		})
	}
	child, err := store.GetSession(context.Background(), "cc:7f3c9a2e-5b1d-4e8f-9c3a-2d6e8f1a4b7c:agent:a4f1c2d3")
	if err != nil || child.ParentSessionID != "cc:7f3c9a2e-5b1d-4e8f-9c3a-2d6e8f1a4b7c" {
		t.Fatalf("the sub-agent's session: %+v %v", child, err)
	}
	// File contents never reach the audit trail.
	page, _ := client.New(srv.URL).Decisions(context.Background(), client.Filter{Limit: 100})
	for _, ev := range page.Decisions {
		if _, ok := ev.Args["content"]; ok {
			t.Fatalf("file content in the audit trail: %v", ev.Args)
		}
	}
}

func TestClaudeCodeHookLocal(t *testing.T) {
	want := map[string]string{}
	for k, v := range hookCases {
		want[k] = v
	}
	want["write_accept_edits.json"] = "allow" // --local maps acceptEdits to READ_WRITE
	t.Setenv("CLAUDE_PROJECT_DIR", "/home/dev/proj")
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			got := runHook(t, payload(t, name), "--local").HookSpecificOutput
			if got.PermissionDecision != w {
				t.Fatalf("%s: %s (%s), want %s", name, got.PermissionDecision, got.PermissionDecisionReason, w)
			}
		})
	}
}

func TestClaudeCodeHookFailsClosed(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>hello</html>")) }))
	defer garbage.Close()
	allowLooking := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"decision":"yes please"}`))
	}))
	defer allowLooking.Close()

	cases := map[string]struct {
		stdin string
		args  []string
	}{
		"unreachable":         {payload(t, "read_inside.json"), []string{"--url", "http://127.0.0.1:1"}},
		"slow":                {payload(t, "read_inside.json"), []string{"--url", slow.URL, "--timeout", "300ms"}},
		"garbage":             {payload(t, "read_inside.json"), []string{"--url", garbage.URL}},
		"odd decision":        {payload(t, "read_inside.json"), []string{"--url", allowLooking.URL}},
		"not JSON":            {"{", []string{"--local"}},
		"another event":       {strings.Replace(payload(t, "read_inside.json"), "PreToolUse", "UserPromptSubmit", 1), []string{"--local"}},
		"broken local policy": {payload(t, "read_inside.json"), []string{"--local", "--workspace", "/home/dev/proj", "--policies", t.TempDir()}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			got := runHook(t, tc.stdin, tc.args...).HookSpecificOutput
			if got.PermissionDecision != "deny" {
				t.Fatalf("%s: %s (%s)", name, got.PermissionDecision, got.PermissionDecisionReason)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("%s took %s", name, took)
			}
		})
	}
}

func TestClaudeCodeHookWaitsForAPerson(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	go func() {
		for i := 0; i < 100; i++ {
			time.Sleep(50 * time.Millisecond)
			page, err := c.Decisions(context.Background(), client.Filter{Decision: client.Ask, Limit: 1})
			if err == nil && len(page.Decisions) == 1 {
				_, _ = c.Answer(context.Background(), page.Decisions[0].DecisionID, client.AllowOnce, "desktop")
				return
			}
		}
	}()
	got := runHook(t, payload(t, "bash_make_check.json"), "--url", srv.URL, "--wait", "10s", "--timeout", "15s").HookSpecificOutput
	if got.PermissionDecision != "allow" || !strings.Contains(got.PermissionDecisionReason, "allowed by a person") {
		t.Fatalf("%+v", got)
	}
}

func TestClaudeCodeHookAnswersOnlyKnownApprovals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask","need_approval":true,"source":"level","rule":"shell.exec","reason":"asks",` +
				`"capability":"shell.exec","fingerprint":"make check","grantable":true,"danger":null,"revision":"r1"}`))
			return
		}
		_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask","answer":{"answer":"sure, why not","channel":"x"}}`))
	}))
	defer srv.Close()
	got := runHook(t, payload(t, "bash_make_check.json"), "--url", srv.URL, "--wait", "1s").HookSpecificOutput
	if got.PermissionDecision != "deny" {
		t.Fatalf("an unknown answer became %s", got.PermissionDecision)
	}
}

func TestClaudeCodeHookLocalWorkspaceIsTheProject(t *testing.T) {
	// The model ran `cd /`: the event's cwd is / but the project is not.
	event := strings.Replace(payload(t, "write_accept_edits.json"), `"cwd":"/home/dev/proj"`, `"cwd":"/"`, 1)
	event = strings.Replace(event, "/home/dev/proj/src/hello.go", "/etc/cron.d/x", 1)
	t.Setenv("CLAUDE_PROJECT_DIR", "/home/dev/proj")
	if got := runHook(t, event, "--local").HookSpecificOutput; got.PermissionDecision != "deny" {
		t.Fatalf("a write to /etc from cwd / was %s (%s)", got.PermissionDecision, got.PermissionDecisionReason)
	}
	if got := runHook(t, event, "--local", "--workspace", "/").HookSpecificOutput; got.PermissionDecision != "allow" {
		t.Fatalf("with --workspace / the write is %s", got.PermissionDecision)
	}
}

// hookEvent is a PreToolUse event of the main agent.
func hookEvent(t *testing.T, tool, cwd string, input map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"session_id": "5e2b7c1a-0d4f-4a8e-b6c3-9f1e2d3c4b5a", "hook_event_name": "PreToolUse",
		"permission_mode": "default", "cwd": cwd, "tool_name": tool, "tool_input": input,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestClaudeCodeHookLocalWithoutAWorkspace(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	cases := map[string]struct {
		stdin string
		args  []string
		want  string
		// why is a piece of the reason: the workspace refusal names the
		// flag and the variable that set one.
		why []string
	}{
		"Read /etc/passwd from cwd /":     {hookEvent(t, "Read", "/", map[string]any{"file_path": "/etc/passwd"}), nil, "deny", []string{"--workspace", "CLAUDE_PROJECT_DIR"}},
		"Read a relative path from cwd /": {hookEvent(t, "Read", "/", map[string]any{"file_path": "etc/shadow"}), nil, "deny", []string{"--workspace", "CLAUDE_PROJECT_DIR"}},
		"Grep with no path, from cwd /":   {hookEvent(t, "Grep", "/", map[string]any{"pattern": "root"}), nil, "deny", []string{"--workspace"}},
		"Bash from cwd /":                 {hookEvent(t, "Bash", "/", map[string]any{"command": "cat etc/shadow"}), nil, "deny", []string{"--workspace"}},
		"an MCP tool":                     {hookEvent(t, "mcp__fs__read", "/", map[string]any{"uri": "file:///etc/shadow"}), nil, "deny", []string{"--workspace"}},
		"a tool no one knows":             {hookEvent(t, "Frobnicate", "/", map[string]any{}), nil, "deny", []string{"--workspace"}},
		"a read inside the cwd":           {payload(t, "read_inside.json"), nil, "deny", []string{"CLAUDE_PROJECT_DIR"}},
		"a sub-agent's read":              {payload(t, "subagent_read.json"), nil, "deny", []string{"CLAUDE_PROJECT_DIR"}},
		// Tools that name no file are still decided by the policy.
		"TodoWrite from cwd /": {hookEvent(t, "TodoWrite", "/", map[string]any{"todos": []any{map[string]any{"content": "/etc/passwd", "status": "pending"}}}), nil, "allow", []string{"plan.update"}},
		"Task from cwd /":      {hookEvent(t, "Task", "/", map[string]any{"prompt": "read /etc/passwd", "description": "x"}), nil, "allow", []string{"task.spawn"}},
		// With a workspace the calls are judged against it, not the cwd.
		"--workspace, Read /etc/passwd from cwd /": {hookEvent(t, "Read", "/", map[string]any{"file_path": "/etc/passwd"}), []string{"--workspace", "/home/dev/proj"}, "deny", []string{"OUTSIDE_WORKSPACE"}},
		"--workspace, a relative path from cwd /":  {hookEvent(t, "Read", "/", map[string]any{"file_path": "etc/passwd"}), []string{"--workspace", "/home/dev/proj"}, "deny", []string{"OUTSIDE_WORKSPACE"}},
		"--workspace, a read inside":               {payload(t, "read_inside.json"), []string{"--workspace", "/home/dev/proj"}, "allow", []string{"fs.read"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := runHook(t, tc.stdin, append([]string{"--local"}, tc.args...)...).HookSpecificOutput
			if got.PermissionDecision != tc.want {
				t.Fatalf("%s (%s), want %s", got.PermissionDecision, got.PermissionDecisionReason, tc.want)
			}
			for _, w := range tc.why {
				if !strings.Contains(got.PermissionDecisionReason, w) {
					t.Fatalf("the reason %q does not say %q", got.PermissionDecisionReason, w)
				}
			}
		})
	}
	t.Run("CLAUDE_PROJECT_DIR sets it", func(t *testing.T) {
		t.Setenv("CLAUDE_PROJECT_DIR", "/home/dev/proj")
		if got := runHook(t, payload(t, "read_inside.json"), "--local").HookSpecificOutput; got.PermissionDecision != "allow" {
			t.Fatalf("%+v", got)
		}
		if got := runHook(t, hookEvent(t, "Read", "/", map[string]any{"file_path": "/etc/passwd"}), "--local").HookSpecificOutput; got.PermissionDecision != "deny" || !strings.Contains(got.PermissionDecisionReason, "OUTSIDE_WORKSPACE") {
			t.Fatalf("%+v", got)
		}
	})
}

// A server keeps the session's first cwd as its workspace: a later cwd of
// / reads nothing outside it.
func TestClaudeCodeHookServerKeepsTheFirstCwd(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	srv, _ := pdpTestServer(t)
	if got := runHook(t, hookEvent(t, "Read", "/home/dev/proj", map[string]any{"file_path": "/home/dev/proj/go.mod"}), "--url", srv.URL).HookSpecificOutput; got.PermissionDecision != "allow" {
		t.Fatalf("the first read: %+v", got)
	}
	for _, path := range []string{"/etc/passwd", "etc/passwd"} {
		got := runHook(t, hookEvent(t, "Read", "/", map[string]any{"file_path": path}), "--url", srv.URL).HookSpecificOutput
		if got.PermissionDecision != "deny" || !strings.Contains(got.PermissionDecisionReason, "OUTSIDE_WORKSPACE") {
			t.Fatalf("%s from cwd /: %+v", path, got)
		}
	}
}

// completeAnswer is a well-formed answer of POST /v1/decide with changes
// applied: a nil value removes the field.
func completeAnswer(t *testing.T, changes map[string]any) string {
	t.Helper()
	a := map[string]any{
		"decision_id": "01JD0000000000000000000000", "decision": "allow", "need_approval": false,
		"source": "level", "rule": "fs.read", "reason": "Reading is allowed at READ_ONLY.",
		"capability": "fs.read", "fingerprint": nil, "grantable": false, "danger": nil, "revision": "r1",
	}
	for k, v := range changes {
		if v == nil {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestClaudeCodeHookWantsACompleteDecision(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	complete := completeAnswer(t, nil)
	cases := map[string]struct {
		body, want string
	}{
		"complete allow": {complete, "allow"},
		"complete ask":   {completeAnswer(t, map[string]any{"decision": "ask", "need_approval": true}), "ask"},
		"with a danger verdict and a field the API may add later": {
			completeAnswer(t, map[string]any{"danger": map[string]any{"verdict": "SAFE", "by": "llm"}, "trace": []any{}}), "allow"},

		"a bare allow":                  {`{"decision":"allow"}`, "deny"},
		"no revision":                   {completeAnswer(t, map[string]any{"revision": nil}), "deny"},
		"no danger":                     {completeAnswer(t, map[string]any{"danger": nil}), "deny"},
		"an empty decision_id":          {completeAnswer(t, map[string]any{"decision_id": ""}), "deny"},
		"grantable as a string":         {completeAnswer(t, map[string]any{"grantable": "false"}), "deny"},
		"need_approval as a number":     {completeAnswer(t, map[string]any{"need_approval": 0}), "deny"},
		"capability as a number":        {completeAnswer(t, map[string]any{"capability": 7}), "deny"},
		"danger as a string":            {completeAnswer(t, map[string]any{"danger": "SAFE"}), "deny"},
		"danger without its verdict":    {completeAnswer(t, map[string]any{"danger": map[string]any{"by": "llm"}}), "deny"},
		"an allow that needs approval":  {completeAnswer(t, map[string]any{"need_approval": true}), "deny"},
		"an ask that needs no approval": {completeAnswer(t, map[string]any{"decision": "ask"}), "deny"},
		"ALLOW":                         {completeAnswer(t, map[string]any{"decision": "ALLOW"}), "deny"},
		"garbage after the object":      {complete + ` {"decision":"deny"}`, "deny"},
		"text after the object":         {complete + "garbage", "deny"},
		"decision twice":                {strings.Replace(complete, `"decision":"allow"`, `"decision":"deny","decision":"allow"`, 1), "deny"},
		"a field in another case":       {strings.Replace(complete, `{`, `{"Need_Approval":true,`, 1), "deny"},
		"an array":                      {`[` + complete + `]`, "deny"},
		"null":                          {`null`, "deny"},
		"nothing":                       {``, "deny"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/decide" {
					http.Error(w, "only decide here", http.StatusNotFound)
					return
				}
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			got := runHook(t, payload(t, "read_inside.json"), "--url", srv.URL).HookSpecificOutput
			if got.PermissionDecision != tc.want {
				t.Fatalf("%s (%s), want %s", got.PermissionDecision, got.PermissionDecisionReason, tc.want)
			}
			if tc.want == "deny" && !strings.Contains(got.PermissionDecisionReason, "not a complete decision") {
				t.Fatalf("the reason does not say why: %s", got.PermissionDecisionReason)
			}
		})
	}
}
