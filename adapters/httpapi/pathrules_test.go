package httpapi_test

import (
	"net/http"
	"testing"
)

// TestPathRulesThroughDecide holds the path rules of both layers through
// POST /v1/decide: a read, a write, an edit and a glob tool, a place
// outside the workspace, and the session's rules changed by PATCH.
func TestPathRulesThroughDecide(t *testing.T) {
	s := newService(t)
	code, created := s.call("POST", "/v1/sessions", map[string]any{
		"id": "paths", "workspace": "/home/u/proj", "permission_level": "READ_WRITE",
		"path_rules": map[string]any{"secrets/**": map[string]any{"read": "deny"}, "/opt/shared-docs/**": map[string]any{"read": "allow"}},
	})
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("creating the session: %d %v", code, created)
	}
	call := func(tool string, args map[string]any) map[string]any {
		return s.decide(map[string]any{"session_id": "paths", "tool": tool, "args": args, "cwd": "/home/u/proj"})
	}
	cases := []struct {
		name, tool             string
		args                   map[string]any
		decision, source, rule string
	}{
		{"read .env", "read_file", map[string]any{"path": ".env"}, "deny", "config", ".env"},
		{"read a session-denied file", "read_file", map[string]any{"path": "secrets/token"}, "deny", "config", "secrets/**"},
		{"read in the shared place", "read_file", map[string]any{"path": "/opt/shared-docs/guide.md"}, "allow", "level", "fs.read"},
		{"write in the shared place", "write_file", map[string]any{"path": "/opt/shared-docs/guide.md", "content": "x"}, "deny", "default", "OUTSIDE_WORKSPACE"},
		{"write a workflow", "write_file", map[string]any{"path": ".github/workflows/ci.yml", "content": "x"}, "ask", "config", ".github/workflows/**"},
		{"write an ordinary file", "write_file", map[string]any{"path": "src/a.go", "content": "x"}, "allow", "level", "fs.write"},
		{"edit a git hook", "edit_file", map[string]any{"path": ".git/hooks/pre-commit", "old_string": "a", "new_string": "b"}, "deny", "config", ".git/hooks/**"},
		{"edit .git/config", "edit_file", map[string]any{"path": ".git/config", "old_string": "a", "new_string": "b"}, "ask", "config", ".git/**"},
		{"glob into a denied place", "glob_search", map[string]any{"pattern": "secrets/*.txt"}, "deny", "config", "secrets/**"},
		{"glob that could list a denied file", "glob_search", map[string]any{"pattern": "**/*.go"}, "deny", "config", "secrets/**"},
		{"glob elsewhere", "glob_search", map[string]any{"pattern": "src/**/*.go"}, "allow", "level", "fs.glob"},
		{"glob in the shared place", "glob_search", map[string]any{"pattern": "*.md", "path": "/opt/shared-docs"}, "allow", "level", "fs.glob"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := call(c.tool, c.args)
			if d["decision"] != c.decision || d["source"] != c.source || d["rule"] != c.rule {
				t.Fatalf("got %v/%v/%v (%v), want %s/%s/%s", d["decision"], d["source"], d["rule"], d["reason"], c.decision, c.source, c.rule)
			}
		})
	}

	got := s.mustStatus(http.StatusOK, "GET", "/v1/sessions/paths", nil)
	if rules, _ := got["path_rules"].(map[string]any); rules["secrets/**"] == nil {
		t.Fatalf("path_rules not stored: %v", got["path_rules"])
	}
	s.mustStatus(http.StatusOK, "PATCH", "/v1/sessions/paths", map[string]any{"path_rules": map[string]any{}})
	if d := call("read_file", map[string]any{"path": "secrets/token"}); d["decision"] != "allow" {
		t.Fatalf("after PATCH: %v (%v)", d["decision"], d["reason"])
	}
	bad := s.mustStatus(http.StatusBadRequest, "PATCH", "/v1/sessions/paths", map[string]any{"path_rules": map[string]any{"../x": "deny"}})
	if e, _ := bad["error"].(map[string]any); e["code"] != "invalid_path_rule" {
		t.Fatalf("bad path rule: %v", bad)
	}
}
