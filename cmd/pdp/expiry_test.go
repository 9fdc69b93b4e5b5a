package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/internal/testserver"
)

// TestAsksExpire runs `pdp serve` with asks.expire_after on SQLite and on
// PostgreSQL: an ask nobody answers is answered expired by the PDP (channel
// pdp, no grant), a runtime parked on ?wait= gets it as its answer (a
// deny: it is no allow), and answering it afterwards is 409 expired. An
// ask made before a restart expires after it: the age is the stored
// ask's, not a timer of the process that made it.
func TestAsksExpire(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "pdp.db")
			if store == "postgres" {
				db = pgtest.Start(t)
			}
			work := t.TempDir()
			// The first server keeps its asks for an hour; the restarted
			// one expires them after 3 s, far longer than a wait takes to
			// park.
			patient := serveProcess(db, writeConfig(t, t.TempDir(), "log:\n  level: debug\nasks:\n  expire_after: 1h\naudit:\n  sweep_interval: 100ms\n"))
			url, _ := testserver.Process(t, patient, 30*time.Second)
			beforeRestart := decide(t, url, "exp", "shell", `{"command":"make release"}`, work)
			if beforeRestart.Decision != api.Ask {
				t.Fatalf("want an ask, got %+v", beforeRestart)
			}
			if err := patient.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := patient.Wait(); err != nil {
				t.Fatalf("pdp serve exited with %v after SIGTERM", err)
			}
			restarted := time.Now()
			eager := serveProcess(db, writeConfig(t, t.TempDir(), "log:\n  level: debug\nasks:\n  expire_after: 3s\naudit:\n  sweep_interval: 100ms\n"))
			url, log := testserver.Process(t, eager, 30*time.Second)
			// Parked before the restarted server's sweep reaches it, or
			// after: either way the wait ends with the expiry.
			rec := waitOn(t, url, beforeRestart.DecisionID)
			wantExpired(t, url, rec)
			if rec.Answer.AnsweredAt.Before(restarted) {
				t.Fatalf("expired at %v, before the restart at %v", rec.Answer.AnsweredAt, restarted)
			}

			fresh := decide(t, url, "exp", "shell", `{"command":"make deploy"}`, work)
			if fresh.Decision != api.Ask {
				t.Fatalf("want an ask, got %+v", fresh)
			}
			woke := make(chan *api.Event, 1)
			go func() { woke <- waitOn(t, url, fresh.DecisionID) }()
			select {
			case rec := <-woke:
				wantExpired(t, url, rec)
			case <-time.After(45 * time.Second): // a hang guard, far inside the wait
				t.Fatal("the parked wait did not end with the expiry")
			}
			// It was parked when the ask expired: the server parks (and
			// logs it) only on an unanswered ask.
			if !parked(log.String(), fresh.DecisionID) {
				t.Fatalf("the wait on %s never parked:\n%s", fresh.DecisionID, log)
			}
		})
	}
}

// waitOn parks on GET /v1/decisions/{id}?wait=50s and returns what it got.
func waitOn(t *testing.T, url, id string) *api.Event {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get(url + "/v1/decisions/" + id + "?wait=50s")
	if err != nil {
		t.Error(err)
		return nil
	}
	defer resp.Body.Close()
	var rec api.Event
	if err := json.NewDecoder(resp.Body).Decode(&rec); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("wait on %s: %d, %v", id, resp.StatusCode, err)
		return nil
	}
	return &rec
}

// wantExpired: rec is answered expired by the PDP, which no runtime
// takes for an allow and which no later answer changes.
func wantExpired(t *testing.T, url string, rec *api.Event) {
	t.Helper()
	if rec == nil || rec.Answer == nil || rec.Answer.Answer != api.Expired || rec.Answer.Channel != api.ExpiryChannel || rec.Answer.GrantID != 0 || rec.Answer.Allows() {
		t.Fatalf("the wait ended with %+v", rec)
	}
	for _, answer := range []string{"allow_session", "allow_once", "deny"} {
		resp, err := http.Post(url+"/v1/decisions/"+rec.DecisionID+"/answer", "application/json",
			strings.NewReader(fmt.Sprintf(`{"answer":%q,"channel":"console"}`, answer)))
		if err != nil {
			t.Fatal(err)
		}
		var e api.Error
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || err != nil || e.Error.Code != "expired" {
			t.Fatalf("%s after the expiry: %d %+v, %v; want 409 expired", answer, resp.StatusCode, e, err)
		}
	}
	var grants struct{ Grants []api.Grant }
	if code := call(t, "GET", url+"/v1/sessions/"+rec.SessionID+"/grants", "", &grants); code != http.StatusOK || len(grants.Grants) != 0 {
		t.Fatalf("grants after the expiry: %d %+v", code, grants)
	}
}

// parked says whether the server's debug log shows a wait parked on id.
func parked(log, id string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "waiting for an answer") && strings.Contains(line, "decision_id="+id) {
			return true
		}
	}
	return false
}
