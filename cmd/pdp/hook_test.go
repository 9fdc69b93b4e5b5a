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

	"github.com/toolperm/pdp/adapters/httpapi"
	"github.com/toolperm/pdp/adapters/sqlite"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

const payloads = "../../adapters/claudecode/testdata"

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
	cmd.SetArgs(append([]string{"hook", "claude-code", "--config", filepath.Join("..", "..", "config.yaml")}, args...))
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

func pdpTestServer(t *testing.T) (*httptest.Server, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	policy, err := pdp.LoadFS(ctx, policies.FS, "builtin")
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Engine: pdp.New(policy, pdp.Components{Audit: store}), Store: store}))
	t.Cleanup(func() { srv.Close(); store.Close() })
	return srv, store
}

var hookCases = map[string]string{
	"bash_compound.json":      "ask",
	"bash_git_status.json":    "ask",
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
		"another event":       {strings.Replace(payload(t, "read_inside.json"), "PreToolUse", "PostToolUse", 1), []string{"--local"}},
		"broken local policy": {payload(t, "read_inside.json"), []string{"--local", "--policies", t.TempDir()}},
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
	got := runHook(t, payload(t, "bash_git_status.json"), "--url", srv.URL, "--wait", "10s", "--timeout", "15s").HookSpecificOutput
	if got.PermissionDecision != "allow" || !strings.Contains(got.PermissionDecisionReason, "allowed by a person") {
		t.Fatalf("%+v", got)
	}
}

func TestClaudeCodeHookAnswersOnlyKnownApprovals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask","source":"level","rule":"shell.exec","reason":"asks"}`))
			return
		}
		_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask","answer":{"answer":"sure, why not","channel":"x"}}`))
	}))
	defer srv.Close()
	got := runHook(t, payload(t, "bash_git_status.json"), "--url", srv.URL, "--wait", "1s").HookSpecificOutput
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
