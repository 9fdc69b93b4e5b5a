//go:build unix

package projectfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolperm/pdp/internal/projectfile"
)

func write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTheNearestFileAtOrAbove(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "repo", ".toolperm", "policy.json"), `{"rules": {}}`)
	if err := os.MkdirAll(filepath.Join(root, "repo", "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	var r projectfile.Reader
	for _, start := range []string{filepath.Join(root, "repo"), filepath.Join(root, "repo", "sub", "deeper"), filepath.Join(root, "repo", "sub", "..", "sub")} {
		f, found := r.Nearest(start)
		if !found || f.Err != nil || f.Dir != filepath.Join(root, "repo") || string(f.Content) != `{"rules": {}}` {
			t.Fatalf("from %s: %+v %v", start, f, found)
		}
	}
	if f, found := r.Nearest(root); found {
		t.Fatalf("above the repository: %+v", f)
	}
	// A nearer file wins, as git finds its directory.
	write(t, filepath.Join(root, "repo", "sub", ".toolperm", "policy.json"), `{"command_rules": {}}`)
	if f, _ := r.Nearest(filepath.Join(root, "repo", "sub", "deeper")); f.Dir != filepath.Join(root, "repo", "sub") {
		t.Fatalf("the nearer file: %+v", f)
	}
	// An edit is read again.
	write(t, filepath.Join(root, "repo", ".toolperm", "policy.json"), `{"rules": {"fs.write": "ask"}}`)
	if f, _ := r.Nearest(filepath.Join(root, "repo")); string(f.Content) != `{"rules": {"fs.write": "ask"}}` {
		t.Fatalf("after an edit: %s", f.Content)
	}
}

// TestWhatIsNotAPlainFileIsAnError: a FIFO is not waited on (a hook that
// hangs is killed by its agent, which then runs the tool), a link is not
// followed (its target is a file no path rule protects), a directory is
// not read: each is an error, which denies.
func TestWhatIsNotAPlainFileIsAnError(t *testing.T) {
	cases := map[string]func(t *testing.T, repo string){
		"a FIFO": func(t *testing.T, repo string) {
			if err := os.MkdirAll(filepath.Join(repo, ".toolperm"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(filepath.Join(repo, ".toolperm", "policy.json"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"a linked file": func(t *testing.T, repo string) {
			write(t, filepath.Join(repo, "cfg", "policy.json"), "{}")
			if err := os.MkdirAll(filepath.Join(repo, ".toolperm"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(repo, "cfg", "policy.json"), filepath.Join(repo, ".toolperm", "policy.json")); err != nil {
				t.Fatal(err)
			}
		},
		"a linked directory": func(t *testing.T, repo string) {
			write(t, filepath.Join(repo, "cfg", "policy.json"), "{}")
			if err := os.Symlink(filepath.Join(repo, "cfg"), filepath.Join(repo, ".toolperm")); err != nil {
				t.Fatal(err)
			}
		},
		"a directory": func(t *testing.T, repo string) {
			if err := os.MkdirAll(filepath.Join(repo, ".toolperm", "policy.json"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		".toolperm a file": func(t *testing.T, repo string) {
			write(t, filepath.Join(repo, ".toolperm"), "{}")
		},
	}
	for name, setUp := range cases {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			setUp(t, repo)
			var r projectfile.Reader
			f, found := r.Nearest(repo)
			if !found || f.Err == nil || f.Dir != repo {
				t.Fatalf("got %+v %v, want an error", f, found)
			}
			if !strings.Contains(f.Err.Error(), ".toolperm") {
				t.Fatalf("the error %q does not name the file", f.Err)
			}
		})
	}
}
