package paths

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolperm/pdp/api"
)

// ProjectFiles reads the project policy file (api.ProjectFileName) of
// workspaces on this host, for pdp.ProjectFiles. A file is read again
// only when its size, modification time or inode changed, so a decision
// costs one stat of it.
type ProjectFiles struct {
	mu    sync.Mutex
	files map[string]projectFile
}

type projectFile struct {
	size    int64
	mod     time.Time
	ino     uint64
	content []byte
}

// maxProjectFiles bounds the files kept; past it the cache starts again.
const maxProjectFiles = 1024

// Read returns the text of workspace's project policy file: here is
// false when the workspace is not an absolute path of a directory on
// this host, found false when it holds no such file. A file that is
// there but cannot be read (not a regular file, no permission) is an
// error, which denies the session's calls.
func (f *ProjectFiles) Read(_ context.Context, workspace string) ([]byte, bool, bool, error) {
	if !filepath.IsAbs(workspace) {
		return nil, false, false, nil
	}
	if st, err := os.Stat(workspace); err != nil || !st.IsDir() {
		return nil, false, false, nil
	}
	name := filepath.Join(workspace, filepath.FromSlash(api.ProjectFileName))
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A .toolperm that is a file, or no .toolperm: no project layer.
		return nil, false, true, nil
	case errors.Is(err, os.ErrPermission):
		return nil, false, true, fmt.Errorf("cannot read %s: %w", name, err)
	case err != nil:
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) && errors.Is(pathErr.Err, errNotDir) {
			return nil, false, true, nil
		}
		return nil, false, true, fmt.Errorf("cannot read %s: %w", name, err)
	case !st.Mode().IsRegular():
		return nil, false, true, fmt.Errorf("%s is not a regular file", name)
	}
	ino := inode(st)
	f.mu.Lock()
	cached, ok := f.files[name]
	f.mu.Unlock()
	if ok && cached.size == st.Size() && cached.mod.Equal(st.ModTime()) && cached.ino == ino {
		return cached.content, true, true, nil
	}
	content, err := readAtMost(name, api.MaxProjectFileBytes+1)
	if err != nil {
		return nil, false, true, fmt.Errorf("cannot read %s: %w", name, err)
	}
	f.mu.Lock()
	if f.files == nil || len(f.files) >= maxProjectFiles {
		f.files = map[string]projectFile{}
	}
	f.files[name] = projectFile{size: st.Size(), mod: st.ModTime(), ino: ino, content: content}
	f.mu.Unlock()
	return content, true, true, nil
}

// readAtMost reads up to n bytes of the file: enough to tell that a file
// is too large without reading all of it.
func readAtMost(name string, n int64) ([]byte, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(io.LimitReader(file, n))
}
