package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/store/sqlite"
)

// TestMain lets the tests run this binary's main as a real process.
func TestMain(m *testing.M) {
	if os.Getenv("PDP_TEST_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// repoConfig is the repository's config.yaml.
var repoConfig = filepath.Join("..", "..", "config.yaml")

// pdpProcess is `pdp args…`: this test binary running main (TestMain),
// with env added to its environment.
func pdpProcess(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "PDP_TEST_RUN_MAIN=1"), env...)
	return cmd
}

// serveProcess is `pdp serve` on a free loopback port, on db with the
// config file cfg.
func serveProcess(db, cfg string, env ...string) *exec.Cmd {
	return pdpProcess([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--config", cfg}, env...)
}

// writeConfig writes a config file with this text into dir and returns
// its path.
func writeConfig(t *testing.T, dir, yaml string) string {
	t.Helper()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startServer runs `pdp serve` as a child process and returns its base URL.
func startServer(t *testing.T, db string) (*exec.Cmd, string) {
	t.Helper()
	cmd := serveProcess(db, repoConfig)
	return cmd, startCmd(t, cmd)
}

// startCmd starts a prepared `pdp serve` and waits for its address.
func startCmd(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	url, _ := testserver.Process(t, cmd, 30*time.Second)
	return url
}

// hammer sends decisions from 16 clients until stop is closed, and
// returns the ids of every decision whose answer a client received.
func hammer(url string, stop <-chan struct{}, count *atomic.Int64) []string {
	var mu sync.Mutex
	var answered []string
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"session_id":"crash-%d","tool":"shell","args":{"command":"make check %d"},"cwd":"/w"}`, w%4, i)
				resp, err := client.Post(url+"/v1/decide", "application/json", bytes.NewBufferString(body))
				if err != nil {
					continue
				}
				var d struct {
					DecisionID string `json:"decision_id"`
				}
				err = json.NewDecoder(resp.Body).Decode(&d)
				resp.Body.Close()
				if err == nil && resp.StatusCode == http.StatusOK && d.DecisionID != "" {
					mu.Lock()
					answered = append(answered, d.DecisionID)
					mu.Unlock()
					count.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	return answered
}

// underLoad starts `pdp serve` on a new database, drives it with 16
// clients until they have had at least warmup answers (at most a minute:
// a slow machine or the race detector answers fewer a second), then
// sends the server sig and runs stopped while the load goes on, and
// returns the database and the ids of every decision a client got an
// answer for.
func underLoad(t *testing.T, warmup int64, sig syscall.Signal, stopped func(*exec.Cmd)) (db string, answered []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a server process")
	}
	db = filepath.Join(t.TempDir(), "pdp.db")
	cmd, url := startServer(t, db)
	stop := make(chan struct{})
	done := make(chan []string)
	var count atomic.Int64
	go func() { done <- hammer(url, stop, &count) }()
	for deadline := time.Now().Add(time.Minute); count.Load() < warmup && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	stopped(cmd)
	close(stop)
	return db, <-done
}

// missingFromTrail returns the ids that are not in the audit trail.
func missingFromTrail(t *testing.T, db string, ids []string) []string {
	t.Helper()
	store, err := sqlite.Open(context.Background(), db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var missing []string
	for _, id := range ids {
		if _, err := store.Decision(context.Background(), id); err != nil {
			missing = append(missing, id)
		}
	}
	return missing
}

func TestCrashLosesNoAnsweredDecision(t *testing.T) {
	db, answered := underLoad(t, 200, syscall.SIGKILL, func(*exec.Cmd) {
		time.Sleep(200 * time.Millisecond)
	})
	if len(answered) < 50 {
		t.Fatalf("only %d decisions answered before the kill; the test proves nothing", len(answered))
	}
	if missing := missingFromTrail(t, db, answered); len(missing) > 0 {
		t.Fatalf("%d of %d answered decisions are missing from the audit trail after SIGKILL, e.g. %s", len(missing), len(answered), missing[0])
	}
	t.Logf("%d answered decisions, all in the audit trail after SIGKILL", len(answered))
}

func TestGracefulShutdownCommitsInFlightDecisions(t *testing.T) {
	db, answered := underLoad(t, 100, syscall.SIGTERM, func(cmd *exec.Cmd) {
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("pdp serve exited with %v after SIGTERM", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("pdp serve did not stop within 20s of SIGTERM")
		}
	})
	if missing := missingFromTrail(t, db, answered); len(missing) > 0 {
		t.Fatalf("%d of %d answered decisions are missing after SIGTERM", len(missing), len(answered))
	}
}

func TestServeRefusesWithoutAValidPolicy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.rego"), []byte("package toolperm\n\nanswer := x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := pdpProcess([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "pdp.db"), "--policies", dir})
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("no valid policy")) {
		t.Fatalf("serve started with a broken policy: %v\n%s", err, out)
	}
}

func TestServeRefusesAnOpenNonLoopbackAddress(t *testing.T) {
	dir := t.TempDir()
	cmd := pdpProcess([]string{"serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(dir, "pdp.db"), "--config", repoConfig})
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("without access control")) {
		t.Fatalf("serve listened on 0.0.0.0 without tokens: %v\n%s", err, out)
	}
}

func TestServeWithTokensAndMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "auth:\n  tokens:\n    - name: runtime\n      roles: [dispatcher]\n      env: TEST_PDP_RUNTIME_TOKEN\n")
	cmd := serveProcess(filepath.Join(dir, "pdp.db"), cfg, "TEST_PDP_RUNTIME_TOKEN=s3cret")
	url := startCmd(t, cmd)

	post := func(token string) int {
		req, _ := http.NewRequest("POST", url+"/v1/decide", bytes.NewBufferString(`{"session_id":"t","tool":"read_file","args":{"path":"a"},"cwd":"/w"}`))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code := post("s3cret"); code != 200 {
		t.Fatalf("dispatcher token: %d", code)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(raw, []byte(`pdp_decisions_total{decision="allow",source="level"} 1`)) ||
		!bytes.Contains(raw, []byte(`pdp_access_denied_total{code="401"} 1`)) ||
		!bytes.Contains(raw, []byte(`pdp_policy_revision_info{revision="sha256:`)) {
		t.Fatalf("metrics:\n%s", raw)
	}
}
