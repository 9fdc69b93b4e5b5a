package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// cursorEvent is a Cursor event of conversation c with roots as its
// workspace_roots member ("" for none) and more members.
func cursorEvent(c, roots, members string) string {
	if roots != "" {
		roots = `"workspace_roots":` + roots + `,`
	}
	return fmt.Sprintf(`{"conversation_id":%q,"generation_id":"g","model":"m","cursor_version":"2.1.26",%s%s}`, c, roots, members)
}

// Cursor's workspace is its workspace_roots, never a cwd: a first
// beforeShellExecution in / does not make / the session's workspace.
// An event without workspace_roots (absent or empty) is denied, saying
// how to give one, and creates no session; the conversation's first event
// with them makes its session with the first root as the workspace, even
// when its cwd is /.
func TestCursorWorkspaceIsItsWorkspaceRoots(t *testing.T) {
	srv := testserver.New(t)
	person := client.New(srv.URL)
	shell := `"hook_event_name":"beforeShellExecution","command":"cat /etc/passwd","cwd":"/"`
	read := `"hook_event_name":"beforeReadFile","file_path":"/etc/passwd","content":"root:x:0:0"`
	write := `"hook_event_name":"preToolUse","tool_name":"Write","tool_input":{"file_path":"/etc/cron.d/x","contents":"x"},"tool_use_id":"t","cwd":"/"`
	for _, roots := range []string{"", "[]"} {
		for name, members := range map[string]string{"shell": shell, "read": read, "write": write} {
			status, body := postHook(t, srv.URL, "cursor", "", cursorEvent("no-roots", roots, members))
			got, why := seenInBody(t, "cursor", status, body)
			if got != "deny" || !strings.Contains(why, "workspace_roots") || !strings.Contains(why, "folder") {
				t.Fatalf("%s with workspace_roots %q: %s (%s), want a deny saying how to give a workspace", name, roots, got, why)
			}
		}
	}
	if s, err := person.Sessions().Get(context.Background(), "cursor:no-roots"); err == nil {
		t.Fatalf("an event without workspace_roots made a session: %+v", s)
	}

	// With workspace_roots, after those refusals: the root is the
	// workspace, and / is outside it.
	status, body := postHook(t, srv.URL, "cursor", "", cursorEvent("no-roots", `["/home/dev/proj"]`, shell))
	if got, why := seenInBody(t, "cursor", status, body); got == "allow" {
		t.Fatalf("cat /etc/passwd from / with the workspace /home/dev/proj: %s (%s)", got, why)
	}
	s, err := person.Sessions().Get(context.Background(), "cursor:no-roots")
	if err != nil || s.Workspace != "/home/dev/proj" {
		t.Fatalf("the session is %+v (%v), want the workspace /home/dev/proj", s, err)
	}
	status, body = postHook(t, srv.URL, "cursor", "", cursorEvent("no-roots", `["/home/dev/proj"]`, read))
	if got, why := seenInBody(t, "cursor", status, body); got != "deny" || !strings.Contains(why, "OUTSIDE_WORKSPACE") {
		t.Fatalf("reading /etc/passwd: %s (%s), want OUTSIDE_WORKSPACE", got, why)
	}
}
