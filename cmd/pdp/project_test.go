package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
)

// TestTheHookCarriesTheProjectPolicy runs `pdp serve` as a central server
// would (paths.project_policy: hook: it never reads a workspace of its
// own host) with sessions at FULL, and the Claude Code hook as a child
// process in two workspaces: the one whose .toolperm/policy.json denies
// git push gets a deny, the other runs it; the model cannot write the
// file; a malformed file denies with its reason.
func TestTheHookCarriesTheProjectPolicy(t *testing.T) {
	serve := serveProcess(filepath.Join(t.TempDir(), "pdp.db"), repoConfig,
		"PDP_PATHS_PROJECT_POLICY=hook", "PDP_SESSIONS_PERMISSION_LEVEL=FULL")
	url, _ := testserver.Process(t, serve, 60*time.Second)

	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	guarded, plain := filepath.Join(root, "guarded"), filepath.Join(root, "plain")
	for _, dir := range []string{filepath.Join(guarded, ".toolperm"), filepath.Join(guarded, "sub"), plain} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policy := filepath.Join(guarded, ".toolperm", "policy.json")
	if err := os.WriteFile(policy, []byte(`{"command_rules": {"git push": "deny"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := func(t *testing.T, session, ws, tool string, input map[string]any) hookAnswer {
		t.Helper()
		event := strings.Replace(hookEvent(t, tool, ws, input), "5e2b7c1a-0d4f-4a8e-b6c3-9f1e2d3c4b5a", session, 1)
		out, errOut := runHookProcess(t, event, "", "--url", url)
		var a hookAnswer
		if err := json.Unmarshal([]byte(out), &a); err != nil || a.HookSpecificOutput.PermissionDecision == "" {
			t.Fatalf("no decision (%v): %s %s", err, out, errOut)
		}
		return a
	}
	push := map[string]any{"command": "git push origin main"}
	for _, c := range []struct {
		name, session, ws, tool string
		input                   map[string]any
		want, says              string
	}{
		{"the guarded workspace denies the push", "guarded-1", guarded, "Bash", push, "deny", `project (.toolperm/policy.json, sent by the hook) command rule "git push"`},
		{"and so after the model's cd into a sub-directory", "guarded-1", filepath.Join(guarded, "sub"), "Bash", push, "deny", `command rule "git push"`},
		{"the other runs it", "plain-1", plain, "Bash", push, "allow", ""},
		{"the model cannot rewrite the file", "guarded-2", guarded, "Write", map[string]any{"file_path": policy, "content": "{}"}, "deny", "/**/.toolperm/**"},
		{"nor remove it from the shell", "guarded-3", guarded, "Bash", map[string]any{"command": "rm -rf .toolperm"}, "deny", "/**/.toolperm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := hook(t, c.session, c.ws, c.tool, c.input).HookSpecificOutput
			if got.PermissionDecision != c.want || !strings.Contains(got.PermissionDecisionReason, c.says) {
				t.Fatalf("%s (%s), want %s saying %q", got.PermissionDecision, got.PermissionDecisionReason, c.want, c.says)
			}
		})
	}
	t.Run("a malformed file denies with its reason", func(t *testing.T) {
		if err := os.WriteFile(policy, []byte(`{"command_rules": {"git push": "deny"},}`), 0o644); err != nil {
			t.Fatal(err)
		}
		got := hook(t, "guarded-4", guarded, "Read", map[string]any{"file_path": filepath.Join(guarded, "README.md")}).HookSpecificOutput
		if got.PermissionDecision != "deny" || !strings.Contains(got.PermissionDecisionReason, "not JSON") {
			t.Fatalf("%s (%s), want a deny saying the file is not JSON", got.PermissionDecision, got.PermissionDecisionReason)
		}
	})
}
