package hookflow

import (
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/projectfile"
)

// ProjectFile is the project's policy file as this host has it, for a
// PDP that cannot read the workspace itself (docs/policy.md, "The
// project layer"): the nearest .toolperm/policy.json at or above start
// (the workspace the hook knows, else the event's cwd), with the
// directory holding it; its text, or why it cannot be used — which the
// PDP turns into a deny, as it does a malformed file; nil when there is
// none. The PDP takes it only for a directory at or above the session's
// workspace and only where it cannot read the workspace, and the layer
// only tightens, so a hook that leaves it out makes nothing looser than
// the organisation's policy.
func ProjectFile(start string) *api.ProjectFile {
	if start == "" || !filepath.IsAbs(start) {
		return nil
	}
	var r projectfile.Reader
	f, found := r.Nearest(start)
	switch {
	case !found:
		return nil
	case f.Err != nil:
		return &api.ProjectFile{Dir: f.Dir, Error: f.Err.Error()}
	case len(f.Content) > api.MaxProjectFileBytes:
		return &api.ProjectFile{Dir: f.Dir, Error: fmt.Sprintf("the file is larger than the %d bytes a project policy may have", api.MaxProjectFileBytes)}
	case !utf8.Valid(f.Content):
		// JSON would carry invalid bytes as U+FFFD: the PDP would judge
		// another text than the file's.
		return &api.ProjectFile{Dir: f.Dir, Error: "the file is not UTF-8 text"}
	}
	return &api.ProjectFile{Dir: f.Dir, Content: string(f.Content)}
}
