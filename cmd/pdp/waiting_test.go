package main

import (
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/internal/testserver"
)

// TestWaitersSeenFromEveryReplica: two `pdp serve` on one PostgreSQL
// database; a runtime parked on an ask of one replica is listed as
// waiting by the other, and when the first shuts down its waiters are
// gone at once.
func TestWaitersSeenFromEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and server processes")
	}
	db := pgtest.Start(t)
	cfg := writeConfig(t, t.TempDir(), "log:\n  level: debug\n")
	holder := serveProcess(db, cfg)
	a, log := testserver.Process(t, holder, 30*time.Second)
	b := startCmd(t, serveProcess(db, cfg))
	ask := decide(t, a, "rw", "shell", `{"command":"make release"}`, t.TempDir())
	if ask.Decision != api.Ask {
		t.Fatalf("want an ask, got %+v", ask)
	}
	ended := make(chan *api.Event, 1)
	go func() { ended <- waitOn(t, a, ask.DecisionID) }()
	for deadline := time.Now().Add(20 * time.Second); !parked(log.String(), ask.DecisionID); {
		if time.Now().After(deadline) {
			t.Fatalf("the wait did not park:\n%s", log)
		}
		time.Sleep(5 * time.Millisecond)
	}

	var page api.Page
	if code := call(t, "GET", b+"/v1/decisions?decision=ask&pending=true", "", &page); code != http.StatusOK || len(page.Decisions) != 1 {
		t.Fatalf("pending asks on the other replica: %d %+v", code, page)
	}
	if w := page.Decisions[0].Waiting; len(w) != 1 || w[0].By != api.AnonymousWaiter || w[0].Since.IsZero() {
		t.Fatalf("waiting on the other replica = %+v", w)
	}

	if err := holder.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := holder.Wait(); err != nil {
		t.Fatalf("pdp serve exited with %v after SIGTERM", err)
	}
	if rec := <-ended; rec == nil || rec.Answer != nil {
		t.Fatalf("the wait ended with %+v, want the ask as it stands", rec)
	}
	var rec api.Event
	if code := call(t, "GET", b+"/v1/decisions/"+ask.DecisionID, "", &rec); code != http.StatusOK || rec.Waiting == nil || len(rec.Waiting) != 0 {
		t.Fatalf("after the holder shut down, the other replica shows %d %+v", code, rec.Waiting)
	}
}
