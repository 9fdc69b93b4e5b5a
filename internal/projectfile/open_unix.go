//go:build unix

package projectfile

import (
	"io/fs"
	"os"
	"syscall"
	"time"
)

// openFile opens name for reading without following a final symbolic
// link (ELOOP) and without waiting for a FIFO's writer.
func openFile(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// statKey tells a changed file: its size, modification and change
// times, inode and device.
type statKey struct {
	size       int64
	mod, ctime time.Time
	ino, dev   uint64
}

func keyOf(st fs.FileInfo) statKey {
	k := statKey{size: st.Size(), mod: st.ModTime()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		k.ino, k.dev = uint64(s.Ino), uint64(s.Dev)
		k.ctime = ctimeOf(s)
	}
	return k
}
