package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/store/sqlite"
)

// steadyLoad posts decisions from four clients, each one every 10 ms,
// until stop is closed, and counts the answers that were not 200.
func steadyLoad(url string, stop <-chan struct{}, ok, failed *atomic.Int64) {
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				body := fmt.Sprintf(`{"session_id":"load-%d","tool":"shell","args":{"command":"make check %d"},"cwd":"/w"}`, w, i)
				resp, err := client.Post(url+"/v1/decide", "application/json", strings.NewReader(body))
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestRetentionBoundsTheTrailUnderLoad: with a retention of 2s swept
// every second, a real `pdp serve` under constant load keeps no event
// older than retention + interval (and a sweep), and its file stops
// growing.
func TestRetentionBoundsTheTrailUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and loads it for 12s")
	}
	db := filepath.Join(t.TempDir(), "pdp.db")
	cmd := serveProcess(db, repoConfig, "PDP_AUDIT_RETENTION=2s", "PDP_AUDIT_SWEEP_INTERVAL=1s")
	url := startCmd(t, cmd)
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { steadyLoad(url, stop, &ok, &failed); close(done) }()

	store, err := sqlite.Open(t.Context(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := time.Now()
	var firstHalf, secondHalf, wal int64
	// The most events the trail held in each half: the load's rate moves
	// on a busy machine, and what the file must hold moves with it.
	var firstEvents, secondEvents int64
	var oldestAge time.Duration
	for time.Since(start) < 12*time.Second {
		time.Sleep(250 * time.Millisecond)
		size := fileSize(db)
		wal = max(wal, fileSize(db+"-wal"))
		switch el := time.Since(start); {
		case el > 4*time.Second && el <= 8*time.Second:
			firstHalf = max(firstHalf, size)
		case el > 8*time.Second:
			secondHalf = max(secondHalf, size)
		}
		if el := time.Since(start); el > 4*time.Second {
			st, err := store.TrailStats(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if st.Events > 0 {
				oldestAge = max(oldestAge, time.Since(st.Oldest))
			}
			if el <= 8*time.Second {
				firstEvents = max(firstEvents, st.Events)
			} else {
				secondEvents = max(secondEvents, st.Events)
			}
		}
	}
	close(stop)
	<-done
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()

	t.Logf("%d decisions (%d failed); file at most %d bytes (%d events) in 4-8s, %d (%d events) in 8-12s; WAL at most %d; oldest event at most %s old",
		ok.Load(), failed.Load(), firstHalf, firstEvents, secondHalf, secondEvents, wal, oldestAge.Round(time.Millisecond))
	if failed.Load() != 0 {
		t.Errorf("%d decisions failed", failed.Load())
	}
	// retention + interval, and the time one sweep and one poll take.
	if oldestAge > 3*time.Second+750*time.Millisecond {
		t.Errorf("an event %s old is still in the trail (retention 2s, interval 1s)", oldestAge)
	}
	// The space of swept events is used again: the file may grow with
	// the events held (a load that speeds up holds more), by a quarter,
	// and by 64 pages (on a starved machine a few hundred decisions fill
	// a small file whose size moves by whole pages and checkpoints). That
	// the trail is swept at all is the oldest event's age, above.
	allowed := firstHalf
	if firstEvents > 0 && secondEvents > firstEvents {
		allowed = firstHalf * secondEvents / firstEvents
	}
	if secondHalf > allowed+allowed/4+64*4096 {
		t.Errorf("the file grew from %d bytes (%d events held) to %d (%d events held) under load", firstHalf, firstEvents, secondHalf, secondEvents)
	}
	for _, m := range []string{"pdp_audit_swept_events_total ", "pdp_audit_trail_events ", "pdp_audit_trail_bytes ", "pdp_audit_sweep_duration_seconds_count "} {
		if !bytes.Contains(metrics, []byte(m)) || bytes.Contains(metrics, []byte(m+"0\n")) {
			t.Errorf("metric %s missing or zero", m)
		}
	}
}

// runAudit runs the pdp command line in process and returns its standard
// output and error.
func runAudit(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := rootCommand()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestAuditCommands: stats, export and prune against the database of a
// running server; the export's lines are the server's decision log lines.
func TestAuditCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	db, logPath := filepath.Join(dir, "pdp.db"), filepath.Join(dir, "decisions.jsonl")
	cfg := writeConfig(t, dir, "decision_log:\n  path: "+logPath+"\n  mask: [command]\n  replica_id: r1\n")
	cmd := serveProcess(db, cfg)
	url := startCmd(t, cmd)
	for i := range 30 {
		body := fmt.Sprintf(`{"session_id":"cli-%d","tool":"shell","args":{"command":"make check %d"},"cwd":"/w"}`, i%3, i)
		resp, err := http.Post(url+"/v1/decide", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	out, _, err := runAudit(t, "audit", "stats", "--db", db, "--config", cfg)
	if err != nil || !strings.Contains(out, "events    30") && !strings.Contains(out, "events  30") {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	for _, want := range []string{"per decision", "per source", "oldest", "newest", "bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}

	// The server's own lines, once it has written them out.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	live := decisionLines(t, mustRead(t, logPath))
	exported, errOut, err := runAudit(t, "audit", "export", "--db", db, "--config", cfg, "--since", "1h", "--format", "jsonl")
	if err != nil || !strings.Contains(errOut, "exported 30 events") {
		t.Fatalf("export: %v, %s", err, errOut)
	}
	got := decisionLines(t, exported)
	if len(live) != 30 || len(got) != 30 {
		t.Fatalf("%d live lines, %d exported", len(live), len(got))
	}
	for id, line := range live {
		// The trail keeps microseconds, and the capability the decision found (in result).
		delete(line, "metrics")
		delete(got[id], "metrics")
		delete(line["input"].(map[string]any), "capability")
		a, _ := json.Marshal(line)
		b, _ := json.Marshal(got[id])
		if !bytes.Equal(a, b) {
			t.Errorf("decision %s:\nlive     %s\nexported %s", id, a, b)
		}
	}
	if _, _, err := runAudit(t, "audit", "export", "--db", db, "--format", "csv"); err == nil {
		t.Error("export --format csv: no error")
	}

	// Prune while a server runs under load: no decision fails.
	cmd = serveProcess(db, cfg)
	url = startCmd(t, cmd)
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { steadyLoad(url, stop, &ok, &failed); close(done) }()
	time.Sleep(300 * time.Millisecond)
	_, progress, err := runAudit(t, "audit", "prune", "--db", db, "--config", cfg, "--before", time.Now().UTC().Format(time.RFC3339))
	close(stop)
	<-done
	if err != nil || !strings.Contains(progress, "deleting events before") || !strings.Contains(progress, "deleted ") {
		t.Fatalf("prune: %v\n%s", err, progress)
	}
	if failed.Load() != 0 || ok.Load() == 0 {
		t.Errorf("while pruning: %d decisions answered, %d failed", ok.Load(), failed.Load())
	}
	if _, _, err := runAudit(t, "audit", "prune", "--db", db, "--before", "yesterday"); err == nil {
		t.Error("prune --before yesterday: no error")
	}
	if _, _, err := runAudit(t, "audit", "stats", "--db", filepath.Join(dir, "typo.db")); err == nil {
		t.Error("stats of a missing database: no error")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// decisionLines parses decision-log lines by decision id.
func decisionLines(t *testing.T, text string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out[line["decision_id"].(string)] = line
	}
	return out
}
