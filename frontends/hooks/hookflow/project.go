package hookflow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"

	"github.com/toolperm/pdp/api"
)

// ProjectFile is the project's policy file (api.ProjectFileName) of the
// workspace as this host has it, for a PDP that cannot read the
// workspace itself (docs/policy.md, "The project layer"): nil when there
// is none, its text, or why it cannot be read — which the PDP turns into
// a deny, as it does a malformed file. The PDP only takes it where it
// cannot read the workspace, and the layer only tightens, so a hook that
// leaves it out makes nothing looser than the organisation's policy.
func ProjectFile(workspace string) *api.ProjectFile {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return nil
	}
	name := filepath.Join(workspace, filepath.FromSlash(api.ProjectFileName))
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return &api.ProjectFile{Error: err.Error()}
	case !st.Mode().IsRegular():
		return &api.ProjectFile{Error: name + " is not a regular file"}
	}
	f, err := os.Open(name)
	if err != nil {
		return &api.ProjectFile{Error: err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, api.MaxProjectFileBytes+1))
	switch {
	case err != nil:
		return &api.ProjectFile{Error: err.Error()}
	case len(b) > api.MaxProjectFileBytes:
		return &api.ProjectFile{Error: fmt.Sprintf("%s is larger than the %d bytes a project policy may have", name, api.MaxProjectFileBytes)}
	case !utf8.Valid(b):
		// JSON would carry invalid bytes as U+FFFD: the PDP would judge
		// another text than the file's.
		return &api.ProjectFile{Error: name + " is not UTF-8 text"}
	}
	return &api.ProjectFile{Content: string(b)}
}
