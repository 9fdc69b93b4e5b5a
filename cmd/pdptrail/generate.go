package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// trailSession names the session of the i-th event: sixteen sessions
// at a time, each for a thousand events.
func trailSession(i, sessions int) string {
	return fmt.Sprintf("trail-%05d", ((i/1000)*16+i%16)%sessions)
}

// trailEvent is the i-th event of a trail of n over span, ending at end.
func trailEvent(i, n, sessions int, span time.Duration, end time.Time) pdp.AuditRecord {
	at := end.Add(-span + time.Duration(float64(span)*float64(i)/float64(n)))
	session := trailSession(i, sessions)
	h := uint64(i) * 0x9e3779b97f4a7c15 // decision, source and kind of call vary independently
	decision := api.Allow
	switch r := (h >> 40) % 10; {
	case r < 2:
		decision = api.Deny
	case r < 3:
		decision = api.Ask
	}
	source := []string{"level", "level", "level", "level", "level", "rule", "rule", "mode", "default", "parent"}[(h>>48)%10]
	if decision == api.Allow && (h>>56)%10 == 1 {
		source = "grant"
	}
	capability, tool := "shell.exec", "shell"
	args := map[string]any{"command": fmt.Sprintf("go test ./internal/pkg%d/... -run Test%d", i%97, i%13)}
	if (h>>32)%3 == 0 {
		capability, tool = "fs.read", "read_file"
		args = map[string]any{"file_path": fmt.Sprintf("src/module%d/file%d.go", i%31, i%211)}
	}
	return pdp.AuditRecord{
		Time: at, SessionID: session, Latency: 40 * time.Microsecond,
		Request: api.DecideRequest{SessionID: session, Tool: tool, Args: args, Cwd: "/home/dev/project"},
		Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: decision, NeedApproval: decision == api.Ask,
			Source: source, Rule: capability, Reason: "The " + source + " rule \"" + capability + "\" says " + decision + ".",
			Capability: &capability, Revision: "sha256:35e31c73292d9ad2"},
	}
}

func generate(argv []string) error {
	fs := flag.NewFlagSet("generate", flag.ExitOnError)
	db := fs.String("db", "", "SQLite file to write (created if missing; events are added)")
	events := fs.Int("events", 1_000_000, "events to write")
	sessions := fs.Int("sessions", 10_000, "sessions the events belong to")
	span := fs.Duration("span", 30*24*time.Hour, "the events' times are spread over this, ending now")
	endAgo := fs.Duration("end-ago", 0, "end the span this long ago (to add an older half to a trail)")
	workers := fs.Int("workers", 256, "concurrent writers (group commit batches them)")
	_ = fs.Parse(argv)
	if *db == "" {
		return fmt.Errorf("generate: -db is required")
	}
	ctx := context.Background()
	store, err := sqlite.Open(ctx, *db, sqlite.Options{Synchronous: "OFF", Pragmas: []string{"cache_size = -262144"}})
	if err != nil {
		return err
	}
	end := time.Now().Add(-*endAgo)
	var next, done atomic.Int64
	start := time.Now()
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				n := done.Load()
				fi, _ := os.Stat(*db)
				var size int64
				if fi != nil {
					size = fi.Size()
				}
				fmt.Fprintf(os.Stderr, "%d events, %.0f/s, %d MB\n", n, float64(n)/time.Since(start).Seconds(), size>>20)
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, *workers)
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= *events {
					return
				}
				if err := store.Record(ctx, trailEvent(i, *events, *sessions, *span, end)); err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	err = <-errs
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "wrote %d events in %s (%.0f/s)\n", done.Load(), took.Round(time.Second), float64(done.Load())/took.Seconds())
	return err
}
