//go:build !unix

package paths

import (
	"io/fs"
	"syscall"
)

// inode is 0 where the system has no inode numbers: size and time alone
// tell a changed file.
func inode(fs.FileInfo) uint64 { return 0 }

var errNotDir = syscall.ENOTDIR
