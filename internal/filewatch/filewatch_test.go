package filewatch

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRunReloadsOnEventsPollsAndSignals: a file written in a watched
// directory, a signal and the poll each reload.
func TestRunReloadsOnEventsPollsAndSignals(t *testing.T) {
	dir := t.TempDir()
	reloads := make(chan string, 16)
	signals := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Dirs: []string{dir}, Poll: time.Hour, Signals: signals}, func() { reloads <- "reload" })
	}()
	expect := func(why string) {
		t.Helper()
		select {
		case <-reloads:
		case <-time.After(10 * time.Second):
			t.Fatalf("no reload after %s", why)
		}
	}
	// The watch is set up before Run reads events; a write may race it,
	// so write until one is seen.
	deadline := time.Now().Add(10 * time.Second)
	for seen := false; !seen; {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(time.Now().String()), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case <-reloads:
			seen = true
		case <-time.After(2 * Settle):
			if time.Now().After(deadline) {
				t.Fatal("no reload after a file write")
			}
		}
	}
	signals <- syscall.SIGHUP
	expect("a signal")
	cancel()
	<-done

	// Polling alone, without directories.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go Run(ctx, Options{Poll: 20 * time.Millisecond}, func() { reloads <- "poll" })
	expect("the poll")
}
