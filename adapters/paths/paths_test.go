package paths

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

func TestCheck(t *testing.T) {
	r := Resolver{}
	cases := []struct {
		name      string
		args      map[string]any
		cwd, ws   string
		outside   []string
		checkedN  int
		wantError bool
	}{
		{"inside", map[string]any{"path": "/w/a"}, "", "/w", nil, 1, false},
		{"the workspace itself", map[string]any{"path": "/w"}, "", "/w", nil, 1, false},
		{"relative to the workspace", map[string]any{"path": "a/b"}, "", "/w", nil, 1, false},
		{"relative to cwd", map[string]any{"path": "../b"}, "/w/sub", "/w", nil, 2, false},
		{"relative cwd", map[string]any{"path": "b"}, "sub", "/w", nil, 2, false},
		{"cwd outside", map[string]any{}, "/etc", "/w", []string{"/etc"}, 1, false},
		{"keys in any case", map[string]any{"File_Path": "/etc/x", "FILE": "/w/y"}, "", "/w", []string{"/etc/x"}, 2, false},
		{"glob argument", map[string]any{"glob": "/etc/**/*.conf"}, "", "/w", []string{"/etc/**/*.conf"}, 1, false},
		{"glob inside", map[string]any{"glob": "src/**/*.go"}, "", "/w", nil, 1, false},
		{"dotdot", map[string]any{"path": "../etc/passwd"}, "", "/w", []string{"../etc/passwd"}, 1, false},
		{"dotdot in the middle", map[string]any{"file_path": "/w/a/../../etc"}, "", "/w", []string{"/w/a/../../etc"}, 1, false},
		{"absolute outside", map[string]any{"file_path": "/etc/passwd"}, "", "/w", []string{"/etc/passwd"}, 1, false},
		{"sibling prefix", map[string]any{"path": "/wx/a"}, "", "/w", []string{"/wx/a"}, 1, false},
		{"tilde", map[string]any{"path": "~/.ssh/id_rsa"}, "", "/w", []string{"~/.ssh/id_rsa"}, 1, false},
		{"NUL", map[string]any{"path": "/w/a\x00/etc"}, "", "/w", []string{"/w/a\x00/etc"}, 1, false},
		{"one of many", map[string]any{"paths": []any{"/w/a", "/tmp/b"}, "path": "/w/c"}, "", "/w", []string{"/tmp/b"}, 3, false},
		{"no workspace confines nothing", map[string]any{"path": "/w/a"}, "", "", []string{"/w/a"}, 1, false},
		{"relative workspace", map[string]any{"path": "/w/a"}, "", "w", []string{"/w/a"}, 1, false},
		{"declared data is not a path", map[string]any{"content": "cat /etc/passwd"}, "", "/w", nil, 0, false},
		{"null path is absent", map[string]any{"path": nil}, "", "/w", nil, 0, false},
		{"wrong type", map[string]any{"path": 7.0}, "", "/w", nil, 0, true},
		{"a list where one path is declared", map[string]any{"path": []any{"/w/a", "/etc/b"}}, "", "/w", nil, 0, true},
		{"a string where a list is declared", map[string]any{"paths": "/etc/b"}, "", "/w", []string{"/etc/b"}, 1, false},
		{"wrong item type", map[string]any{"paths": []any{"/w/a", 1.0}}, "", "/w", nil, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := r.Check(context.Background(), pdp.WorkspaceCall{Tool: "read_file", Entry: &readFile, Args: tc.args, Cwd: tc.cwd, Workspace: tc.ws})
			if (err != nil) != tc.wantError {
				t.Fatalf("error %v, want error %v", err, tc.wantError)
			}
			if !reflect.DeepEqual(v.Outside, tc.outside) || len(v.Checked) != tc.checkedN {
				t.Fatalf("outside %q checked %q; want outside %q, %d checked", v.Outside, v.Checked, tc.outside, tc.checkedN)
			}
		})
	}
}

func TestSymlinks(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "secret")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, outside, filepath.Join(ws, "link"))
	mustSymlink(t, filepath.Join(base, "nowhere"), filepath.Join(ws, "dangling"))
	mustSymlink(t, filepath.Join(ws, "real"), filepath.Join(base, "wslink"))
	if err := os.Mkdir(filepath.Join(ws, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "deep", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(outside, "deep"), filepath.Join(ws, "deeplink"))

	follow := Resolver{FollowSymlinks: true}
	cases := []struct {
		name    string
		path    string
		ws      string
		outside bool
	}{
		{"link out of the workspace", filepath.Join(ws, "link", "key"), ws, true},
		{"a new file behind the link", filepath.Join(ws, "link", "new", "file"), ws, true},
		{"dangling link", filepath.Join(ws, "dangling"), ws, true},
		{"plain file", filepath.Join(ws, "real", "a.go"), ws, false},
		{"new file in the workspace", filepath.Join(ws, "new.go"), ws, false},
		{"workspace reached through a link", filepath.Join(base, "wslink", "a.go"), ws, false},
		{"dotdot after a link goes up from its target", ws + "/deeplink/../secret.txt", ws, true},
		{"dotdot below a link", ws + "/deeplink/x/../../secret.txt", ws, true},
		{"dotdot from a missing directory back onto a link", ws + "/new/../link/key", ws, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := follow.Check(context.Background(), pdp.WorkspaceCall{Entry: &readFile, Args: map[string]any{"path": tc.path}, Workspace: tc.ws})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(v.Outside) > 0; got != tc.outside {
				t.Fatalf("outside=%v, want %v (checked %q)", got, tc.outside, v.Checked)
			}
		})
	}

	// Without following links the path is judged by its text.
	v, _ := Resolver{}.Check(context.Background(), pdp.WorkspaceCall{Entry: &readFile, Args: map[string]any{"path": filepath.Join(ws, "link", "key")}, Workspace: ws})
	if len(v.Outside) != 0 {
		t.Fatalf("lexical check called a path under the workspace outside: %q", v.Outside)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// deepWorkspace is a new workspace holding a tree 1,500 directories deep
// and ws/link, a symbolic link to its bottom; it skips where the file
// system cannot hold such a tree.
func deepWorkspace(t testing.TB) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	deep := filepath.Join(append([]string{ws, "deep"}, strings.Split(strings.Repeat("d/", 1500), "/")...)...)
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Skipf("cannot build a 1,500-deep tree here: %v", err)
	}
	mustSymlink(t, deep, filepath.Join(ws, "link"))
	return ws
}

// readFile is the catalogue entry the unit tests use: path arguments of
// every spelling, content as data, everything else checked strictly.
var readFile = pdp.ToolEntry{Capability: "fs.read", Other: pdp.KindPath, Args: map[string]pdp.ArgKind{
	"path": pdp.KindPath, "file_path": pdp.KindPath, "file": pdp.KindPath, "paths": pdp.KindPaths,
	"glob": pdp.KindGlob, "content": pdp.KindData,
}}
