package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
)

// seenByClaudeCode is the decision Claude Code takes from its command
// hook: exit 0 and PreToolUse's permissionDecision.
func seenByClaudeCode(r hookRun) (string, string) {
	var out hookAnswer
	h := &out.HookSpecificOutput
	if r.exit != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || h.HookEventName != "PreToolUse" || h.PermissionDecision == "" {
		return "runs anyway", r.stdout + r.stderr
	}
	return h.PermissionDecision, h.PermissionDecisionReason
}

// The command hooks read the same events as the hook endpoint, and
// refuse the same ones: an event with "Tool_Input" beside "tool_input"
// (the agent runs the one, Go's decoder would judge the other) is each
// agent's deny, in a FULL session where the other call is allowed, and
// without a server (--local) too.
func TestCommandHooksDenyEventsWithKeysThatFoldTogether(t *testing.T) {
	srv, _ := pdpTestServer(t)
	person := client.New(srv.URL)
	events := map[string]func(session, input string) string{
		"claude-code": func(s, in string) string {
			return fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/proj","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":%s,"tool_use_id":"toolu_k"}`, s, in)
		},
		"codex": func(s, in string) string {
			return fmt.Sprintf(`{"session_id":%q,"turn_id":"1","cwd":"/home/dev/proj","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":%s,"tool_use_id":"call_k"}`, s, in)
		},
		"gemini-cli": func(s, in string) string {
			return fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/proj","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":%s}`, s, in)
		},
		"cursor": func(s, in string) string {
			return fmt.Sprintf(`{"conversation_id":%q,"generation_id":"g","workspace_roots":["/home/dev/proj"],"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":%s,"tool_use_id":"t","cwd":"/home/dev/proj"}`, s, in)
		},
	}
	prefix := map[string]string{"claude-code": "cc:", "codex": "codex:", "gemini-cli": "gemini:", "cursor": "cursor:"}
	seen := func(agent string, r hookRun) (string, string) {
		if agent == "claude-code" {
			return seenByClaudeCode(r)
		}
		return seenBy[agent](r)
	}
	url := []string{"--url", srv.URL}
	for agent, event := range events {
		t.Run(agent, func(t *testing.T) {
			if _, err := person.Sessions().Create(context.Background(), client.Session{ID: prefix[agent] + "keys", Workspace: "/home/dev/proj", PermissionLevel: "FULL"}); err != nil {
				t.Fatal(err)
			}
			if got, why := seen(agent, runAgentHook(t, agent, event("keys", `{"command":"make check"}`), url...)); got != "allow" {
				t.Fatalf("make check at FULL: %s (%s), want allow", got, why)
			}
			ambiguous := strings.TrimSuffix(event("keys", `{"command":"rm -rf /home/dev"}`), "}") + `,"Tool_Input":{"command":"make check"}}`
			for _, args := range [][]string{url, {"--local", "--workspace", "/home/dev/proj"}} {
				got, why := seen(agent, runAgentHook(t, agent, ambiguous, args...))
				if got != "deny" || !strings.Contains(why, "ambiguous") {
					t.Fatalf("%v: %s (%s), want a deny saying the event is ambiguous", args, got, why)
				}
			}
		})
	}
}
