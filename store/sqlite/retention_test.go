package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// recordAt records one decision made at the given time and returns its id.
func recordAt(t testing.TB, s *Store, session, decision string, at time.Time) string {
	t.Helper()
	capability, fingerprint := "shell.exec", "git push"
	ev := pdp.AuditRecord{Time: at, SessionID: session,
		Request: api.DecideRequest{SessionID: session, Tool: "shell", Args: map[string]any{"command": "git push"}},
		Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: decision, NeedApproval: decision == api.Ask, Source: "level",
			Rule: "shell.exec", Reason: "r", Capability: &capability, Fingerprint: &fingerprint, Grantable: true}}
	if err := s.Record(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev.Decision.DecisionID
}

// TestSweeperDeletesExactlyTheExpiredEvents: every event older than the
// cut goes, every younger one stays, unanswered young asks can still be
// answered, and grants made from deleted asks stay.
func TestSweeperDeletesExactlyTheExpiredEvents(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, Options{})
	if !s.Incremental() {
		t.Fatal("a new database does not give space back")
	}
	for _, id := range []string{"a", "b"} {
		if _, err := s.CreateSession(ctx, api.Session{ID: id, PermissionLevel: api.ReadOnly, Mode: api.OnDemand}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	cut := now.Add(-time.Hour)
	var old, young, youngAsks []string
	// An old ask answered for the session: its grant outlives it.
	oldAsk := recordAt(t, s, "a", api.Ask, cut.Add(-48*time.Hour))
	old = append(old, oldAsk)
	if _, err := s.AnswerDecision(ctx, oldAsk, api.AllowSession, "test", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	// Recorded in time order, as a server does.
	for i := range 500 {
		at := cut.Add(-time.Duration(500-i) * time.Second)
		old = append(old, recordAt(t, s, []string{"a", "b"}[i%2], []string{api.Allow, api.Ask, api.Deny}[i%3], at))
	}
	for i := range 500 {
		session := []string{"a", "b"}[i%2]
		decision := []string{api.Allow, api.Ask, api.Deny}[i%3]
		id := recordAt(t, s, session, decision, cut.Add(time.Duration(i)*time.Millisecond)) // the cut itself is kept
		young = append(young, id)
		if decision == api.Ask {
			youngAsks = append(youngAsks, id)
		}
	}
	grantsBefore, err := s.Grants(ctx, "a")
	if err != nil || len(grantsBefore) != 1 {
		t.Fatalf("grants before: %v, %v", grantsBefore, err)
	}
	sizeBefore, err := s.TrailSize(ctx)
	if err != nil {
		t.Fatal(err)
	}

	var progress []int
	sw := &pdp.Sweeper{Store: s, Batch: 7, Pause: time.Millisecond}
	n, err := sw.Prune(ctx, cut, func(deleted int) { progress = append(progress, deleted) })
	if err != nil {
		t.Fatal(err)
	}
	if n != len(old) {
		t.Errorf("deleted %d events, want %d", n, len(old))
	}
	if len(progress) < len(old)/7 || progress[len(progress)-1] != len(old) {
		t.Errorf("progress %v", progress)
	}
	for _, id := range old {
		if _, err := s.Decision(ctx, id); !errors.Is(err, pdp.ErrNotFound) {
			t.Fatalf("expired event %s: %v", id, err)
		}
	}
	for _, id := range young {
		if _, err := s.Decision(ctx, id); err != nil {
			t.Fatalf("young event %s: %v", id, err)
		}
	}
	grantsAfter, err := s.Grants(ctx, "a")
	if err != nil || len(grantsAfter) == 0 || grantsAfter[0].ID != grantsBefore[0].ID || grantsAfter[0].DecisionID != oldAsk {
		t.Fatalf("the grant of a deleted ask: %v, %v; was %v", grantsAfter, err, grantsBefore)
	}
	var free int64
	if err := s.read.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil || free != 0 {
		t.Errorf("free pages after the sweep: %d, %v", free, err)
	}
	// Answers after it may move rows between pages (a row grows by the
	// answer's columns): the sweep is what leaves no free page.
	for i, id := range youngAsks {
		answer := []string{api.AllowOnce, api.DenyAnswer, api.AllowSession}[i%3]
		if _, err := s.AnswerDecision(ctx, id, answer, "test", api.Answerer{}); err != nil {
			t.Fatalf("answering young ask %s: %v", id, err)
		}
	}
	size, err := s.TrailSize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if size.Events != int64(len(young)) {
		t.Errorf("trail size %d events, want %d", size.Events, len(young))
	}
	if size.Bytes >= sizeBefore.Bytes {
		t.Errorf("the file did not shrink: %d bytes, was %d", size.Bytes, sizeBefore.Bytes)
	}
	if n, err := sw.Prune(ctx, cut, nil); n != 0 || err != nil {
		t.Errorf("a second sweep deleted %d, %v", n, err)
	}
}

// TestGrantsReferenceNoEvent: the schema keeps grants.decision_id as
// plain text, so deleting an event neither cascades to nor is blocked
// by a grant.
func TestGrantsReferenceNoEvent(t *testing.T) {
	s := openTemp(t, Options{})
	rows, err := s.read.Query(`SELECT "table", "from" FROM pragma_foreign_key_list('grants')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, from string
		if err := rows.Scan(&table, &from); err != nil {
			t.Fatal(err)
		}
		if table == "decisions" || from == "decision_id" {
			t.Errorf("grants.%s references %s", from, table)
		}
	}
}

// TestDecisionsWhileSweepingSeeNoError: events recorded while a large
// sweep runs all commit.
func TestDecisionsWhileSweepingSeeNoError(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, Options{Synchronous: "NORMAL"})
	cut := time.Now().Add(-time.Hour)
	writeTrail(t, s, 4000, cut)
	var recorded, failed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var errs sync.Map
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				at := time.Now()
				ev := pdp.AuditRecord{Time: at, SessionID: fmt.Sprint("live", w), Request: api.DecideRequest{SessionID: fmt.Sprint("live", w), Tool: "read_file"},
					Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: api.Allow, Source: "level", Rule: "fs.read", Reason: "r"}}
				if err := s.Record(ctx, ev); err != nil {
					failed.Add(1)
					errs.Store(err.Error(), true)
					continue
				}
				recorded.Add(1)
			}
		}()
	}
	sw := &pdp.Sweeper{Store: s, Batch: 64}
	n, err := sw.Prune(ctx, cut, nil)
	close(stop)
	wg.Wait()
	if err != nil || n != 4000 {
		t.Fatalf("sweep: %d deleted, %v", n, err)
	}
	if failed.Load() != 0 {
		var msgs []string
		errs.Range(func(k, _ any) bool { msgs = append(msgs, k.(string)); return true })
		slices.Sort(msgs)
		t.Fatalf("%d of %d decisions failed while sweeping: %v", failed.Load(), failed.Load()+recorded.Load(), msgs)
	}
	if recorded.Load() == 0 {
		t.Fatal("no decision was recorded while sweeping")
	}
	t.Logf("%d decisions recorded while %d events were swept", recorded.Load(), n)
}
