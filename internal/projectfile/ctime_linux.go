//go:build linux

package projectfile

import (
	"syscall"
	"time"
)

func ctimeOf(s *syscall.Stat_t) time.Time { return time.Unix(s.Ctim.Sec, s.Ctim.Nsec) }
