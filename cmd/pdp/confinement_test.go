package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// decideAt runs `pdp decide` for a call in a session at FULL and allow-all
// — where nothing but an explicit deny and the workspace stops a call —
// confined to ws, with MCP tools allowed by a rule.
func decideAt(t *testing.T, ws, tool string, args map[string]any, cwd string) (map[string]any, string, error) {
	t.Helper()
	body := map[string]any{
		"session_id": "s", "tool": tool, "args": args,
		"session": map[string]any{"permission_level": "FULL", "mode": "allow-all", "workspace": ws, "rules": map[string]string{"mcp.*": "allow"}},
	}
	if cwd != "" {
		body["cwd"] = cwd
	}
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return runPDP(t, string(raw), "decide")
}

// TestConfinementHoles holds the confinement classes of docs/security.md
// through `pdp decide` with the built-in catalogue: each reproduction and
// variants of it are denied as outside, and the legitimate call beside
// them is allowed.
func TestConfinementHoles(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/cwd", filepath.Join(ws, "self")); err != nil {
		t.Fatal(err)
	}
	patch := "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** Add File: ../outside/x\n+y\n*** End Patch\n"
	outside := []struct {
		name, tool string
		args       map[string]any
	}{
		{"undeclared dest", "write_file", map[string]any{"dest": "/etc/passwd"}},
		{"Gemini CLI's absolute_path", "read_file", map[string]any{"absolute_path": "/etc/shadow"}},
		{"a file URI", "read_file", map[string]any{"uri": "file:///etc/shadow"}},
		{"a file URI to a fetch tool", "WebFetch", map[string]any{"url": "file:///etc/shadow", "prompt": "x"}},
		{"nested edits", "edit_file", map[string]any{"edits": []any{map[string]any{"path": "/etc/passwd", "old_string": "a", "new_string": "b"}}}},
		{"an MCP tool allowed by a rule", "mcp__files__copy", map[string]any{"dest": "/etc/cron.d/x"}},
		{"an MCP tool, deep and in another case", "mcp__files__copy", map[string]any{"Opts": map[string]any{"Targets": []any{"ok", map[string]any{"TO": "../../etc/x"}}}}},
		{"a relative path through a link out", "mcp__files__read", map[string]any{"file": "link/passwd"}},
		{"a link to the PDP's own cwd", "read_file", map[string]any{"path": "self/etc/passwd"}},
		{"a process-relative path", "read_file", map[string]any{"path": "/proc/self/root/etc/shadow"}},
		{"apply_patch", "apply_patch", map[string]any{"input": patch}},
		{"a patch through an undeclared key", "write_file", map[string]any{"path": "src/a.go", "content": "x", "notes": "--- a/x\n+++ b/../../../etc/passwd\n"}},
		{"brace alternatives", "Glob", map[string]any{"pattern": "{/etc,x}/passwd"}},
		{"dotdot after a wildcard", "glob_search", map[string]any{"pattern": "**/../../../etc/passwd"}},
	}
	for _, tc := range outside {
		t.Run(tc.name, func(t *testing.T) {
			doc, out, err := decideAt(t, ws, tc.tool, tc.args, "")
			if err != nil {
				t.Fatalf("decide: %v\n%s", err, out)
			}
			if doc["decision"] != "deny" || doc["rule"] != "OUTSIDE_WORKSPACE" {
				t.Fatalf("got %s by %s, want deny by OUTSIDE_WORKSPACE\n%s", doc["decision"], doc["rule"], out)
			}
		})
	}

	inside := []struct {
		name, tool string
		args       map[string]any
	}{
		{"a write", "write_file", map[string]any{"path": "src/a.go", "content": "see /etc/passwd and file:///etc/shadow"}},
		{"an edit list", "edit_file", map[string]any{"path": "src/a.go", "edits": []any{map[string]any{"old_string": "/etc", "new_string": "../.."}}}},
		{"an inside patch", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: src/b.go\n+package b\n*** End Patch\n"}},
		{"a glob with braces", "Glob", map[string]any{"pattern": "{src,test}/**/*.go"}},
		{"an MCP tool's text", "mcp__github__create_issue", map[string]any{"title": "Fix the parser", "body": "It fails on src/a.go.\nSee https://example.com/a/b."}},
	}
	for _, tc := range inside {
		t.Run(tc.name, func(t *testing.T) {
			doc, out, err := decideAt(t, ws, tc.tool, tc.args, "")
			if err != nil || doc["decision"] != "allow" {
				t.Fatalf("got %v (%v), want allow\n%s", doc["decision"], err, out)
			}
		})
	}
}

// TestKeysEqualButForCase: two argument keys that differ only in case are
// bad input, never a decision, at any depth.
func TestKeysEqualButForCase(t *testing.T) {
	for name, args := range map[string]map[string]any{
		"the reproduction": {"path": "/etc/passwd", "PATH": "ok.txt"},
		"nested":           {"path": "a", "edits": []any{map[string]any{"path": "ok", "Path": "/etc/x"}}},
		"undeclared":       {"path": "a", "Dest": "/etc/x", "dest": "ok"},
	} {
		t.Run(name, func(t *testing.T) {
			doc, out, err := decideAt(t, "/w", "write_file", args, "")
			if err == nil || !strings.Contains(err.Error(), "differ only in case") {
				t.Fatalf("got %v / %v, want the ambiguous_argument error\n%s", doc["decision"], err, out)
			}
		})
	}
}

// TestExactDuplicateKeysAreRefused: JSON keeps one of two equal keys
// silently; the PDP refuses the body rather than judge one of them.
func TestExactDuplicateKeysAreRefused(t *testing.T) {
	for name, body := range map[string]string{
		"top level": `{"session_id":"s","tool":"write_file","args":{"path":"/etc/passwd","path":"ok.txt"},"session":{"permission_level":"FULL","mode":"allow-all","workspace":"/w"}}`,
		"nested":    `{"session_id":"s","tool":"mcp__x__y","args":{"o":{"dest":"/etc/x","dest":"ok"}},"session":{"permission_level":"FULL","mode":"allow-all","workspace":"/w","rules":{"mcp.*":"allow"}}}`,
		"a field":   `{"session_id":"s","session_id":"t","tool":"read_file","args":{"path":"a"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			doc, out, err := runPDP(t, body, "decide")
			if err == nil || !strings.Contains(err.Error(), "twice") {
				t.Fatalf("got %v / %v, want the duplicate refused\n%s", doc["decision"], err, out)
			}
		})
	}
}

// TestStdinWriteCarryingACommand: a stdin write that also carries a
// command is judged as shell.exec, never as shell.stdin.
func TestStdinWriteCarryingACommand(t *testing.T) {
	for name, args := range map[string]map[string]any{
		"the reproduction":        {"action": "write_stdin", "command": "rm -rf ~"},
		"argv":                    {"action": "write_stdin", "argv": []any{"rm", "-rf", "/"}},
		"the key in another case": {"action": "write_stdin", "Command": "rm -rf ~"},
	} {
		t.Run(name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"session_id": "s", "tool": "shell", "args": args, "session": map[string]any{"workspace": "/w"}})
			doc, out, err := runPDP(t, string(body), "decide")
			if err != nil {
				t.Fatalf("decide: %v\n%s", err, out)
			}
			if doc["capability"] != "shell.exec" || doc["decision"] == "allow" {
				t.Fatalf("got %v as %v, want shell.exec, not allowed\n%s", doc["decision"], doc["capability"], out)
			}
		})
	}
	body := `{"session_id":"s","tool":"shell","args":{"action":"write_stdin","input":"y\n"},"session":{"workspace":"/w"}}`
	doc, out, err := runPDP(t, body, "decide")
	if err != nil || doc["capability"] != "shell.stdin" || doc["decision"] != "allow" {
		t.Fatalf("a plain stdin write: %v %v (%v)\n%s", doc["capability"], doc["decision"], err, out)
	}
}

// TestBashAndShReadings: args.command runs as `sh -c`, and sh (dash) reads
// "&>" and "$'…'" differently from bash; a grant or allow rule never
// covers such a command, and a deny rule meets sh's commands too.
func TestBashAndShReadings(t *testing.T) {
	grant := map[string]any{"workspace": "/w", "grants": []any{map[string]any{"capability": "shell.exec", "fingerprint": "make check"}}}
	full := map[string]any{"workspace": "/w", "permission_level": "FULL", "mode": "allow-all", "command_rules": map[string]any{"git push --force": "deny"}}
	cases := []struct {
		name, command string
		session       map[string]any
		want          string
	}{
		{"&> is a background & in sh", "make check &>/dev/null rm -rf /w", grant, "ask"},
		{"$'…' is no quote in sh", `make check $'\';id;#'`, grant, "ask"},
		{"a deny meets sh's command", "echo x &>/dev/null git push --force", full, "deny"},
		{"a plain redirection still rides on the grant", "make check 2>/dev/null", grant, "allow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"session_id": "s", "tool": "shell", "args": map[string]any{"command": tc.command}, "session": tc.session})
			doc, out, err := runPDP(t, string(body), "decide")
			if err != nil || doc["decision"] != tc.want {
				t.Fatalf("got %v (%v), want %s\n%s", doc["decision"], err, tc.want, out)
			}
		})
	}
}

// TestKeysEqualUnderFoldingAreRefused: encoding/json matches field names
// under Unicode case folding, so "ſession_id" (U+017F) fills session_id;
// `pdp decide` refuses a body holding both as ambiguous.
func TestKeysEqualUnderFoldingAreRefused(t *testing.T) {
	for name, body := range map[string]string{
		"a field":         `{"session_id":"s","ſession_id":"t","tool":"read_file","args":{"path":"a"}}`,
		"an argument":     `{"session_id":"s","tool":"mcp__x__y","args":{"source":"/w/a","\u017fource":"/etc/x"},"session":{"permission_level":"FULL","mode":"allow-all","workspace":"/w","rules":{"mcp.*":"allow"}}}`,
		"a Kelvin sign":   `{"session_id":"s","tool":"mcp__x__y","args":{"o":[{"key":"/w/a","\u212aey":"/etc/x"}]},"session":{"permission_level":"FULL","mode":"allow-all","workspace":"/w","rules":{"mcp.*":"allow"}}}`,
		"a session field": `{"session_id":"s","tool":"read_file","args":{"path":"a"},"session":{"workspace":"/w","work\u017fpace":"/"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			doc, out, err := runPDP(t, body, "decide")
			var bad *pdp.Error
			if !errors.As(err, &bad) || bad.Code != "ambiguous_argument" {
				t.Fatalf("got %v / %v, want the ambiguous_argument error\n%s", doc["decision"], err, out)
			}
		})
	}
}
