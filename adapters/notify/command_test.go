package notify_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/notify"
)

// A command sink that outlives its timeout is killed with every process
// it started: a shell's children and grandchildren are not left running.
func TestATimedOutCommandSinkLeavesNoProcess(t *testing.T) {
	tr := newTrail(t)
	pids := filepath.Join(t.TempDir(), "pids")
	// The shell, a child and a subshell with a child of its own, each
	// writing its pid, then waiting far past the timeout.
	script := `echo $$ >> "$0"; sleep 60 & echo $! >> "$0"; (sleep 60 & echo $! >> "$0"; wait) & echo $! >> "$0"; wait`
	c := newCounts()
	n, err := notify.New(notify.Options{Feed: tr.hub, Observer: c, Sinks: []notify.Sink{
		{Name: "hung", Kind: notify.Command, Command: []string{"sh", "-c", script, pids}, Events: []string{"ask"}, Timeout: time.Second, MaxAttempts: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stop := n.Start(t.Context())
	defer stop()
	tr.ask("s", "make")
	c.await(t, "the hung sink given up", func(_, failed, dropped map[string]int) bool {
		return failed["hung"] == 1 && dropped["hung gave_up"] == 1
	})

	raw, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	var started []int
	for f := range strings.FieldsSeq(string(raw)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pids file %q: %v", raw, err)
		}
		started = append(started, pid)
	}
	if len(started) != 4 {
		t.Fatalf("the sink wrote pids %v, want 4 (it did not start in its second)", started)
	}
	// Whatever is left is killed at the end, so a failure leaks nothing.
	t.Cleanup(func() {
		for _, pid := range started {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	guard := time.Now().Add(10 * time.Second) // bounds a failure only
	for {
		var left []string
		for _, pid := range started {
			if state := running(pid); state != "" {
				left = append(left, fmt.Sprintf("%d (%s)", pid, state))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("processes of the sink still running 10s after its timeout: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running is the state and command of process pid when it exists and is
// not a zombie (a zombie holds nothing but its pid, until its new parent
// reaps it), else "".
func running(pid int) string {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return ""
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// pid (comm) state …: comm may hold spaces, the state follows its ")".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return "unknown"
	}
	state := stat[i+2]
	if state == 'Z' || state == 'X' {
		return ""
	}
	return string(state) + " " + string(stat[bytes.IndexByte(stat, '(')+1:i])
}
