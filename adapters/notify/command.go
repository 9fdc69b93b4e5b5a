package notify

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// commandSink runs a program, without a shell, with the event as JSON
// on its standard input; exit status 0 is a success. It is killed at
// the attempt's timeout.
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
