package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// testWaiting: the store keeps who waits on an ask; a pending list holds
// the unanswered asks only, those someone waits on first, then newest
// first; a wait past its end counts for nothing; EndWaits removes this
// store's waits.
func testWaiting(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	mustCreate(t, s, api.Session{ID: "other"})
	a, b, answered := shellAsk("s", 0, "make"), shellAsk("s", time.Second, "make"), shellAsk("s", 2*time.Second, "make")
	allow, elsewhere := event("s", api.Allow, 3*time.Second), shellAsk("other", 4*time.Second, "make")
	mustRecord(t, s, a, b, answered, allow, elsewhere)
	if _, err := s.AnswerDecision(ctx, answered.Decision.DecisionID, api.DenyAnswer, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	pending := func(f pdp.DecisionFilter) []string {
		t.Helper()
		f.Pending, f.Decision, f.Limit = true, api.Ask, 10
		list, err := s.Decisions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, rec := range list {
			ids = append(ids, rec.DecisionID)
		}
		return ids
	}
	idA, idB := a.Decision.DecisionID, b.Decision.DecisionID
	if got, want := pending(pdp.DecisionFilter{SessionID: "s"}), []string{idB, idA}; !slices.Equal(got, want) {
		t.Fatalf("pending asks = %v, want %v (newest first, no answered ask, no allow)", got, want)
	}
	if got := pending(pdp.DecisionFilter{}); len(got) != 3 || got[0] != elsewhere.Decision.DecisionID {
		t.Fatalf("pending asks of every session = %v", got)
	}

	now := time.Now()
	stopA, err := s.StartWaiting(ctx, idA, "runtime-a", now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer stopA()
	if _, err := s.StartWaiting(ctx, idA, "runtime-b", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A wait past its end (its server died holding it) counts for nothing.
	if _, err := s.StartWaiting(ctx, idB, "gone", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, want := pending(pdp.DecisionFilter{SessionID: "s"}), []string{idA, idB}; !slices.Equal(got, want) {
		t.Fatalf("pending asks = %v, want %v (the waited-on first)", got, want)
	}
	waiting, err := s.Waiting(ctx, []string{idA, idB, elsewhere.Decision.DecisionID})
	if err != nil {
		t.Fatal(err)
	}
	if w := waiting[idA]; len(w) != 2 || w[0].By != "runtime-a" || w[1].By != "runtime-b" || w[0].Since.After(w[1].Since) ||
		w[0].Since.Before(now.Add(-time.Minute)) || len(waiting) != 1 {
		t.Fatalf("waiting = %+v", waiting)
	}
	if err := s.EndWaits(ctx); err != nil {
		t.Fatal(err)
	}
	if waiting, err := s.Waiting(ctx, []string{idA}); err != nil || len(waiting) != 0 {
		t.Fatalf("waiting after EndWaits = %+v, %v", waiting, err)
	}
	if got, want := pending(pdp.DecisionFilter{SessionID: "s"}), []string{idB, idA}; !slices.Equal(got, want) {
		t.Fatalf("pending asks after the waits ended = %v, want %v", got, want)
	}
}

// testClaims: of several claims of one notification, at once, exactly
// one wins; another sink's claim of the same change is its own.
func testClaims(t *testing.T, s Store) {
	ctx := t.Context()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for range 8 {
		for _, sink := range []string{"ops", "pager"} {
			wg.Go(func() {
				mine, _, err := s.ClaimDelivery(ctx, sink, 42, time.Minute)
				if err != nil {
					t.Errorf("claim: %v", err)
				}
				if mine {
					mu.Lock()
					won[sink]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if won["ops"] != 1 || won["pager"] != 1 {
		t.Fatalf("claims won = %v, want one per sink", won)
	}
	if mine, _, err := s.ClaimDelivery(ctx, "ops", 43, time.Minute); err != nil || !mine {
		t.Fatalf("the next change: %v, %v", mine, err)
	}
}
