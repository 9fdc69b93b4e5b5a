package paths

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// TestWindowsPathsAreNeverConfinedAsPOSIX: C:\… and \\server\share read
// as POSIX paths are relative, so they would resolve inside the
// workspace. A declared path, the cwd or the workspace that is one is
// refused, saying Windows paths are not supported yet; free text that
// may be one is outside, never resolved.
func TestWindowsPathsAreNeverConfinedAsPOSIX(t *testing.T) {
	r := Resolver{}
	for _, tc := range []struct {
		name    string
		args    map[string]any
		cwd, ws string
		says    string
	}{
		{"a drive path", map[string]any{"file_path": `C:\Windows\System32\config\SAM`}, "/w", "/w", `argument "file_path"`},
		{"a drive path with slashes", map[string]any{"file_path": `c:/Users/dev/.ssh/id_rsa`}, "/w", "/w", `argument "file_path"`},
		{"a UNC path", map[string]any{"path": `\\fileserver\share\secrets.txt`}, "/w", "/w", `argument "path"`},
		{"a device path", map[string]any{"path": `\\?\C:\Windows\win.ini`}, "/w", "/w", `argument "path"`},
		{"a file URI of a drive", map[string]any{"path": `file:///C:/Windows/win.ini`}, "/w", "/w", `argument "path"`},
		{"a list item", map[string]any{"paths": []any{"/w/a", `D:\data\x`}}, "/w", "/w", `argument "paths[1]"`},
		{"the cwd", map[string]any{"file_path": `src\main.go`}, `C:\Users\dev\proj`, "/w", "the call's cwd"},
		{"the workspace", map[string]any{"file_path": "a.txt"}, "", "/c:/Users/dev/proj", "the session's workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := r.Check(context.Background(), pdp.WorkspaceCall{Tool: "read_file", Entry: &readFile, Args: tc.args, Cwd: tc.cwd, Workspace: tc.ws})
			var bad *pdp.Error
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "Windows paths") || !strings.Contains(err.Error(), "not supported yet") {
				t.Fatalf("verdict %+v, error %v: want bad input naming %s and saying Windows paths are not supported yet", v, err, tc.says)
			}
		})
	}
	// Free text (an argument the catalogue does not declare) is judged
	// strictly: outside, not resolved within the workspace.
	v, err := r.Check(context.Background(), pdp.WorkspaceCall{Tool: "mcp.fs.read", Args: map[string]any{"target": `C:\Windows\win.ini`}, Cwd: "/w", Workspace: "/w"})
	if err != nil || !slices.Contains(v.Outside, `C:\Windows\win.ini`) {
		t.Fatalf("outside %q, error %v: want the Windows path outside", v.Outside, err)
	}
	for _, p := range v.Paths {
		if p.Value == `C:\Windows\win.ini` && p.Inside {
			t.Fatalf("judged inside the workspace: %+v", p)
		}
	}
}
