//go:build unix

package paths

import (
	"io/fs"
	"syscall"
)

// inode is the file's inode number, so a file replaced by another of the
// same size and time is read again.
func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}

var errNotDir = syscall.ENOTDIR
