package paths

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// BenchmarkWorstShapes shows what one call's path check costs against its
// size for the shapes that used to be expensive: it grows linearly and
// stops at the limits (past them the call is refused in microseconds).
//
//	go test ./adapters/paths -run '^$' -bench WorstShapes -benchmem
func BenchmarkWorstShapes(b *testing.B) {
	ws := deepWorkspace(b)
	follow := Resolver{FollowSymlinks: true}
	run := func(b *testing.B, entry *pdp.ToolEntry, args map[string]any) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = follow.Check(context.Background(), pdp.WorkspaceCall{Entry: entry, Args: args, Workspace: ws})
		}
	}
	for _, n := range []int{10, 100, 500, 40000} {
		b.Run(fmt.Sprintf("elements=%d", n), func(b *testing.B) {
			run(b, &readFile, map[string]any{"path": strings.Repeat("a/", n)})
		})
	}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("deep-link-list=%d", n), func(b *testing.B) {
			list := make([]any, n)
			for i := range list {
				list[i] = fmt.Sprintf("link/f%d", i)
			}
			run(b, &readFile, map[string]any{"paths": list})
		})
	}
	for _, kb := range []int{1, 10, 100, 900} {
		b.Run(fmt.Sprintf("free-text-kb=%d", kb), func(b *testing.B) {
			text := strings.Repeat("see src/a.go and ../x/y\n", kb*1024/24)
			run(b, nil, map[string]any{"body": text})
		})
	}
	for _, n := range []int{2, 8, 16} {
		b.Run(fmt.Sprintf("brace-groups=%d", n), func(b *testing.B) {
			run(b, &globTool, map[string]any{"pattern": strings.Repeat("{a,b}/", n) + "*"})
		})
	}
}

// BenchmarkProjectFilesFind is what looking for a workspace's project
// file costs each decision, in a workspace six directories deep: without
// a file (an lstat per directory up to the root) and with one (kept
// until it changes).
func BenchmarkProjectFilesFind(b *testing.B) {
	root := b.TempDir()
	ws := filepath.Join(root, "home", "u", "src", "team", "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	var f ProjectFiles
	b.Run("no file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, found, here := f.Find(context.Background(), ws); found || !here {
				b.Fatal("found a file")
			}
		}
	})
	if err := os.MkdirAll(filepath.Join(ws, ".toolperm"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".toolperm", "policy.json"), []byte(`{"command_rules": {"git push": "deny"}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("a file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, found, _ := f.Find(context.Background(), ws); !found {
				b.Fatal("no file")
			}
		}
	})
}
