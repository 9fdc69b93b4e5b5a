package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// The example against the real API: the read in the workspace runs, the
// read outside it does not, the shell command runs once a person allows it.
func TestDispatcher(t *testing.T) {
	ctx := context.Background()
	srv := testserver.New(t)

	go func() { // the person
		c := client.New(srv.URL)
		for range 200 {
			time.Sleep(20 * time.Millisecond)
			page, err := c.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 1})
			if err == nil && len(page.Decisions) == 1 {
				_, _ = c.Answer(ctx, page.Decisions[0].DecisionID, client.AllowOnce, "test")
				return
			}
		}
	}()
	var out bytes.Buffer
	if err := run(ctx, config{url: srv.URL, session: "example", wait: 10 * time.Second}, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"read_file map[path:go.mod]\n  → ran read_file",
		"read_file map[path:/etc/passwd]\n  → not run: denied",
		"waiting up to 10s for a person",
		"shell map[command:make check]\n  → ran shell",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q not in:\n%s", want, got)
		}
	}
}
