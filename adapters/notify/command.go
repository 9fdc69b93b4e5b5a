package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// commandSink runs a program, without a shell, with the event as JSON
// on its standard input; exit status 0 is a success. It runs in a
// process group of its own, killed whole at the attempt's timeout (or
// when the notifier stops): a shell's children go with it.
type commandSink struct{ argv []string }

func (c commandSink) deliver(ctx context.Context, ev *Event) error {
	body, _, err := ev.body(time.Now())
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.argv[0], c.argv[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The group's id is the program's pid (Setpgid).
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return os.ErrProcessDone
	}
	// A process that left the group and holds the output open does not
	// hold the attempt: its pipes are closed a second after the kill.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", c.argv[0], err, strings.TrimSpace(out.String()))
	}
	return nil
}

// limitedBuffer keeps the first 1 KiB of a program's output, for the log.
type limitedBuffer struct{ b bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 1024 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return l.b.String() }
