package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// shellTool is each agent's shell tool.
var shellTool = map[string]string{"claude-code": "Bash", "codex": "Bash", "gemini-cli": "run_shell_command", "cursor": "Shell"}

// withMembers is an agent's event with more members after its own.
func withMembers(event, members string) string {
	return strings.TrimSuffix(strings.TrimSpace(event), "}") + "," + members + "}"
}

// An agent reads each key of its event exactly; Go's encoding/json takes
// a key in any case, the last of two winning. An event whose keys fold
// together — at the top level or inside the tool input — is refused with
// the agent's own deny, on each agent's endpoint, in a FULL session where
// the call the PDP would otherwise judge is allowed.
func TestHookEventsWithKeysThatFoldTogetherAreDenied(t *testing.T) {
	srv := testserver.New(t)
	person := client.New(srv.URL)
	harmful := map[string]any{"command": "rm -rf /home/dev"}
	for _, agent := range []string{"claude-code", "codex", "gemini-cli", "cursor"} {
		session := "keys-" + strings.ReplaceAll(agent, "-", "")
		if _, err := person.Sessions().Create(context.Background(), client.Session{ID: sessionPrefix[agent] + session, Workspace: "/home/dev/proj", PermissionLevel: "FULL"}); err != nil {
			t.Fatal(err)
		}
		shell := shellTool[agent]
		// What the PDP judges alone: allowed at FULL.
		if status, body := postHook(t, srv.URL, agent, "", hookEvent(t, agent, session, shell, map[string]any{"command": "make check"})); status != http.StatusOK {
			t.Fatalf("%s: %d %s", agent, status, body)
		} else if got, why := seenInBody(t, agent, status, body); got != "allow" {
			t.Fatalf("%s: make check at FULL is %s (%s), want allow", agent, got, why)
		}
		otherEvent := map[string]string{"claude-code": "PostToolUse", "codex": "PostToolUse", "gemini-cli": "AfterTool", "cursor": "beforeReadFile"}[agent]
		cases := map[string]string{
			// The agent runs tool_input's rm; the PDP would judge make check.
			"Tool_Input beside tool_input": withMembers(hookEvent(t, agent, session, shell, harmful), `"Tool_Input":{"command":"make check"}`),
			"tool_input twice":             withMembers(hookEvent(t, agent, session, shell, harmful), `"tool_input":{"command":"make check"}`),
			// The agent runs Bash; the PDP would judge a plan update.
			"Tool_Name beside tool_name": withMembers(hookEvent(t, agent, session, shell, harmful), `"Tool_Name":"TodoWrite"`),
			// The agent waits for a decision; the PDP would take the event
			// for another one.
			"Hook_Event_Name beside hook_event_name": withMembers(hookEvent(t, agent, session, shell, harmful), `"Hook_Event_Name":"`+otherEvent+`"`),
			// Inside the tool input, at any depth.
			"keys in another case in tool_input": hookEvent(t, agent, session, shell, map[string]any{"command": "make check", "Command": "rm -rf /home/dev"}),
			"keys in another case deeper inside": hookEvent(t, agent, session, shell, map[string]any{"command": "make check", "env": map[string]any{"GIT_DIR": "/home/dev/proj/.git", "git_dir": "/etc"}}),
			"a key twice in tool_input":          strings.Replace(hookEvent(t, agent, session, shell, map[string]any{"command": "make check"}), `{"command":"make check"}`, `{"command":"make check","command":"rm -rf /home/dev"}`, 1),
			"a member only in another case":      strings.Replace(hookEvent(t, agent, session, shell, harmful), `"tool_input"`, `"Tool_Input"`, 1),
			// "hoo\u212a_event_name" has the Kelvin sign, which folds to k.
			"a member in a Unicode fold": withMembers(hookEvent(t, agent, session, shell, harmful), `"hoo\u212a_event_name":"`+otherEvent+`"`),
		}
		for name, event := range cases {
			t.Run(agent+"/"+name, func(t *testing.T) {
				status, body := postHook(t, srv.URL, agent, "", event)
				got, why := seenInBody(t, agent, status, body)
				if got != "deny" {
					t.Fatalf("%s reads %s from %d %s, want deny", agent, got, status, body)
				}
				if !strings.Contains(why, "ambiguous") {
					t.Fatalf("the reason %q does not say the event is ambiguous", why)
				}
			})
		}
	}

	// Cursor's beforeMCPExecution sends tool_input as a JSON string: the
	// object in it is read as strictly.
	for name, input := range map[string]string{
		"a key twice":          `{\"repo\":\"scratch\",\"repo\":\"production-db\"}`,
		"keys in another case": `{\"repo\":\"scratch\",\"Repo\":\"production-db\"}`,
	} {
		event := `{"conversation_id":"keys-cursor","generation_id":"g","workspace_roots":["/home/dev/proj"],"hook_event_name":"beforeMCPExecution","tool_name":"delete_repo","tool_input":"` + input + `","cwd":"/home/dev/proj"}`
		status, body := postHook(t, srv.URL, "cursor", "", event)
		if got, why := seenInBody(t, "cursor", status, body); got != "deny" || !strings.Contains(why, "ambiguous") {
			t.Fatalf("cursor MCP input with %s: %s (%s), want a deny saying the event is ambiguous", name, got, why)
		}
	}

	// A PermissionRequest is refused in PermissionRequest's shape.
	for _, agent := range []string{"claude-code", "codex"} {
		event := strings.Replace(withMembers(hookEvent(t, agent, "keys-perm", "Bash", harmful), `"Tool_Input":{"command":"make check"}`), `"PreToolUse"`, `"PermissionRequest"`, 1)
		status, body := postHook(t, srv.URL, agent, "", event)
		var out struct {
			HookSpecificOutput struct {
				HookEventName string `json:"hookEventName"`
				Decision      struct{ Behavior, Message string }
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || status != http.StatusOK ||
			out.HookSpecificOutput.HookEventName != "PermissionRequest" || out.HookSpecificOutput.Decision.Behavior != "deny" ||
			!strings.Contains(out.HookSpecificOutput.Decision.Message, "ambiguous") {
			t.Fatalf("%s: a PermissionRequest with Tool_Input is answered %d %s", agent, status, body)
		}
	}
}
