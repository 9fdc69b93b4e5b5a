package main

import (
	"strings"
	"testing"
)

// `pdp hook cursor` takes the workspace from workspace_roots or
// --workspace, never from the event's cwd: an event without either is
// denied, saying how to give one, against a server and with --local.
func TestCursorHookWithoutWorkspaceRoots(t *testing.T) {
	srv, _ := pdpTestServer(t)
	event := `{"conversation_id":"roots-cmd","generation_id":"g","hook_event_name":"beforeShellExecution","command":"cat /etc/passwd","cwd":"/"}`
	for _, args := range [][]string{{"--url", srv.URL}, {"--local"}} {
		got, why := seenBy["cursor"](runAgentHook(t, "cursor", event, args...))
		if got != "deny" || !strings.Contains(why, "workspace_roots") || !strings.Contains(why, "--workspace") {
			t.Fatalf("%v: %s (%s), want a deny saying how to give a workspace", args, got, why)
		}
	}
	// --workspace gives one: the call is decided there (outside it, / is
	// not the workspace).
	got, why := seenBy["cursor"](runAgentHook(t, "cursor", event, "--url", srv.URL, "--workspace", "/home/dev/proj"))
	if got == "allow" || strings.Contains(why, "workspace_roots") {
		t.Fatalf("with --workspace: %s (%s), want the PDP's decision", got, why)
	}
}
