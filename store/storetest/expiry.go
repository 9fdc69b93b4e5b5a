package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
)

// testExpiry: ExpireAsks answers the unanswered asks older than the cut
// expired on the channel pdp, oldest first, in batches; never an
// answered ask, an allow or a younger ask; never a grant; each with its
// change log entry; and an answer after it is ErrExpired (a conflict).
func testExpiry(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	first, answered, second := shellAsk("s", 0, "git push"), shellAsk("s", time.Second, "make"), shellAsk("s", 2*time.Second, "go test")
	allow, young := event("s", api.Allow, 500*time.Millisecond), shellAsk("s", 10*time.Second, "ls")
	mustRecord(t, s, first, allow, answered, second, young)
	if _, err := s.AnswerDecision(ctx, answered.Decision.DecisionID, api.AllowOnce, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	// A runtime's outcome is no answer: the ask still expires.
	if _, err := s.RecordOutcome(ctx, first.Decision.DecisionID, api.AllowOnce, "claude-code", "runtime"); err != nil {
		t.Fatal(err)
	}
	_, last, err := s.ChangeBounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cut := base.Add(5 * time.Second)
	for _, want := range []struct {
		ids  []string
		more bool
	}{{[]string{first.Decision.DecisionID}, true}, {[]string{second.Decision.DecisionID}, true}, {nil, false}} {
		ids, more, err := s.ExpireAsks(ctx, cut, 1)
		if err != nil || !slices.Equal(ids, want.ids) || more != want.more {
			t.Fatalf("ExpireAsks = %v, %v, %v; want %v, %v", ids, more, err, want.ids, want.more)
		}
	}
	for _, ask := range []pdp.AuditRecord{first, second} {
		id := ask.Decision.DecisionID
		rec, err := s.Decision(ctx, id)
		if err != nil || rec.Answer == nil || rec.Answer.Answer != api.Expired || rec.Answer.Channel != api.ExpiryChannel ||
			rec.Answer.GrantID != 0 || rec.Answer.AnsweredAt.IsZero() || rec.Answer.Allows() {
			t.Fatalf("expired ask %s = %+v, %v", id, rec.Answer, err)
		}
		_, err = s.AnswerDecision(ctx, id, api.AllowSession, "console", api.Answerer{})
		wantErr(t, err, pdp.ErrExpired)
		wantErr(t, err, pdp.ErrConflict)
	}
	if rec, err := s.Decision(ctx, answered.Decision.DecisionID); err != nil || rec.Answer == nil || rec.Answer.Answer != api.AllowOnce {
		t.Fatalf("the answered ask = %+v, %v", rec.Answer, err)
	}
	if rec, err := s.Decision(ctx, young.Decision.DecisionID); err != nil || rec.Answer != nil {
		t.Fatalf("the young ask = %+v, %v", rec.Answer, err)
	}
	if grants, err := s.Grants(ctx, "s"); err != nil || len(grants) != 0 {
		t.Fatalf("expiry left grants %+v, %v", grants, err)
	}
	changes, err := s.ChangesAfter(ctx, last, 10)
	if err != nil || len(changes) != 2 {
		t.Fatalf("changes of the expiry = %+v, %v; want two answers", changes, err)
	}
	for i, c := range changes {
		if c.Kind != feed.ChangeAnswer || c.Decision == nil || c.Decision.Answer == nil || c.Decision.Answer.Answer != api.Expired ||
			c.Decision.DecisionID != []string{first.Decision.DecisionID, second.Decision.DecisionID}[i] {
			t.Fatalf("change %d of the expiry = %+v", i, c)
		}
	}
}

// testExpiryRace: sweeps on several writers at once (replicas) and
// people answering meanwhile record one answer per ask: every ask is
// expired by one sweep or answered by one person, never both.
func testExpiryRace(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	asks := make([]pdp.AuditRecord, 30)
	for i := range asks {
		asks[i] = shellAsk("s", time.Duration(i)*time.Millisecond, "make")
	}
	mustRecord(t, s, asks...)
	var mu sync.Mutex
	expired := map[string]int{}
	answered := map[string]bool{}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				ids, more, err := s.ExpireAsks(ctx, base.Add(time.Hour), 4)
				if err != nil {
					t.Errorf("ExpireAsks: %v", err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					expired[id]++
				}
				mu.Unlock()
				if !more {
					return
				}
			}
		})
	}
	for i := 0; i < len(asks); i += 3 {
		wg.Go(func() {
			id := asks[i].Decision.DecisionID
			if _, err := s.AnswerDecision(ctx, id, api.DenyAnswer, "console", api.Answerer{}); err == nil {
				mu.Lock()
				answered[id] = true
				mu.Unlock()
			} else if !pdp.IsExpired(err) {
				t.Errorf("answer to %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	for _, ask := range asks {
		id := ask.Decision.DecisionID
		rec, err := s.Decision(ctx, id)
		if err != nil || rec.Answer == nil {
			t.Fatalf("%s after the race = %+v, %v", id, rec.Answer, err)
		}
		byPerson := rec.Answer.Answer == api.DenyAnswer
		if byPerson != answered[id] || (byPerson && expired[id] != 0) || (!byPerson && (expired[id] != 1 || rec.Answer.Answer != api.Expired)) {
			t.Fatalf("%s answered %s: answered by a person %v, expired %d times", id, rec.Answer.Answer, answered[id], expired[id])
		}
	}
}
