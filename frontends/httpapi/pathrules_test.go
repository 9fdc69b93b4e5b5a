package httpapi_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// TestPathRulesThroughTheShell: the shipped path rules reach shell
// commands at FULL and in allow-all. Every word and redirection target
// meets them with the access its command implies; a word that may name a
// protected path (a glob, a parameter, a tilde) asks.
func TestPathRulesThroughTheShell(t *testing.T) {
	s := newService(t)
	ws := t.TempDir()
	for _, f := range []string{".env", "README.md", "main.go"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		cmd, decision, rule string
	}{
		{"cat .env", "deny", ".env"},
		{"echo x > .env", "deny", ".env"},
		{"cp .env ~/x", "deny", ".env"},
		{"grep -n KEY ./.env && ls", "deny", ".env"},
		{"cd src && cat ../.env", "deny", ".env"},
		{"cd .git && echo x > hooks/pre-commit", "deny", ".git/hooks/**"},
		{"sort -o.env main.go", "deny", ".env"},
		{"cat .en*", "ask", ".env.*"},
		{"cat $F", "ask", ".env.*"},
		// The directory operand is judged by its own path (as Grep's and
		// LS's are); ~/a.tgz may name any path, so the call asks.
		{"tar czf ~/a.tgz .", "ask", ".env.*"},
		{"echo x > .github/workflows/ci.yml", "ask", ".github/workflows/**"},
		{"sed -i s/a/b/ .git/config", "ask", ".git/**"},
		// found by a red-team pass over the first version
		{"cat .env\nfi", "ask", "rm -rf /"},          // does not parse (bash runs line 1 first): it may be anything, and the floor asks first
		{"cat /proc/self/cwd/.env", "ask", ".env.*"}, // a path the resolver does not follow
		{"shopt -s dotglob; cat ?env", "ask", ".env.*"},
		{"file -Lf.env", "deny", ".env"},
		{"cp payload .git/hooks/pre-commit -f", "deny", ".git/hooks/**"},
		{"sed --in s/a/b/ .github/workflows/ci.yml", "ask", ".github/workflows/**"},
		{"xxd -r -p hex .git/hooks/pre-commit", "deny", ".git/hooks/**"},
		{"ln -s .git g; cp payload g/hooks/pre-commit", "ask", ".env.*"},
		{"CDPATH=.git cd hooks; cp ../../payload pre-commit", "ask", ".env.*"},
		{"curl -s file://" + ws + "/%2eenv", "deny", ".env"},
		{"bash -posix -c 'cat .env'", "deny", ".env"},
		{"cat README.md", "allow", "MODE"},
		{"[ -f go.mod ] && go build ./...", "allow", "MODE"},
		{"echo '$(not substituted)' && printf '%s\\n' done", "allow", "MODE"},
		{"cat *.go", "allow", "MODE"},
		{"go test ./...", "allow", "MODE"},
		{"ls -la | wc -l", "allow", "MODE"},
		{"echo .env", "allow", "MODE"},
		{"cat .env.example", "allow", "MODE"},
	}
	for _, mode := range []map[string]any{{"permission_level": "FULL"}, {"mode": "allow-all"}} {
		id := fmt.Sprintf("sh-%v-%v", mode["permission_level"] != nil, mode["mode"] != nil)
		session := map[string]any{"id": id, "workspace": ws}
		for k, v := range mode {
			session[k] = v
		}
		s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", session)
		for _, c := range cases {
			t.Run(fmt.Sprint(mode, " ", c.cmd), func(t *testing.T) {
				d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": c.cmd}, "cwd": ws})
				if d["decision"] != c.decision || d["rule"] != c.rule {
					t.Fatalf("got %v/%v (%v), want %s/%s", d["decision"], d["rule"], d["reason"], c.decision, c.rule)
				}
			})
		}
	}
}
