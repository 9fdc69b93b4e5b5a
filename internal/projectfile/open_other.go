//go:build !unix

package projectfile

import (
	"io/fs"
	"os"
	"time"
)

// openFile opens name for reading; the caller has checked with Lstat
// that it is a regular file.
func openFile(name string) (*os.File, error) { return os.Open(name) }

// statKey tells a changed file: its size and modification time.
type statKey struct {
	size int64
	mod  time.Time
}

func keyOf(st fs.FileInfo) statKey { return statKey{size: st.Size(), mod: st.ModTime()} }
