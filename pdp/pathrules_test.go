package pdp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// pathTree makes a workspace with the files the shipped path rules care
// about, a link to .env, and a place outside with a link to it.
func pathTree(t *testing.T) (ws, place string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, place = filepath.Join(root, "w"), filepath.Join(root, "docs")
	for _, dir := range []string{".git/hooks", ".github/workflows", "src", "secrets"} {
		if err := os.MkdirAll(filepath.Join(ws, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(place, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".env", ".env.local", ".env.example", "src/a.go", filepath.Join(place, "a.md")} {
		if !filepath.IsAbs(f) {
			f = filepath.Join(ws, f)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".env", filepath.Join(ws, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(place, filepath.Join(ws, "shared")); err != nil {
		t.Fatal(err)
	}
	return ws, place
}

func TestPathRulesThroughTheEngine(t *testing.T) {
	ws, place := pathTree(t)
	placeRead := pdp.NewPathRules(map[string]api.PathRule{place + "/**": {Read: "allow"}})
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		s     pdp.SessionTree
		want  string
		rule  string
		layer string
	}{
		{"reading .env is denied", "Read", map[string]any{"file_path": ".env"}, pdp.SessionTree{}, "deny", ".env", "policy"},
		{"so is .env.local", "Read", map[string]any{"file_path": ws + "/.env.local"}, pdp.SessionTree{}, "deny", ".env.*", "policy"},
		{"but not .env.example", "Read", map[string]any{"file_path": ".env.example"}, pdp.SessionTree{}, "allow", "fs.read", ""},
		{"a link is judged by its target", "Read", map[string]any{"file_path": "notes.txt"}, pdp.SessionTree{}, "deny", ".env", "policy"},
		{".env is denied even at FULL", "Write", map[string]any{"file_path": "src/.env"}, pdp.SessionTree{PermissionLevel: api.Full}, "deny", ".env", "policy"},
		{"writing a git hook is denied", "Write", map[string]any{"file_path": ".git/hooks/pre-commit"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, "deny", ".git/hooks/**", "policy"},
		{"writing in .git asks", "Edit", map[string]any{"file_path": ".git/config"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, "ask", ".git/**", "policy"},
		{"reading in .git is fine", "Read", map[string]any{"file_path": ".git/config"}, pdp.SessionTree{}, "allow", "fs.read", ""},
		{"a path ask holds at FULL", "Edit", map[string]any{"file_path": ".git/config"}, pdp.SessionTree{PermissionLevel: api.Full}, "ask", ".git/**", "policy"},
		{"and in allow-all", "Edit", map[string]any{"file_path": ".git/config"}, pdp.SessionTree{Mode: api.AllowAll}, "ask", ".git/**", "policy"},
		{"CI workflows ask", "MultiEdit", map[string]any{"file_path": ".github/workflows/ci.yml"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, "ask", ".github/workflows/**", "policy"},
		{"so does .gitlab-ci.yml", "Write", map[string]any{"file_path": ".gitlab-ci.yml"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, "ask", ".gitlab-ci.yml", "policy"},
		{"a patch touching a hook", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: .git/hooks/post-merge\n+x\n*** End Patch"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, "deny", ".git/hooks/**", "policy"},
		{"a session rule", "Read", map[string]any{"file_path": "secrets/k"}, pdp.SessionTree{PathRules: pdp.NewPathRules(map[string]api.PathRule{"secrets/**": {Read: "deny"}})}, "deny", "secrets/**", "session"},
		{"a session allow never loosens the policy", "Read", map[string]any{"file_path": ".env"}, pdp.SessionTree{PathRules: pdp.NewPathRules(map[string]api.PathRule{".env": {Read: "allow"}})}, "deny", ".env", "policy"},
		{"outside is outside", "Read", map[string]any{"file_path": place + "/a.md"}, pdp.SessionTree{}, "deny", "OUTSIDE_WORKSPACE", ""},
		{"unless a place rule lets that access through", "Read", map[string]any{"file_path": place + "/a.md"}, pdp.SessionTree{PathRules: placeRead}, "allow", "fs.read", ""},
		{"through a link too", "Read", map[string]any{"file_path": "shared/a.md"}, pdp.SessionTree{PathRules: placeRead}, "allow", "fs.read", ""},
		{"a read allow is no write allow", "Write", map[string]any{"file_path": place + "/a.md"}, pdp.SessionTree{PathRules: placeRead, Mode: api.AllowAll}, "deny", "OUTSIDE_WORKSPACE", ""},
		{"a glob in the workspace", "Glob", map[string]any{"pattern": "**/*.go"}, pdp.SessionTree{}, "allow", "fs.glob", ""},
		{"a glob reaching a denied place", "Glob", map[string]any{"pattern": "**/*.txt"}, pdp.SessionTree{PathRules: pdp.NewPathRules(map[string]api.PathRule{"secrets/**": {Read: "deny"}})}, "deny", "secrets/**", "session"},
		{"a glob in an allowed place", "Glob", map[string]any{"pattern": "*.md", "path": place}, pdp.SessionTree{PathRules: placeRead}, "allow", "fs.glob", ""},
		// Shell commands: every word meets the rules, links followed.
		{"cat of a link to .env at FULL", "Bash", map[string]any{"command": "cat notes.txt"}, pdp.SessionTree{PermissionLevel: api.Full}, "deny", ".env", "policy"},
		{"a redirection into .env in allow-all", "Bash", map[string]any{"command": "echo x >> notes.txt"}, pdp.SessionTree{Mode: api.AllowAll}, "deny", ".env", "policy"},
		{"a shell read in a session-denied place", "Bash", map[string]any{"command": "cd secrets && head -1 k"}, pdp.SessionTree{PermissionLevel: api.Full, PathRules: pdp.NewPathRules(map[string]api.PathRule{"secrets/**": {Read: "deny"}})}, "deny", "secrets/**", "session"},
		{"a shell glob that may reach it asks", "Bash", map[string]any{"command": "cat secret?/*"}, pdp.SessionTree{PermissionLevel: api.Full, PathRules: pdp.NewPathRules(map[string]api.PathRule{"secrets/**": {Read: "deny"}})}, "ask", "secrets/**", "session"},
		{"an ordinary shell command at FULL", "Bash", map[string]any{"command": "cat shared/a.md && go vet ./..."}, pdp.SessionTree{PermissionLevel: api.Full}, "allow", "MODE", ""},
	}
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.s
			s.Workspace = ws
			d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: c.tool, Args: c.args, Cwd: ws}, Session: &s, Explain: true})
			if d.Decision != c.want || d.Rule != c.rule {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Rule, d.Reason, c.want, c.rule)
			}
			if c.layer != "" && d.Matches["path"].Layer != c.layer {
				t.Errorf("matches.path = %+v, want layer %s", d.Matches["path"], c.layer)
			}
		})
	}
}

func TestPathRulesIgnoreCaseWhereTheFileSystemDoes(t *testing.T) {
	ws, _ := pathTree(t)
	call := pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Read", Args: map[string]any{"file_path": ".ENV"}, Cwd: ws}, Session: &pdp.SessionTree{Workspace: ws}}
	for _, fold := range []bool{false, true} {
		e := newEngine(t, pdp.Components{Workspace: paths.Resolver{CaseInsensitive: fold}})
		d := decide(t, e, call)
		want := map[bool]string{false: "allow", true: "deny"}[fold]
		if d.Decision != want {
			t.Errorf("case_insensitive %v: got %s/%s, want %s", fold, d.Decision, d.Rule, want)
		}
	}
}

func TestBadPathRulesAreRefused(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	s := &pdp.SessionTree{Workspace: "/w", PathRules: pdp.NewPathRules(map[string]api.PathRule{"../etc/**": {Read: "allow"}})}
	_, err := e.Decide(t.Context(), pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Read", Args: map[string]any{"file_path": "a"}}, Session: s})
	if bad, ok := err.(*pdp.Error); !ok || bad.Code != "invalid_path_rule" {
		t.Fatalf("got %v, want invalid_path_rule", err)
	}
}

// BenchmarkPathRules decides a write naming three paths with 10 and with
// 10,000 path rules in the policy layer and in the session layer: the
// rules are compiled into tries once, so the cost is that of the path.
func BenchmarkPathRules(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		for _, layer := range []string{"policy", "session"} {
			b.Run(fmt.Sprintf("%s/%d", layer, n), func(b *testing.B) {
				rules := manyPathRules(n)
				p := builtinPolicyWithPaths(b, rules)
				e := pdp.New(p, pdp.Components{Workspace: paths.Resolver{}, Shell: shell.Parser{}})
				s := &pdp.SessionTree{Workspace: "/w", PermissionLevel: api.ReadWrite}
				if layer == "session" {
					e = newEngine(b, pdp.Components{})
					s.PathRules = pdp.NewPathRules(rules)
				}
				call := pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "edit_file", Args: map[string]any{
					"path": "src/pkg/a.go", "edits": []any{map[string]any{"path": "docs/guide/b.md"}, map[string]any{"path": "/w/cmd/tool/main.go"}},
				}}, Session: s}
				decide(b, e, call)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					// A fresh explain call is never memoized: every loop
					// evaluates the policy with the path facts.
					call.Explain = true
					if _, err := e.Decide(b.Context(), call); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// manyPathRules are n rules of every shape: directories anchored to the
// workspace, names at any depth, "*.ext", "prefix.*", places on the host
// and element wildcards, none matching the benchmark's paths.
func manyPathRules(n int) map[string]api.PathRule {
	rules := make(map[string]api.PathRule, n)
	shapes := []string{"generated/d%d/**", "secret%d.key", "*.ext%d", ".cfg%d.*", "/opt/place%d/**", "src/*/gen%d/*.go"}
	for i := 0; len(rules) < n; i++ {
		rules[fmt.Sprintf(shapes[i%len(shapes)], i)] = api.PathRule{Read: "deny", Write: "ask"}
	}
	return rules
}

// builtinPolicyWithPaths is the built-in policy with data.paths replaced.
func builtinPolicyWithPaths(t testing.TB, rules map[string]api.PathRule) *pdp.Policy {
	t.Helper()
	return builtinPolicyWith(t, func(data map[string]any) { data["paths"] = rules })
}
