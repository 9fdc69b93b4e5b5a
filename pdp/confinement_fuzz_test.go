package pdp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// FuzzPlantedOutsidePath: a call whose arguments hold one path outside the
// workspace — under any key, at any depth, in any case, as a path, a file
// URI, a glob or a patch line — is never allowed, even at FULL in
// allow-all mode; the same call with an inside path there is.
func FuzzPlantedOutsidePath(f *testing.F) {
	tools := []string{"read_file", "write_file", "edit_file", "apply_patch", "glob_search", "grep_search", "Read", "Write", "MultiEdit", "Glob", "WebFetch", "shell", "mcp__srv__tool", "fs.read"}
	for i, seed := range []struct {
		key   string
		shape string
		form  byte
	}{
		{"path", "", 0}, {"dest", "o", 1}, {"Edits", "ao", 0}, {"URI", "", 2}, {"pattern", "", 3}, {"input", "", 4}, {"x", "aaoa", 5}, {"absolute_path", "", 1},
	} {
		f.Add(uint8(i), seed.key, seed.shape, seed.form, "inner")
	}
	e := newEngine(f, pdp.Components{})
	session := &pdp.SessionTree{PermissionLevel: api.Full, Mode: api.AllowAll, Workspace: "/w", Rules: map[string]string{"mcp.*": "allow"}}
	f.Fuzz(func(t *testing.T, toolIdx uint8, key, shape string, form byte, inner string) {
		tool := tools[int(toolIdx)%len(tools)]
		if len(shape) > 8 || len(key) > 64 || len(inner) > 64 || strings.ContainsAny(key+inner, ".[]") {
			return
		}
		entry, known := refCatalogue[tool]
		sel := strings.ToLower(key)
		for _, s := range shape {
			if s == 'a' {
				sel += "[]"
			} else {
				sel += "." + strings.ToLower(inner)
			}
		}
		kind := pdp.KindPath
		if known {
			if k, declared := entry.KindOf(sel); declared {
				kind = k
			} else {
				kind = entry.Other
			}
		}
		if kind == pdp.KindData || kind == pdp.KindCommand || kind == pdp.KindStdin {
			return // plain data, commands and typed lines are not paths by declaration
		}
		plants := []string{"/etc/passwd", "../../etc/shadow", "FILE:///etc/shadow", "{/etc,src}/passwd", "**/../../../etc/x", "note\n*** Update File: ../../etc/passwd\n"}
		plant := plants[int(form)%len(plants)]
		declaredPath := known && (kind == pdp.KindPath || kind == pdp.KindPaths)
		if _, declared := entry.KindOf(sel); declared && declaredPath && (strings.ContainsAny(plant, "{*\n")) {
			return // a declared single path is one literal name, not a glob or a patch
		}
		if kind == pdp.KindPatch {
			if strings.ContainsAny(plant, "{\n") {
				return // a patch names files literally; it expands no glob
			}
			plant = "*** Update File: " + plant + "\n"
		}
		if kind == pdp.KindGlob && strings.Contains(plant, "\n") {
			return
		}
		build := func(leaf string) map[string]any {
			var v any = leaf
			for i := len(shape) - 1; i >= 0; i-- {
				if shape[i] == 'a' {
					v = []any{"src/a.go", v}
				} else {
					v = map[string]any{inner: v}
				}
			}
			return map[string]any{key: v}
		}
		call := func(args map[string]any) api.Decision {
			d, err := e.Decide(context.Background(), pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: tool, Args: args}, Session: session})
			if err != nil {
				t.Skipf("bad input: %v", err) // refused, never decided
			}
			return d
		}
		if d := call(build(plant)); d.Decision == api.Allow {
			t.Fatalf("%s %q with %q planted at %q (%s) was allowed", tool, key, plant, sel, kind)
		}
		if d := call(build("src/ok.go")); d.Decision != api.Allow && d.Rule == "OUTSIDE_WORKSPACE" {
			t.Fatalf("%s with an inside path at %q was judged outside: %s", tool, sel, d.Reason)
		}
	})
}
