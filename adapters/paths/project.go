package paths

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/toolperm/pdp/internal/projectfile"
	"github.com/toolperm/pdp/pdp"
)

// ProjectFiles finds the project policy file of workspaces on this host
// (pdp.ProjectFiles): the nearest .toolperm/policy.json at or above the
// workspace, read as internal/projectfile reads it (no link followed,
// no FIFO waited on, the text kept until the file changes).
type ProjectFiles struct {
	reader projectfile.Reader
}

// Find looks for workspace's project file. here is false when the
// workspace (cleaned) does not exist on this host; any other failure to
// look at it is a found file with an error, which denies.
func (f *ProjectFiles) Find(_ context.Context, workspace string) (pdp.ProjectFile, bool, bool) {
	ws := filepath.Clean(workspace)
	if !filepath.IsAbs(ws) {
		return pdp.ProjectFile{}, false, false
	}
	st, err := os.Stat(ws)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return pdp.ProjectFile{}, false, false
	case err != nil:
		return pdp.ProjectFile{Dir: ws, Err: fmt.Errorf("cannot look at the workspace %s: %w", ws, err)}, true, true
	case !st.IsDir():
		return pdp.ProjectFile{Dir: ws, Err: fmt.Errorf("the workspace %s is not a directory", ws)}, true, true
	}
	file, found := f.reader.Nearest(ws)
	if !found {
		return pdp.ProjectFile{}, false, true
	}
	return pdp.ProjectFile{Dir: file.Dir, Content: file.Content, Err: file.Err}, true, true
}
