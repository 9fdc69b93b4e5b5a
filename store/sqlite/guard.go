package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A server's claim on its database file: one serving process per file
// (the session-tree cache trusts that this process sees every write it
// makes), and a file that is still the one it opened.

// lockFile is the lock beside a database file that a serving process
// holds: flock(2), released by the kernel however the process ends.
type lockFile struct {
	f    *os.File
	path string
}

// LockPath is the lock file of the database at path.
func LockPath(path string) string { return path + ".lock" }

// lock takes the exclusive lock of the database at path, or says which
// process holds it.
func lock(path string) (*lockFile, error) {
	lp := LockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", lp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if raw, rerr := os.ReadFile(lp); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(raw))); perr == nil {
					holder = "process " + strconv.Itoa(pid)
				}
			}
			return nil, fmt.Errorf("the database %s is in use by %s (it holds %s): one pdp serve per SQLite file; stop it first, or use PostgreSQL for replicas", path, holder, lp)
		}
		return nil, fmt.Errorf("locking %s: %w", lp, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lockFile{f: f, path: lp}, nil
}

// release gives the lock up; the file stays (another process may already
// hold a new lock on it, so removing it would split the two).
func (l *lockFile) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}

// fileID is what names one file: its device and inode.
type fileID struct{ dev, ino uint64 }

func identify(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("%s: no device and inode", path)
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// checkFile compares the file path names now with the one opened. A
// file deleted, or replaced (a rotation by mv, a restore, a remount), is
// a fault: what this process writes would be lost at its next start, so
// it refuses decisions until the file is back.
func (s *Store) checkFile() {
	if s.path == "" {
		return
	}
	now, err := identify(s.path)
	switch {
	case err != nil:
		s.setFault(fmt.Errorf("the database file %s is gone (%v): decisions are refused until it is back or pdp serve restarts", s.path, err))
	case now != s.fileID:
		s.setFault(fmt.Errorf("the database file %s was replaced (inode %d, now %d): decisions are refused until it is back or pdp serve restarts", s.path, s.fileID.ino, now.ino))
	default:
		s.setFault(nil)
	}
}

func (s *Store) setFault(err error) {
	was := s.health.Fault()
	s.health.SetFault(err)
	switch {
	case err != nil && was == nil:
		s.log.Error("database file fault", "err", err)
	case err == nil && was != nil:
		s.log.Info("database file is back", "path", s.path)
	}
}

// idleProbe is how long the store may go without a successful write
// before it tries one of its own, so a disk that filled while nothing
// was decided shows in GET /ready.
const idleProbe = 5 * time.Second

// watch checks the file every interval and, while writes fail or none
// succeeded for a while, probes with a write of its own, until ctx ends.
func (s *Store) watch(ctx context.Context, interval time.Duration) {
	defer close(s.watched)
	t := time.NewTicker(interval)
	defer t.Stop()
	lastProbe := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.checkFile()
		if s.health.Fault() != nil {
			continue
		}
		if (s.health.Failing() && time.Since(lastProbe) >= time.Second) || s.health.Idle(idleProbe) && time.Since(lastProbe) >= idleProbe {
			lastProbe = time.Now()
			s.health.Wrote(s.probe(ctx))
		}
	}
}

// probe commits a write (the row of the last migration, unchanged), as
// an audit batch would, on the writer's connection.
func (s *Store) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := s.write.ExecContext(ctx, `UPDATE schema_migrations SET version = version WHERE version = (SELECT max(version) FROM schema_migrations)`)
	return err
}

// Health is why the audit trail cannot be written now, or nil: the file
// check, the result of the last writes and of the probes. It never waits
// on the database.
func (s *Store) Health() error {
	if err := s.health.Err(); err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}
