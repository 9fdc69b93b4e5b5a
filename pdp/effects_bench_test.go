package pdp_test

// BenchmarkEffectsMix: the cost of deciding a fresh shell command at
// READ_ONLY in a real workspace, per kind — two the effects of a command
// allow (sed, grep), two that still ask (code, a write). Every iteration
// decides a command no earlier one decided (docs/performance.md).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

var effectsMixKinds = []struct {
	name   string
	format string
}{
	{"sed", "sed -n 1,80p src/file%d.py"},
	{"grep", "grep -rn foo%d src"},
	{"python", "python3 run%d.py"},
	{"heredoc", "cat <<'EOF' > f%d.py\nx\nEOF"},
}

func effectsMixWorkspace(tb testing.TB) string {
	return newWorkspace(tb, "src/file0.py", "src/a.py", "run0.py")
}

// newWorkspace makes a workspace, its path with every link resolved,
// holding files (each "x\n"); a name ending in "/" is a directory.
func newWorkspace(tb testing.TB, files ...string) string {
	tb.Helper()
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	ws := filepath.Join(root, "w")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(ws, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return ws
}

func effectsMixCall(ws string, s *pdp.SessionTree, cmd string) pdp.Call {
	return pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: ws}, Session: s}
}

var effectsMixSeq int

func BenchmarkEffectsMix(b *testing.B) {
	for _, k := range effectsMixKinds {
		b.Run(k.name, func(b *testing.B) {
			ws := effectsMixWorkspace(b)
			e := newEngine(b, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
			s := &pdp.SessionTree{Workspace: ws, PermissionLevel: api.ReadOnly}
			// One warm-up decision so the engine's one-time set-up is not counted.
			decide(b, e, effectsMixCall(ws, s, fmt.Sprintf(k.format, -1)))
			cmds := make([]string, b.N)
			for i := range cmds {
				effectsMixSeq++
				cmds[i] = fmt.Sprintf(k.format, 1000000+effectsMixSeq)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			for i := 0; i < b.N; i++ {
				if _, err := e.Decide(ctx, effectsMixCall(ws, s, cmds[i])); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

// TestEffectsMixDecisions logs what each kind is decided, for the report.
func TestEffectsMixDecisions(t *testing.T) {
	ws := effectsMixWorkspace(t)
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	s := &pdp.SessionTree{Workspace: ws, PermissionLevel: api.ReadOnly}
	for _, k := range effectsMixKinds {
		d := decide(t, e, effectsMixCall(ws, s, fmt.Sprintf(k.format, 7)))
		t.Logf("%-8s %s rule=%s reason=%q", k.name, d.Decision, d.Rule, d.Reason)
	}
}
