// Package projectfile finds and reads a repository's project policy file
// (api.ProjectFileName): the one the PDP reads in a workspace on its host
// (adapters/paths) and the one a hook sends with its events
// (frontends/hooks/hookflow), read the same way.
//
// The file is the nearest .toolperm/policy.json at or above the
// directory a search starts from, as git finds its own directory. It is
// read without following a symbolic link (a link's target is a file the
// protecting path rules do not name) and without blocking (a FIFO put in
// its place must not hang a hook, which an agent then kills and runs the
// tool anyway): only a regular file is read, at most
// api.MaxProjectFileBytes+1 bytes of it. Anything else that is there —
// a link, a FIFO, a directory, a file that cannot be read — is an error
// the PDP turns into a deny.
package projectfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/toolperm/pdp/api"
)

// File is a project policy file found by a search.
type File struct {
	// Dir is the directory holding .toolperm.
	Dir string
	// Content is the file's text; Err why it cannot be used.
	Content []byte
	Err     error
}

// Reader finds project files, keeping each file's text until its size,
// times, inode or device change, so a search costs a few lstats.
type Reader struct {
	mu    sync.Mutex
	files map[string]cached
}

type cached struct {
	key     statKey
	content []byte
}

// maxCached bounds the files kept; past it the cache starts again.
const maxCached = 1024

// Nearest is the nearest project file at or above start (an absolute,
// cleaned path); false when there is none up to the root.
func (r *Reader) Nearest(start string) (File, bool) {
	dir := filepath.Clean(start)
	for {
		if f, ok := r.at(dir); ok {
			return f, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return File{}, false
		}
		dir = parent
	}
}

// at is dir's project file, false when dir holds none.
func (r *Reader) at(dir string) (File, bool) {
	tp := filepath.Join(dir, filepath.Dir(filepath.FromSlash(api.ProjectFileName)))
	st, err := os.Lstat(tp)
	switch {
	case absent(err):
		return File{}, false
	case err != nil:
		return File{Dir: dir, Err: fmt.Errorf("cannot read %s: %w", tp, err)}, true
	case st.Mode()&fs.ModeSymlink != 0:
		return File{Dir: dir, Err: fmt.Errorf("%s is a symbolic link: the project's policy is read only from a directory of the repository", tp)}, true
	case !st.IsDir():
		return File{Dir: dir, Err: fmt.Errorf("%s is not a directory", tp)}, true
	}
	name := filepath.Join(dir, filepath.FromSlash(api.ProjectFileName))
	st, err = os.Lstat(name)
	switch {
	case absent(err):
		return File{}, false
	case err != nil:
		return File{Dir: dir, Err: fmt.Errorf("cannot read %s: %w", name, err)}, true
	case !st.Mode().IsRegular():
		return File{Dir: dir, Err: fmt.Errorf("%s is not a regular file", name)}, true
	}
	key := keyOf(st)
	r.mu.Lock()
	c, ok := r.files[name]
	r.mu.Unlock()
	if ok && c.key == key {
		return File{Dir: dir, Content: c.content}, true
	}
	content, key, err := read(name)
	if err != nil {
		return File{Dir: dir, Err: fmt.Errorf("cannot read %s: %w", name, err)}, true
	}
	r.mu.Lock()
	if r.files == nil || len(r.files) >= maxCached {
		r.files = map[string]cached{}
	}
	r.files[name] = cached{key: key, content: content}
	r.mu.Unlock()
	return File{Dir: dir, Content: content}, true
}

// absent: nothing by that name (or a file where a directory was meant).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// read opens name without following a link or blocking, checks on the
// open file that it is a regular one, and reads at most one byte more
// than a project file may have.
func read(name string) ([]byte, statKey, error) {
	f, err := openFile(name)
	if err != nil {
		return nil, statKey{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, statKey{}, err
	}
	if !st.Mode().IsRegular() {
		return nil, statKey{}, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, api.MaxProjectFileBytes+1))
	return b, keyOf(st), err
}
