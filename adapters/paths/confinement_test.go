package paths

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// entries as the built-in catalogue declares them (policies/data.json).
var (
	editFile = pdp.ToolEntry{Capability: "fs.edit", Other: pdp.KindPath, Args: map[string]pdp.ArgKind{
		"path": pdp.KindPath, "old_string": pdp.KindData, "new_string": pdp.KindData,
		"edits[].path": pdp.KindPath, "edits[].old_string": pdp.KindData, "edits[].new_string": pdp.KindData,
	}}
	applyPatch = pdp.ToolEntry{Capability: "fs.edit", Other: pdp.KindPath, Args: map[string]pdp.ArgKind{"input": pdp.KindPatch, "patch": pdp.KindPatch}}
	globTool   = pdp.ToolEntry{Capability: "fs.glob", Other: pdp.KindPath, Base: "path", Args: map[string]pdp.ArgKind{"pattern": pdp.KindGlob, "path": pdp.KindPath}}
	fetchTool  = pdp.ToolEntry{Capability: "net.fetch", Other: pdp.KindPath, Args: map[string]pdp.ArgKind{"url": pdp.KindData, "prompt": pdp.KindData}}
	todoTool   = pdp.ToolEntry{Capability: "plan.update", Other: pdp.KindData}
)

func check(t *testing.T, r Resolver, entry *pdp.ToolEntry, args map[string]any, cwd, ws string) (pdp.WorkspaceVerdict, error) {
	t.Helper()
	return r.Check(context.Background(), pdp.WorkspaceCall{Tool: "t", Entry: entry, Args: args, Cwd: cwd, Workspace: ws})
}

func TestEveryArgumentThatMayNameAFileIsChecked(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: src/a.go\n@@\n-x\n+y\n*** Update File: /etc/passwd\n*** End Patch\n"
	cases := []struct {
		name    string
		entry   *pdp.ToolEntry
		args    map[string]any
		outside bool
	}{
		{"undeclared key of a file tool", &readFile, map[string]any{"dest": "/etc/passwd"}, true},
		{"Gemini CLI's absolute_path", &readFile, map[string]any{"absolute_path": "/etc/shadow"}, true},
		{"a file URI", &readFile, map[string]any{"uri": "file:///etc/shadow"}, true},
		{"a file URI with a host and escapes", &readFile, map[string]any{"uri": "FILE://localhost/%65tc/shadow"}, true},
		{"a file URI in declared data", &fetchTool, map[string]any{"url": "file:///etc/shadow"}, true},
		{"an https URL is no path", &fetchTool, map[string]any{"url": "https://example.com/etc/passwd"}, false},
		{"nested in an edit list", &editFile, map[string]any{"edits": []any{map[string]any{"path": "/etc/passwd", "old_string": "a"}}}, true},
		{"deep in an undeclared object", &editFile, map[string]any{"opts": map[string]any{"x": []any{[]any{map[string]any{"y": "../../etc/passwd"}}}}}, true},
		{"an unknown tool checks everything", nil, map[string]any{"dest": "/etc/cron.d/x"}, true},
		{"an unknown tool's text is fine inside", nil, map[string]any{"title": "fix the bug", "body": "see src/a.go\nand docs/", "n": 3.0}, false},
		{"a path token in free text", nil, map[string]any{"body": "please write\nto /etc/cron.d/job now"}, true},
		{"a path token after an equals sign", nil, map[string]any{"args": "--output=/etc/x"}, true},
		{"a PATH-like list", nil, map[string]any{"env": "PATH=/w/bin:/usr/bin"}, true},
		{"a home directory", nil, map[string]any{"target": "~/.ssh/authorized_keys"}, true},
		{"text that starts with a tilde", nil, map[string]any{"note": "~ 5 minutes"}, false},
		{"declared content is data", &editFile, map[string]any{"path": "a.go", "new_string": "/etc/passwd ../../x"}, false},
		{"a patch names an outside file", &applyPatch, map[string]any{"input": patch}, true},
		{"a unified diff header", &applyPatch, map[string]any{"patch": "--- a/x.go\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n"}, true},
		{"a move in a patch", &applyPatch, map[string]any{"input": "*** Update File: a.go\n*** Move to: ../outside.go\n"}, true},
		{"an inside patch", &applyPatch, map[string]any{"input": "*** Add File: src/new.go\n+package x\n--- /dev/null\n+++ b/src/new.go\n"}, false},
		{"a patch smuggled through an undeclared key", &readFile, map[string]any{"notes": "*** Update File: ../../etc/passwd\n"}, true},
		{"a file-free tool's text", &todoTool, map[string]any{"todos": []any{map[string]any{"content": "edit /etc/hosts"}}}, false},
		{"a file-free tool still sees file URIs", &todoTool, map[string]any{"todos": "file:///etc/shadow"}, true},
		{"brace alternatives are each checked", &globTool, map[string]any{"pattern": "{/etc,x}/passwd"}, true},
		{"dotdot after a wildcard", &globTool, map[string]any{"pattern": "**/../../../etc/passwd"}, true},
		{"nested braces", &globTool, map[string]any{"pattern": "{src,{b,/etc}}/*"}, true},
		{"inside braces", &globTool, map[string]any{"pattern": "{src,test}/**/*.go"}, false},
		{"process-relative paths", &readFile, map[string]any{"path": "/proc/self/root/etc/passwd"}, true},
		{"another process", &readFile, map[string]any{"path": "/proc/1/cwd"}, true},
		{"a descriptor", &readFile, map[string]any{"path": "/dev/fd/3"}, true},
		{"a padded patch marker", &applyPatch, map[string]any{"input": "*** Begin Patch\n *** Add File: /etc/cron.d/x\n+x\n*** End Patch"}, true},
		{"a tab before a patch marker", &applyPatch, map[string]any{"input": "\t*** Update File: ../../etc/passwd\n"}, true},
		{"a file URI after a space", &fetchTool, map[string]any{"url": " file:///etc/shadow"}, true},
		{"a file URI with a tab inside", &fetchTool, map[string]any{"url": "fi\tle:///etc/passwd"}, true},
		{"a wrapped file URI", &fetchTool, map[string]any{"url": "<URL:file:///etc/passwd>"}, true},
		{"host:/path as one word", nil, map[string]any{"src": "localhost:/etc/shadow"}, true},
		{"a PATH list as one word", nil, map[string]any{"env": map[string]any{"LD_LIBRARY_PATH": "lib:/etc"}}, true},
		{"dotdot before a colon", nil, map[string]any{"x": "..:x"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []Resolver{{}, {FollowSymlinks: true}} {
				v, err := check(t, r, tc.entry, tc.args, "", "/w")
				if err != nil {
					t.Fatal(err)
				}
				if got := len(v.Outside) > 0; got != tc.outside {
					t.Fatalf("follow=%v: outside %q (checked %q), want outside=%v", r.FollowSymlinks, v.Outside, v.Checked, tc.outside)
				}
			}
		})
	}
}

func TestKeysEqualButForCaseAreBadInput(t *testing.T) {
	for name, args := range map[string]map[string]any{
		"top level":    {"path": "/etc/passwd", "PATH": "ok.txt"},
		"nested":       {"edits": []any{map[string]any{"path": "a", "Path": "b"}}},
		"undeclared":   {"Dest": "a", "dEST": "b"},
		"kelvin sign":  {"\u212aey": "a", "key": "b"},
		"long s":       {"\u017fource": "a", "source": "b"},
		"empty values": {"x": nil, "X": nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := check(t, Resolver{}, &editFile, args, "", "/w")
			var bad *pdp.Error
			if !errors.As(err, &bad) || bad.Code != "ambiguous_argument" {
				t.Fatalf("got %v, want ambiguous_argument", err)
			}
		})
	}
}

func TestGlobToolResolvesAgainstItsSearchRoot(t *testing.T) {
	// From the cwd /w/a/b/c, "../etc" is inside; from the search root /w
	// it is /etc.
	v, err := check(t, Resolver{}, &globTool, map[string]any{"path": "/w", "pattern": "../etc/*"}, "/w/a/b/c", "/w")
	if err != nil || len(v.Outside) == 0 {
		t.Fatalf("outside %q, %v; want the pattern outside", v.Outside, err)
	}
	v, err = check(t, Resolver{}, &globTool, map[string]any{"path": "/w/src", "pattern": "**/*.go"}, "/w", "/w")
	if err != nil || len(v.Outside) != 0 {
		t.Fatalf("outside %q, %v; want nothing outside", v.Outside, err)
	}
}

func TestResolutionFailsClosed(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "/proc/self/cwd", filepath.Join(ws, "self"))
	mustSymlink(t, "/etc", filepath.Join(ws, "etc"))
	mustSymlink(t, "loop2", filepath.Join(ws, "loop1"))
	mustSymlink(t, "loop1", filepath.Join(ws, "loop2"))
	follow := Resolver{FollowSymlinks: true}
	for name, args := range map[string]map[string]any{
		"a link to the PDP's own cwd":           {"path": "self/x"},
		"a relative path through a link out":    {"dest": "etc/passwd"},
		"a link loop":                           {"path": "loop1/x"},
		"an element the kernel refuses to look": {"path": strings.Repeat("n", 300) + "/x"},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := check(t, follow, &readFile, args, "", ws)
			if err != nil || len(v.Outside) == 0 {
				t.Fatalf("outside %q, %v; want outside", v.Outside, err)
			}
		})
	}
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads every directory; the ENAMETOOLONG case above holds the same rule")
		}
		locked := filepath.Join(ws, "locked")
		if err := os.Mkdir(locked, 0o700); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, "/etc", filepath.Join(locked, "link"))
		if err := os.Chmod(locked, 0o000); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o700)
		v, err := check(t, follow, &readFile, map[string]any{"path": "locked/link/passwd"}, "", ws)
		if err != nil || len(v.Outside) == 0 {
			t.Fatalf("outside %q, %v; want outside", v.Outside, err)
		}
	})
}

func TestCostIsBounded(t *testing.T) {
	ws := deepWorkspace(t)
	follow := Resolver{FollowSymlinks: true}

	t.Run("too many elements is bad input", func(t *testing.T) {
		_, err := check(t, follow, &readFile, map[string]any{"path": strings.Repeat("a/", 40000)}, "", ws)
		var bad *pdp.Error
		if !errors.As(err, &bad) || bad.Code != "path_too_long" {
			t.Fatalf("got %v, want path_too_long", err)
		}
	})
	t.Run("a link into a tree deeper than the limit is outside", func(t *testing.T) {
		list := make([]any, 1000)
		for i := range list {
			list[i] = "link/f" + strconv.Itoa(i)
		}
		v, err := check(t, follow, &readFile, map[string]any{"paths": list}, "", ws)
		if err != nil || len(v.Outside) == 0 {
			t.Fatalf("outside %d, %v; want outside", len(v.Outside), err)
		}
	})
	t.Run("a deep link is resolved once per call", func(t *testing.T) {
		mid := filepath.Join(append([]string{ws, "mid"}, strings.Split(strings.Repeat("m/", 200), "/")...)...)
		if err := os.MkdirAll(mid, 0o755); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, mid, filepath.Join(ws, "midlink"))
		list := make([]any, 2000)
		for i := range list {
			list[i] = "midlink/f" + strconv.Itoa(i)
		}
		v, err := check(t, follow, &readFile, map[string]any{"paths": list}, "", ws)
		if err != nil {
			t.Fatalf("the budget ran out, so the link was resolved more than once: %v", err)
		}
		if len(v.Outside) != 0 {
			t.Fatalf("outside %q", v.Outside[:1])
		}
	})
	t.Run("the lookup budget", func(t *testing.T) {
		list := make([]any, DefaultMaxLookups+1)
		for i := range list {
			list[i] = "deep/" + strconv.Itoa(i)
		}
		_, err := check(t, follow, &readFile, map[string]any{"paths": list}, "", ws)
		var bad *pdp.Error
		if !errors.As(err, &bad) || bad.Code != "too_many_paths" {
			t.Fatalf("got %v, want too_many_paths", err)
		}
	})
	t.Run("a cancelled request stops", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		list := make([]any, 500)
		for i := range list {
			list[i] = "link/" + strings.Repeat("z", i)
		}
		_, err := follow.Check(ctx, pdp.WorkspaceCall{Entry: &readFile, Args: map[string]any{"paths": list}, Workspace: ws})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the context's error", err)
		}
	})
}
