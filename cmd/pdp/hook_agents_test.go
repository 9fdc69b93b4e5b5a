package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// agentEvent is an event of an agent's golden files. Their shell events
// run "git status" and "cat README.md", which the policy judges reads by
// their effects; these tests need shell calls that ask, so the commands
// are "make check" and "make docs".
func agentEvent(t *testing.T, agent, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "frontends", "hooks", agent, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("git status", "make check", "cat README.md", "make docs").Replace(string(raw))
}

// hookRun is what a command hook did: what the agent reads.
type hookRun struct {
	stdout, stderr string
	exit           int
}

// runAgentHook runs `pdp hook <agent>` as the agent does: a child process
// of the pdp binary, the event on stdin.
func runAgentHook(t *testing.T, agent, stdin string, args ...string) hookRun {
	t.Helper()
	cmd := pdpProcess(append([]string{"hook", agent, "--config", repoConfig}, args...), "CLAUDE_PROJECT_DIR=", "GEMINI_PROJECT_DIR=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	r := hookRun{out.String(), errOut.String(), 0}
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// seenBy is the decision an agent takes from what its hook did, by the
// agent's own rules; "runs anyway" is any answer the agent does not read
// as a decision, which each of them treats as a hook failure and runs
// the tool.
var seenBy = map[string]func(hookRun) (decision, reason string){
	// Codex: exit 2 with a reason on stderr blocks; exit 0 with nothing
	// on stdout runs the tool.
	"codex": func(r hookRun) (string, string) {
		switch {
		case r.exit == 2 && strings.TrimSpace(r.stderr) != "":
			return "deny", r.stderr
		case r.exit == 0 && strings.TrimSpace(r.stdout) == "":
			return "allow", ""
		}
		return "runs anyway", r.stdout + r.stderr
	},
	// Gemini CLI: exit 0 and a top-level decision.
	"gemini-cli": func(r hookRun) (string, string) {
		var out struct{ Decision, Reason string }
		if r.exit != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || (out.Decision != "allow" && out.Decision != "deny" && out.Decision != "ask") {
			return "runs anyway", r.stdout + r.stderr
		}
		return out.Decision, out.Reason
	},
	// Cursor: exit 0 and a permission.
	"cursor": func(r hookRun) (string, string) {
		var out struct {
			Permission   string `json:"permission"`
			AgentMessage string `json:"agent_message"`
		}
		if r.exit != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || (out.Permission != "allow" && out.Permission != "deny" && out.Permission != "ask") {
			return "runs anyway", r.stdout + r.stderr
		}
		return out.Permission, out.AgentMessage
	},
}

type agentCase struct {
	agent, event string
	args         []string
	want         string
	says         []string
}

func (tc agentCase) check(t *testing.T) {
	t.Helper()
	r := runAgentHook(t, tc.agent, tc.event, tc.args...)
	got, why := seenBy[tc.agent](r)
	if got != tc.want {
		t.Fatalf("%s sees %s (%s), want %s", tc.agent, got, why, tc.want)
	}
	for _, s := range tc.says {
		if !strings.Contains(why, s) {
			t.Fatalf("the reason %q does not say %q", why, s)
		}
	}
}

// Each agent's command hook against a real server, as the agent reads
// it: allow, deny, ask (where the agent has one; Codex's is a deny that
// says where to answer), malformed input and a server that is down.
func TestAgentCommandHooks(t *testing.T) {
	srv, _ := pdpTestServer(t)
	person := client.New(srv.URL)
	// A Codex session at READ_WRITE, so an edit inside is allowed.
	writer := strings.Replace(agentEvent(t, "codex", "pre_apply_patch.json"), "019a3c5e-7b2d-7f31-9a4e-2c8d5f1b6e90", "019a3c5e-0000-7000-8000-000000000001", 1)
	if _, err := person.Sessions().Create(context.Background(), client.Session{ID: "codex:019a3c5e-0000-7000-8000-000000000001", Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
		t.Fatal(err)
	}
	url := []string{"--url", srv.URL}
	down := []string{"--url", "http://127.0.0.1:1", "--timeout", "2s"}
	cursorRead := strings.Replace(agentEvent(t, "cursor", "before_read_file.json"), "/home/dev/proj/.env", "/home/dev/proj/go.mod", 1)
	cases := map[string]agentCase{
		"codex allow":           {"codex", writer, url, "allow", nil},
		"codex deny":            {"codex", agentEvent(t, "codex", "pre_mcp.json"), url, "deny", []string{"DANGEROUS_NO_RULE"}},
		"codex ask is a deny":   {"codex", agentEvent(t, "codex", "pre_bash.json"), url, "deny", []string{"pdp answer", srv.URL + "/ui/"}},
		"codex sub-agent ask":   {"codex", agentEvent(t, "codex", "pre_subagent_bash.json"), url, "deny", []string{"pdp answer"}},
		"codex malformed":       {"codex", `{"hook_event_name":"PreToolUse"`, url, "deny", []string{"could not decide"}},
		"codex server down":     {"codex", agentEvent(t, "codex", "pre_bash.json"), down, "deny", []string{"could not decide"}},
		"gemini allow":          {"gemini-cli", agentEvent(t, "geminicli", "before_read_file.json"), url, "allow", nil},
		"gemini deny":           {"gemini-cli", agentEvent(t, "geminicli", "before_read_outside.json"), url, "deny", []string{"OUTSIDE_WORKSPACE"}},
		"gemini ask":            {"gemini-cli", agentEvent(t, "geminicli", "before_shell.json"), url, "ask", []string{"shell.exec"}},
		"gemini MCP":            {"gemini-cli", agentEvent(t, "geminicli", "before_mcp.json"), url, "deny", []string{"mcp.github.create_issue"}},
		"gemini malformed":      {"gemini-cli", `not json`, url, "deny", []string{"could not decide"}},
		"gemini server down":    {"gemini-cli", agentEvent(t, "geminicli", "before_read_file.json"), down, "deny", []string{"could not decide"}},
		"cursor allow":          {"cursor", cursorRead, url, "allow", nil},
		"cursor deny":           {"cursor", agentEvent(t, "cursor", "before_read_file.json"), url, "deny", []string{".env"}},
		"cursor ask":            {"cursor", agentEvent(t, "cursor", "before_shell.json"), url, "ask", []string{"shell.exec"}},
		"cursor preToolUse ask": {"cursor", agentEvent(t, "cursor", "pre_tool_write.json"), url, "ask", []string{"fs.write"}},
		"cursor malformed":      {"cursor", `{"hook_event_name":"stop","conversation_id":"c"}`, url, "deny", []string{"could not decide"}},
		"cursor server down":    {"cursor", cursorRead, down, "deny", []string{"could not decide"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tc.check(t) })
	}
}

// Codex's PermissionRequest gets Codex's own answer, with its event name.
func TestCodexPermissionRequestIsAnsweredFromTheDecision(t *testing.T) {
	srv, _ := pdpTestServer(t)
	r := runAgentHook(t, "codex", agentEvent(t, "codex", "permission_request_bash.json"), "--url", srv.URL)
	var out struct {
		HookSpecificOutput struct {
			HookEventName string
			Decision      struct{ Behavior, Message string }
		} `json:"hookSpecificOutput"`
	}
	if r.exit != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
		t.Fatalf("%+v", r)
	}
	// make check asks at READ_ONLY: Codex cannot ask, so it is denied.
	if h := out.HookSpecificOutput; h.HookEventName != "PermissionRequest" || h.Decision.Behavior != "deny" || !strings.Contains(h.Decision.Message, "pdp answer") {
		t.Fatalf("%+v", out)
	}
}

// An ask held with --wait becomes the person's answer.
func TestCodexHookWaitsForAPerson(t *testing.T) {
	srv, _ := pdpTestServer(t)
	person := client.New(srv.URL)
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			page, err := person.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 1})
			if err == nil && len(page.Decisions) == 1 {
				_, err = person.Answer(ctx, page.Decisions[0].DecisionID, client.AllowOnce, "desktop")
				answered <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		answered <- ctx.Err()
	}()
	got, why := seenBy["codex"](runAgentHook(t, "codex", agentEvent(t, "codex", "pre_bash.json"), "--url", srv.URL, "--wait", "15s", "--timeout", "20s"))
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if got != "allow" {
		t.Fatalf("codex sees %s (%s) after a person allowed it", got, why)
	}
}
