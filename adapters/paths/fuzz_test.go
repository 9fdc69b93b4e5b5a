package paths

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// FuzzResolverNeverClaimsInside: for any path and working directory, a
// path the resolver calls inside the workspace really is inside it —
// judged lexically, and, for paths that exist, by the kernel's own
// resolution of every symbolic link on the way.
func FuzzResolverNeverClaimsInside(f *testing.F) {
	base := f.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "src", "pkg"), filepath.Join(outside, "deep", "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	_ = os.Symlink(outside, filepath.Join(ws, "link"))
	_ = os.Symlink(filepath.Join(outside, "deep"), filepath.Join(ws, "src", "deeplink"))
	_ = os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "srclink"))
	_ = os.Symlink("../..", filepath.Join(ws, "src", "up"))
	_ = os.Symlink(filepath.Join(base, "missing"), filepath.Join(ws, "dangling"))
	_ = os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600)

	for _, seed := range [][2]string{
		{"a", ""}, {"../x", ""}, {"/etc/passwd", ""}, {"link/secret", ""}, {"link/../secret", ""}, {"src/deeplink/..", ""},
		{"src/up/outside/secret", ""}, {"srclink/pkg", ""}, {"dangling", ""}, {"~/x", ""}, {"a\x00b", ""},
		{"pkg/../../link", "src"}, {"../../outside", "src/pkg"}, {"x", "/"}, {"./././a", "."}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	follow, lexical := Resolver{FollowSymlinks: true}, Resolver{}
	realWS, _ := filepath.EvalSymlinks(ws)
	f.Fuzz(func(t *testing.T, p, cwd string) {
		args := map[string]any{"path": p}
		if cwd != "" && !filepath.IsAbs(cwd) {
			cwd = filepath.Join(ws, cwd)
		}
		vl, err := lexical.Check(context.Background(), pdp.WorkspaceCall{Entry: &readFile, Args: args, Cwd: cwd, Workspace: ws})
		if tooLarge(err) {
			return // bad input over a limit: refused, never called inside
		}
		if err != nil {
			t.Fatal(err)
		}
		abs := p
		if !filepath.IsAbs(p) {
			dir := cwd
			if dir == "" {
				dir = ws
			}
			abs = dir + "/" + p
		}
		lexInside := strings.HasPrefix(filepath.Clean(abs)+"/", ws+"/")
		if len(vl.Outside) == 0 && !lexInside && !strings.HasPrefix(p, "~") {
			t.Fatalf("lexical: %q (cwd %q) called inside, cleans to %q", p, cwd, filepath.Clean(abs))
		}
		vf, err := follow.Check(context.Background(), pdp.WorkspaceCall{Entry: &readFile, Args: args, Cwd: cwd, Workspace: ws})
		if tooLarge(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(vf.Outside) > 0 || strings.ContainsRune(abs, 0) {
			return
		}
		// The kernel's answer, where the path exists.
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if real != realWS && !strings.HasPrefix(real+"/", realWS+"/") {
				t.Fatalf("follow: %q (cwd %q) called inside, but it is %q", p, cwd, real)
			}
		}
	})
}

// tooLarge: err is the bad-input error of a path over the resolver's
// limits (path_too_long, too_many_paths), the answer such a path gets.
// tooLarge: the call was refused as bad input — over a limit, or naming a
// Windows path, which is denied as not supported — never called inside.
func tooLarge(err error) bool {
	var bad *pdp.Error
	return errors.As(err, &bad) && (bad.Code == "path_too_long" || bad.Code == "too_many_paths" || bad.Code == "windows_path")
}
