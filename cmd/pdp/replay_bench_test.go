package main

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
)

var trailSize = flag.Int("trail", 10000, "decisions BenchmarkReplayTrail records before replaying them")

// BenchmarkReplayTrail records a trail of distinct decisions through the
// engine and the SQLite store (reads, writes, shell commands, MCP calls; no
// input repeats), then replays all of it against the built-in policy, as
// pdp replay does, and reports decisions per second.
//
//	go test ./cmd/pdp -run '^$' -bench ReplayTrail -benchtime 1x -trail 100000
func BenchmarkReplayTrail(b *testing.B) {
	ctx := context.Background()
	srv := testserver.New(b)
	policy, store, engine := srv.Policy, srv.Store, srv.Engine
	start := time.Now()
	record(b, engine, *trailSize)
	b.Logf("recorded %d decisions in %v", *trailSize, time.Since(start).Round(time.Millisecond))
	for b.Loop() {
		start := time.Now()
		report, err := pdp.Impact(ctx, policy, store, pdp.ReplayFilter{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if report.Replayed != *trailSize || report.Changed != 0 {
			b.Fatalf("report %+v", report)
		}
		b.ReportMetric(float64(report.Replayed)/took.Seconds(), "decisions/s")
	}
}

// record makes n distinct decisions from 8 goroutines (the store's group
// commit shares transactions between them).
func record(b *testing.B, engine *pdp.Engine, n int) {
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				req := api.DecideRequest{SessionID: fmt.Sprintf("s%d", i%50), Cwd: "/w"}
				switch i % 4 {
				case 0:
					req.Tool, req.Args = "read_file", map[string]any{"path": fmt.Sprintf("src/f%d.go", i)}
				case 1:
					req.Tool, req.Args = "write_file", map[string]any{"path": fmt.Sprintf("src/g%d.go", i), "content": "x"}
				case 2:
					req.Tool, req.Args = "shell", map[string]any{"command": fmt.Sprintf("go test ./pkg%d/...", i)}
				default:
					req.Tool, req.Args = "mcp__github__get_issue", map[string]any{"number": float64(i)}
				}
				session := &pdp.SessionTree{ID: req.SessionID, Workspace: "/w", PermissionLevel: pdp.Levels[i%3]}
				if _, err := engine.Decide(context.Background(), pdp.Call{Request: req, Session: session}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
