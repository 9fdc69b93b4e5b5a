package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// TestTerminalAsksShowWhoWaits: `pdp asks` has a WAITING column naming
// the runtime parked on an ask, and "nobody" for an ask nobody waits on.
func TestTerminalAsksShowWhoWaits(t *testing.T) {
	t.Setenv("PDP_TOKEN", "")
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	waited := askIn(t, c, "tw", "shell", map[string]any{"command": "make check"})
	alone := askIn(t, c, "tw", "shell", map[string]any{"command": "make docs"})
	ctx, leave := context.WithCancel(t.Context())
	defer leave()
	go func() { _, _ = c.Decision(ctx, waited.DecisionID, time.Minute) }()
	for deadline := time.Now().Add(20 * time.Second); ; {
		ev, err := c.Decision(t.Context(), waited.DecisionID, 0)
		if err == nil && len(ev.Waiting) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the wait did not show: %+v %v", ev.Waiting, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, err := runTerminal(t, "asks", "--url", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := askRows(out)
	if len(lines) != 3 || !strings.Contains(lines[0], "WAITING") {
		t.Fatalf("asks:\n%s", out)
	}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, waited.DecisionID) && strings.Contains(l, "anonymous, "):
		case strings.HasPrefix(l, alone.DecisionID) && strings.Contains(l, "nobody"):
		default:
			t.Fatalf("line %q: want anonymous waiting on %s and nobody on %s", l, waited.DecisionID, alone.DecisionID)
		}
	}
}
