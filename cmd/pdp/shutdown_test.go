package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/testserver"
)

// waitResult is what one request parked on ?wait= got back.
type waitResult struct {
	code     int
	decision string
	answered bool
	err      error
}

// SIGTERM with dispatchers parked on GET /v1/decisions/{id}?wait=60s:
// every wait ends at once with the decision as it stands (an ask, still
// unanswered), the event stream ends, and the process exits 0 — well
// before the default shutdown_timeout (10 s) would have cut the waits
// and made it exit 1.
func TestSIGTERMAnswersParkedWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	dir := t.TempDir()
	// At debug level the server logs each wait as it parks: the test
	// sends the signal once every waiter is parked, not after a guess.
	cfg := writeConfig(t, dir, "log:\n  level: debug\n")
	cmd := serveProcess(filepath.Join(dir, "pdp.db"), cfg)
	url, log := testserver.Process(t, cmd, 30*time.Second)

	var asks []string
	for i := range 3 {
		body := fmt.Sprintf(`{"session_id":"park","tool":"shell","args":{"command":"make docs -j %d"},"cwd":"/w"}`, i)
		resp, err := http.Post(url+"/v1/decide", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			DecisionID string `json:"decision_id"`
			Decision   string `json:"decision"`
		}
		err = json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		if err != nil || d.Decision != "ask" {
			t.Fatalf("decide: %v %+v", err, d)
		}
		asks = append(asks, d.DecisionID)
	}
	// Two waiters on the first ask, one on each of the others.
	parked := append([]string{asks[0]}, asks...)

	events, err := http.Get(url + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	stream := bufio.NewReader(events.Body)
	ready, err := stream.ReadString('\n')
	for err == nil && !strings.HasSuffix(ready, "\n\n") {
		var line string
		line, err = stream.ReadString('\n')
		ready += line
	}
	if err != nil || !strings.Contains(ready, "event: ready\n") {
		t.Fatalf("the event stream starts with %q, %v", ready, err)
	}

	results := make(chan waitResult, len(parked))
	waiter := &http.Client{Timeout: 2 * time.Minute}
	for _, id := range parked {
		go func() {
			resp, err := waiter.Get(url + "/v1/decisions/" + id + "?wait=60s")
			if err != nil {
				results <- waitResult{err: err}
				return
			}
			defer resp.Body.Close()
			var rec api.Event
			err = json.NewDecoder(resp.Body).Decode(&rec)
			results <- waitResult{code: resp.StatusCode, decision: rec.Decision.Decision, answered: rec.Answer != nil, err: err}
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); strings.Count(log.String(), "waiting for an answer") < len(parked); {
		if time.Now().After(deadline) {
			t.Fatalf("the waits did not park:\n%s", log)
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A hang guard, far inside the 60 s wait: a wait that ran out would
	// look answered too.
	guard := time.After(45 * time.Second)
	for range parked {
		select {
		case r := <-results:
			if r.err != nil || r.code != http.StatusOK || r.decision != "ask" || r.answered {
				t.Errorf("a parked wait got %d %q answered=%v, %v", r.code, r.decision, r.answered, r.err)
			}
		case <-guard:
			t.Fatalf("the parked waits were not answered after SIGTERM:\n%s", log)
		}
	}
	// The stream ends cleanly (its last chunk sent), its last frame a
	// comment saying why; the reader reconnects with the last id it got.
	// (An ask the hub read only after the stream began comes before it.)
	rest, err := io.ReadAll(stream)
	frames := bytes.Split(bytes.TrimSuffix(rest, []byte("\n\n")), []byte("\n\n"))
	if err != nil || !bytes.HasSuffix(rest, []byte("\n\n")) || !bytes.HasPrefix(frames[len(frames)-1], []byte(": ")) {
		t.Errorf("the event stream ended with %q, %v", rest, err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("pdp serve exited with %v after SIGTERM:\n%s", err, log)
		}
	case <-guard:
		t.Fatalf("pdp serve did not exit after SIGTERM:\n%s", log)
	}
}
