package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
)

// hookEvent is one agent's PreToolUse-like event for a tool call in a
// session of the agent, as the agent writes it.
func hookEvent(t *testing.T, agent, session, tool string, input any) string {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	switch agent {
	case "claude-code":
		return fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/proj","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":%q,"tool_input":%s,"tool_use_id":"toolu_rt"}`, session, tool, in)
	case "codex":
		return fmt.Sprintf(`{"session_id":%q,"turn_id":"1","cwd":"/home/dev/proj","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":%q,"tool_input":%s,"tool_use_id":"call_rt"}`, session, tool, in)
	case "gemini-cli":
		return fmt.Sprintf(`{"session_id":%q,"cwd":"/home/dev/proj","hook_event_name":"BeforeTool","tool_name":%q,"tool_input":%s}`, session, tool, in)
	case "cursor":
		return fmt.Sprintf(`{"conversation_id":%q,"generation_id":"g","workspace_roots":["/home/dev/proj"],"hook_event_name":"preToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"t","cwd":"/home/dev/proj"}`, session, tool, in)
	}
	t.Fatalf("no event for %s", agent)
	return ""
}

var sessionPrefix = map[string]string{"claude-code": "cc:", "codex": "codex:", "gemini-cli": "gemini:", "cursor": "cursor:"}

// Tool inputs a model may choose and tool names a runtime may send,
// through each agent's hook endpoint in a READ_WRITE session of the
// workspace /home/dev/proj, read as the agent reads the answer. None of
// them may come back allow; each is the decision the policy gives.
func TestHookInputsThatTryToSlipPastThePolicy(t *testing.T) {
	srv := testserver.New(t)
	person := client.New(srv.URL)
	patch := func(lines ...string) string {
		return "*** Begin Patch\n" + strings.Join(lines, "\n") + "\n*** End Patch\n"
	}
	probes := []struct {
		name, agent, tool string
		input             any
		want, says        string
	}{
		{"codex exec_command with cmd as an array", "codex", "exec_command", map[string]any{"cmd": []any{"bash", "-lc", "rm -rf /home/dev"}}, "deny", "args.cmd must be a string"},
		{"codex Bash with command as an array", "codex", "Bash", map[string]any{"command": []any{"rm", "-rf", "/home/dev"}}, "deny", "must be a string"},
		{"codex shell with argv", "codex", "shell", map[string]any{"argv": []any{"rm", "-rf", "/home/dev"}}, "deny", "pdp answer"},
		{"codex shell with command as an array", "codex", "shell", map[string]any{"command": []any{"bash", "-lc", "rm -rf /home/dev"}}, "deny", "must be a string"},
		{"codex shell with an undeclared command", "codex", "shell", map[string]any{"command": "rm -rf /home/dev"}, "deny", "OUTSIDE_WORKSPACE"},
		{"codex apply_patch adding an absolute path", "codex", "apply_patch", map[string]any{"command": patch("*** Add File: /etc/cron.d/x", "+x")}, "deny", "OUTSIDE_WORKSPACE"},
		{"codex apply_patch adding through ..", "codex", "apply_patch", map[string]any{"command": patch("*** Add File: ../../../etc/cron.d/x", "+x")}, "deny", "OUTSIDE_WORKSPACE"},
		{"codex apply_patch moving outside", "codex", "apply_patch", map[string]any{"command": patch("*** Update File: src/a.go", "*** Move to: /etc/x", "@@", "-a", "+b")}, "deny", "OUTSIDE_WORKSPACE"},
		{"codex apply_patch with padded, CRLF markers", "codex", "apply_patch", map[string]any{"command": "*** Begin Patch\r\n   *** Add File:   /etc/x  \r\n+x\r\n*** End Patch\r\n"}, "deny", "OUTSIDE_WORKSPACE"},
		{"codex apply_patch with a harmless command beside a harmful input", "codex", "apply_patch", map[string]any{"command": patch("*** Add File: src/ok.go", "+x"), "input": patch("*** Add File: /etc/x", "+x")}, "deny", "OUTSIDE_WORKSPACE"},
		{"cursor Delete of an absolute path", "cursor", "Delete", map[string]any{"path": "/etc/passwd"}, "deny", "OUTSIDE_WORKSPACE"},
		{"cursor Delete through ..", "cursor", "Delete", map[string]any{"target_file": "../../../etc/passwd"}, "deny", "OUTSIDE_WORKSPACE"},
		{"cursor Delete with a second path key", "cursor", "Delete", map[string]any{"file_path": "/home/dev/proj/a", "path": "/etc/passwd"}, "deny", "OUTSIDE_WORKSPACE"},
		{"cursor Delete with an undeclared list", "cursor", "Delete", map[string]any{"paths": []any{"/etc/passwd"}}, "deny", "OUTSIDE_WORKSPACE"},
		{"cursor Write with a key in another case", "cursor", "Write", map[string]any{"file_path": "/home/dev/proj/a", "File_Path": "/etc/passwd"}, "deny", "differ only in case"},
		{"claude-code Write with a key in another case", "claude-code", "Write", map[string]any{"file_path": "/home/dev/proj/a", "File_Path": "/etc/passwd"}, "deny", "differ only in case"},
		{"gemini-cli replace outside", "gemini-cli", "replace", map[string]any{"file_path": "/etc/passwd"}, "deny", "OUTSIDE_WORKSPACE"},
		{"gemini-cli read_many_files outside", "gemini-cli", "read_many_files", map[string]any{"paths": []any{"/etc/shadow"}}, "deny", "OUTSIDE_WORKSPACE"},
		// Another agent's catalogue entry is not a tool of this one: it
		// would judge "command" as a patch, and a command as no file.
		{"claude-code naming Codex's apply_patch", "claude-code", "codex/apply_patch", map[string]any{"command": "rm -rf /home/dev"}, "deny", "UNKNOWN_TOOL"},
		{"gemini-cli naming Codex's apply_patch", "gemini-cli", "codex/apply_patch", map[string]any{"command": "rm -rf /home/dev"}, "deny", "UNKNOWN_TOOL"},
		{"claude-code naming Cursor's Delete", "claude-code", "cursor/Delete", map[string]any{"file_path": "/home/dev/proj/a"}, "deny", "UNKNOWN_TOOL"},
		{"codex naming its own entry by its key", "codex", "codex/apply_patch", map[string]any{"command": "rm -rf /home/dev"}, "deny", "UNKNOWN_TOOL"},
	}
	for i, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			sid := fmt.Sprintf("rt-%d", i)
			if _, err := person.Sessions().Create(context.Background(), client.Session{ID: sessionPrefix[p.agent] + sid, Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
				t.Fatal(err)
			}
			status, body := postHook(t, srv.URL, p.agent, "", hookEvent(t, p.agent, sid, p.tool, p.input))
			got, why := seenInBody(t, p.agent, status, body)
			if got != p.want || !strings.Contains(why, p.says) {
				t.Fatalf("%s reads %s (%s), want %s saying %q", p.agent, got, why, p.want, p.says)
			}
		})
	}
}

// Through POST /v1/decide too, with or without a runtime: a tool named
// "<agent>/<tool>" is unknown, whatever runtime.agent says.
func TestDecideToolNamedByAnotherAgentsKeyIsUnknown(t *testing.T) {
	srv := testserver.New(t)
	c := client.New(srv.URL)
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "rt-decide", Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
		t.Fatal(err)
	}
	for _, rt := range []*client.Runtime{nil, {Agent: "claude-code"}, {Agent: "codex"}} {
		d, err := c.Decide(context.Background(), client.DecideRequest{SessionID: "rt-decide", Tool: "codex/apply_patch", Args: map[string]any{"command": "rm -rf /home/dev"}, Cwd: "/home/dev/proj", Runtime: rt}, false)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != client.Deny || d.Rule != "UNKNOWN_TOOL" {
			t.Fatalf("runtime %+v: %s by %s (%s)", rt, d.Decision, d.Rule, d.Reason)
		}
	}
}

// A dispatcher's hook event in a session another dispatcher owns — its
// main session, or a sub-agent under it — is a deny, and changes
// nothing there.
func TestHookEventInAnotherDispatchersSessionIsADeny(t *testing.T) {
	srv := testserver.New(t, testserver.Tokens(
		testserver.Token("alice", "a-secret", httpapi.Dispatcher), testserver.Token("bob", "b-secret", httpapi.Dispatcher),
		testserver.Token("desk", "u-secret", httpapi.User)))
	read := hookEvent(t, "claude-code", "alices", "Read", map[string]any{"file_path": "/home/dev/proj/go.mod"})
	if status, body := postHook(t, srv.URL, "claude-code", "a-secret", read); status != http.StatusOK {
		t.Fatalf("alice: %d %s", status, body)
	}
	sub := strings.Replace(read, `"tool_name"`, `"agent_id":"bobs-agent","tool_name"`, 1)
	for name, event := range map[string]string{"main session": read, "a sub-agent under it": sub} {
		t.Run(name, func(t *testing.T) {
			status, body := postHook(t, srv.URL, "claude-code", "b-secret", event)
			if got, why := seenInBody(t, "claude-code", status, body); got != "deny" || !strings.Contains(why, "another dispatcher") {
				t.Fatalf("bob reads %s (%s)", got, why)
			}
		})
	}
	if _, err := client.New(srv.URL, client.WithToken("u-secret")).Sessions().Get(context.Background(), "cc:alices:agent:bobs-agent"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("bob's sub-agent session under alice's: %v", err)
	}
}

// The agent's own permission mode is a fact for the policy: no mode
// loosens the shipped policy, through any agent's endpoint.
func TestHookPermissionModeNeverLoosensTheShippedPolicy(t *testing.T) {
	srv := testserver.New(t)
	for _, agent := range []string{"claude-code", "codex"} {
		for _, mode := range []string{"bypassPermissions", "acceptEdits", "dontAsk", "yolo", "full-auto", "never"} {
			t.Run(agent+"/"+mode, func(t *testing.T) {
				event := hookEvent(t, agent, "mode-"+mode, "Bash", map[string]any{"command": "make check"})
				event = strings.Replace(event, `"permission_mode":"default"`, fmt.Sprintf(`"permission_mode":%q`, mode), 1)
				status, body := postHook(t, srv.URL, agent, "", event)
				if got, why := seenInBody(t, agent, status, body); got == "allow" {
					t.Fatalf("%s in %s: allow (%s)", agent, mode, why)
				}
			})
		}
	}
}

// A Claude Code PermissionRequest whose tool_input does not decode is
// not answered as a call without arguments (a Write of no file, allowed
// at READ_WRITE): it is refused, and never allowed.
func TestHookPermissionRequestWithAnUndecodableInputIsNotAllowed(t *testing.T) {
	srv := testserver.New(t)
	if _, err := client.New(srv.URL).Sessions().Create(context.Background(), client.Session{ID: "cc:pr", Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{`["/etc/passwd"]`, `"/etc/passwd"`, `7`} {
		event := `{"session_id":"pr","cwd":"/home/dev/proj","hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":` + input + `}`
		status, body := postHook(t, srv.URL, "claude-code", "", event)
		if status != http.StatusOK || strings.Contains(body, `"allow"`) || !strings.Contains(body, "deny") {
			t.Fatalf("tool_input %s: %d %s", input, status, body)
		}
	}
}

// runtime.agent picks an agent's own catalogue entry; naming another
// agent does not make a path the shared entry judges go unjudged. In a
// FULL session (where inside the workspace is allowed), each spoof with
// an outside path in an argument the chosen entry does not declare is
// still denied as outside the workspace.
func TestDecideRuntimeAgentSpoofingHidesNoPath(t *testing.T) {
	srv := testserver.New(t)
	c := client.New(srv.URL)
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "rt-spoof", Workspace: "/home/dev/proj", PermissionLevel: "FULL"}); err != nil {
		t.Fatal(err)
	}
	probes := []struct {
		agent, tool string
		args        map[string]any
	}{
		{"gemini-cli", "read_file", map[string]any{"path": "/etc/shadow"}},
		{"gemini-cli", "write_file", map[string]any{"path": "/etc/cron.d/x"}},
		{"gemini-cli", "glob", map[string]any{"pattern": "/etc/**"}},
		{"gemini-cli", "grep_search", map[string]any{"pattern": "x", "path": "/etc"}},
		{"gemini-cli", "replace", map[string]any{"path": "/etc/passwd"}},
		{"cursor", "Read", map[string]any{"notebook_path": "/etc/shadow"}},
		{"cursor", "Glob", map[string]any{"pattern": "/etc/**", "path": "/etc"}},
		{"cursor", "Grep", map[string]any{"pattern": "x", "path": "/etc"}},
		{"cursor", "LS", map[string]any{"dir_path": "/etc"}},
		{"cursor", "Shell", map[string]any{"command": "ls", "workdir": "/etc"}},
		{"codex", "shell", map[string]any{"argv": []any{"ls"}, "cwd": "/etc"}},
		{"codex", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: /etc/x\n+x\n*** End Patch\n"}},
	}
	for _, p := range probes {
		d, err := c.Decide(context.Background(), client.DecideRequest{SessionID: "rt-spoof", Tool: p.tool, Args: p.args, Cwd: "/home/dev/proj", Runtime: &client.Runtime{Agent: p.agent}}, false)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != client.Deny || d.Rule != "OUTSIDE_WORKSPACE" {
			t.Errorf("runtime %s, %s %v: %s by %s (%s)", p.agent, p.tool, p.args, d.Decision, d.Rule, d.Reason)
		}
	}
}

// A key twice in tool_input is refused, never judged: JavaScript's
// JSON.parse keeps the last, but a parser that keeps the first (or fails)
// would have the tool write where the PDP did not look.
func TestHookDuplicateKeyIsDenied(t *testing.T) {
	srv := testserver.New(t)
	if _, err := client.New(srv.URL).Sessions().Create(context.Background(), client.Session{ID: "cc:dup", Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
		t.Fatal(err)
	}
	event := `{"session_id":"dup","cwd":"/home/dev/proj","hook_event_name":"PreToolUse","tool_name":"Write",` +
		`"tool_input":{"file_path":"/home/dev/proj/a","file_path":"/etc/passwd"},"tool_use_id":"t"}`
	status, body := postHook(t, srv.URL, "claude-code", "", event)
	if got, why := seenInBody(t, "claude-code", status, body); got != "deny" || !strings.Contains(why, `"file_path" appears twice`) {
		t.Fatalf("claude-code reads %s (%s)", got, why)
	}
}
