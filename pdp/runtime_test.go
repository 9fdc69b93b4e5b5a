package pdp_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// The agents' own tools, judged through the engine with the shipped
// policy: the catalogue entry of "<agent>/<tool>" decides what the
// arguments hold, and which of them is a shell command.
func TestAgentToolsThroughTheEngine(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	patch := func(file string) string {
		return "*** Begin Patch\n*** Update File: " + file + "\n@@\n-a\n+b\n*** End Patch\n"
	}
	codex := &api.Runtime{Agent: "codex"}
	cases := map[string]struct {
		tool  string
		rt    *api.Runtime
		args  map[string]any
		level api.Level
		want  string
		rule  string
	}{
		"codex apply_patch inside, READ_WRITE": {"apply_patch", codex, map[string]any{"command": patch("src/a.go")}, api.ReadWrite, api.Allow, "fs.edit"},
		"codex apply_patch outside":            {"apply_patch", codex, map[string]any{"command": patch("/etc/passwd")}, api.Full, api.Deny, "OUTSIDE_WORKSPACE"},
		"codex Bash is a command":              {"Bash", codex, map[string]any{"command": "make build"}, api.ReadOnly, api.Ask, "shell.exec"},
		"exec_command's cmd is the command":    {"exec_command", codex, map[string]any{"cmd": "rm -rf /", "workdir": "/w"}, api.Full, api.Deny, "rm -rf /"},
		"exec_command's workdir is a path":     {"exec_command", codex, map[string]any{"cmd": "ls", "workdir": "/etc"}, api.Full, api.Deny, "OUTSIDE_WORKSPACE"},
		"exec_command naming another shell":    {"exec_command", codex, map[string]any{"cmd": "print(1)", "shell": "/usr/bin/python3"}, api.Full, api.Deny, "OUTSIDE_WORKSPACE"},
		"gemini replace outside":               {"replace", &api.Runtime{Agent: "gemini-cli"}, map[string]any{"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}, api.Full, api.Deny, "OUTSIDE_WORKSPACE"},
		"gemini replace, its strings are data": {"replace", &api.Runtime{Agent: "gemini-cli"}, map[string]any{"file_path": "/w/a.txt", "old_string": "/etc/passwd", "new_string": "../../x"}, api.ReadWrite, api.Allow, "fs.edit"},
		"cursor Write's contents are data":     {"Write", &api.Runtime{Agent: "cursor"}, map[string]any{"file_path": "/w/a.txt", "contents": "see /etc/shadow"}, api.ReadWrite, api.Allow, "fs.write"},
		"cursor Shell is a command":            {"Shell", &api.Runtime{Agent: "cursor"}, map[string]any{"command": "rm -rf /"}, api.Full, api.Deny, "rm -rf /"},
		"Claude Code's Agent spawns":           {"Agent", nil, map[string]any{"prompt": "read /etc/passwd", "subagent_type": "general-purpose"}, api.ReadOnly, api.Allow, "task.spawn"},
		"EnterWorktree asks":                   {"EnterWorktree", nil, map[string]any{"name": "feature"}, api.ReadWrite, api.Ask, "workspace.enter"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &pdp.SessionTree{ID: "s1", Workspace: "/w", PermissionLevel: tc.level}
			d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: tc.tool, Args: tc.args, Cwd: "/w", Runtime: tc.rt}, Session: s, Explain: true})
			if d.Decision != tc.want || (tc.rule != "" && d.Rule != tc.rule) {
				t.Fatalf("%s %s (%s), want %s %s", d.Decision, d.Rule, d.Reason, tc.want, tc.rule)
			}
		})
	}
}

func TestAgentToolBadInputIsAnError(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	s := &pdp.SessionTree{ID: "s1", Workspace: "/w", PermissionLevel: api.Full}
	for name, req := range map[string]api.DecideRequest{
		"a cmd that is a list": {SessionID: "s1", Tool: "exec_command", Args: map[string]any{"cmd": []any{"rm", "-rf", "/"}}, Runtime: &api.Runtime{Agent: "codex"}},
		"an agent of capitals": {SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": "ls"}, Runtime: &api.Runtime{Agent: "Codex"}},
		"a long mode":          {SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": "ls"}, Runtime: &api.Runtime{PermissionMode: strings.Repeat("x", 65)}},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := e.Decide(context.Background(), pdp.Call{Request: req, Session: s})
			var bad *pdp.Error
			if !errors.As(err, &bad) {
				t.Fatalf("decision %+v, error %v: want a bad-input error", d, err)
			}
		})
	}
}

// acceptEditsOptIn is the three-line extension docs/policy.md shows.
const acceptEditsOptIn = `package toolperm
import rego.v1
runtime_level := "READ_WRITE" if input.runtime.permission_mode == "acceptEdits"
`

// The runtime's mode is a fact: the shipped policy decides the same
// whatever it says, and the opt-in of docs/policy.md makes acceptEdits
// READ_WRITE, through the engine and its caches.
func TestPermissionModeIsAFactUnlessAPolicyOptsIn(t *testing.T) {
	write := func(mode string) pdp.Call {
		return pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Write", Args: map[string]any{"file_path": "/w/a.go"}, Cwd: "/w",
			Runtime: &api.Runtime{Agent: "claude-code", PermissionMode: mode}}, Session: &pdp.SessionTree{ID: "s1", Workspace: "/w"}}
	}
	shipped := newEngine(t, pdp.Components{})
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		if d := decide(t, shipped, write(mode)); d.Decision != api.Ask {
			t.Fatalf("shipped policy, %s: %s %s", mode, d.Decision, d.Rule)
		}
	}
	dir := t.TempDir()
	entries, err := fs.ReadDir(policies.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, _ := fs.ReadFile(policies.FS, e.Name())
		if err := os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "runtime_level.rego"), []byte(acceptEditsOptIn), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policysource.LoadFS(context.Background(), os.DirFS(dir), "opt-in")
	if err != nil {
		t.Fatal(err)
	}
	opted := pdp.New(p, pdp.Components{Workspace: paths.Resolver{}, Shell: shell.Parser{}})
	for mode, want := range map[string]string{"default": api.Ask, "acceptEdits": api.Allow, "plan": api.Ask} {
		for range 2 { // the second time from the engine's caches
			if d := decide(t, opted, write(mode)); d.Decision != want {
				t.Fatalf("opt-in, %s: %s %s, want %s", mode, d.Decision, d.Rule, want)
			}
		}
	}
}
