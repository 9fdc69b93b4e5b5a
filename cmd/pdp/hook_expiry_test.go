package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// The hook's --wait on an ask that expires meanwhile denies, saying
// nobody answered in time: an expiry is never an allow.
func TestClaudeCodeHookDeniesAnExpiredAsk(t *testing.T) {
	srv, store := pdpTestServer(t)
	c := client.New(srv.URL)
	go func() {
		for range 200 {
			time.Sleep(25 * time.Millisecond)
			page, err := c.Decisions(context.Background(), client.Filter{Decision: client.Ask, Pending: true, Limit: 1})
			if err == nil && len(page.Decisions) == 1 && len(page.Decisions[0].Waiting) == 1 {
				// The hook is parked on it: the sweep expires it now.
				_, _, _ = store.ExpireAsks(context.Background(), time.Now().Add(time.Hour), 10)
				return
			}
		}
	}()
	got := runHook(t, payload(t, "bash_make_check.json"), "--url", srv.URL, "--wait", "10s", "--timeout", "15s").HookSpecificOutput
	if got.PermissionDecision != "deny" || !strings.Contains(got.PermissionDecisionReason, "expired") {
		t.Fatalf("%+v", got)
	}
}
