package testserver

import (
	"bufio"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var servingLine = regexp.MustCompile(`addr=(https?://\S+)`)

// Log is what a process wrote to its standard error so far; it may be
// read while the process runs.
type Log struct {
	mu    sync.Mutex
	lines strings.Builder
}

// String returns the lines logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines.String()
}

func (l *Log) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines.WriteString(line + "\n")
}

// Process starts cmd, a prepared `pdp serve`, kills it when t ends, and
// returns its base URL (http:// or https://) once it logs the address it
// serves on; the test fails if that takes longer than within.
func Process(t testing.TB, cmd *exec.Cmd, within time.Duration) (string, *Log) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	log := &Log{}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.add(sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-found:
		return addr, log
	case <-time.After(within):
		t.Fatalf("pdp serve did not start within %v", within)
	}
	return "", log
}
