package decisionlog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
)

// buildPDP builds the pdp binary into a temporary directory.
func buildPDP(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build pdp with")
	}
	bin := filepath.Join(t.TempDir(), "pdp")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/toolperm/pdp/cmd/pdp").CombinedOutput()
	if err != nil {
		t.Fatalf("building pdp: %v\n%s", err, out)
	}
	return bin
}

// TestServeLogsEveryAnsweredDecision runs a real `pdp serve` with a
// decision log, makes decisions, stops it gracefully and reads the log:
// one line per answered decision, none for bad input.
func TestServeLogsEveryAnsweredDecision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs pdp serve")
	}
	bin := buildPDP(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "decisions.jsonl")
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "pdp.db"), "--config", filepath.Join("..", "..", "config.yaml"))
	cmd.Env = append(os.Environ(), "PDP_DECISION_LOG_PATH="+logPath, "PDP_DECISION_LOG_MASK=Command,token", "PDP_DECISION_LOG_REPLICA_ID=replica-e2e")
	url, serverLog := testserver.Process(t, cmd, 60*time.Second)

	const clients, each = 4, 10
	var mu sync.Mutex
	var answered []string
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := fmt.Sprintf(`{"session_id":"log-%d","tool":"shell","args":{"command":"git push origin %d","env":{"TOKEN":"secret"}},"cwd":"/w"}`, c, i)
				resp, err := client.Post(url+"/v1/decide", "application/json", bytes.NewBufferString(body))
				if err != nil {
					t.Error(err)
					return
				}
				var d struct {
					DecisionID string `json:"decision_id"`
				}
				err = json.NewDecoder(resp.Body).Decode(&d)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || d.DecisionID == "" {
					t.Errorf("decide: %d %v %q", resp.StatusCode, err, d.DecisionID)
					return
				}
				mu.Lock()
				answered = append(answered, d.DecisionID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	resp, err := client.Post(url+"/v1/decide", "application/json", bytes.NewBufferString(`{"session_id":"log-bad","tool":"shell","capability":"fs.read"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a tool and capability that disagree: %d, want 400", resp.StatusCode)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pdp serve did not stop cleanly: %v", err)
	}
	got := fileLines(t, logPath)
	var logged []string
	for _, e := range got {
		logged = append(logged, e["decision_id"].(string))
		args := e["input"].(map[string]any)["args"].(map[string]any)
		if args["command"] != "***" || args["env"].(map[string]any)["TOKEN"] != "***" {
			t.Fatalf("masked keys reached the log: %v", args)
		}
		if e["labels"].(map[string]any)["id"] != "replica-e2e" || e["path"] != "toolperm/answer" {
			t.Fatalf("labels or path: %v %v", e["labels"], e["path"])
		}
		if rev := e["bundles"].(map[string]any)["toolperm"].(map[string]any)["revision"]; rev == "" || rev != e["result"].(map[string]any)["revision"] {
			t.Fatalf("bundle revision %v, result revision %v", rev, e["result"].(map[string]any)["revision"])
		}
	}
	sort.Strings(answered)
	sort.Strings(logged)
	if len(answered) != clients*each || !slices.Equal(answered, logged) {
		t.Fatalf("%d decisions answered, %d lines logged; want one line per answer\nserver log:\n%s", len(answered), len(logged), serverLog.String())
	}
}
