package postgres_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/postgres"
)

func open(t *testing.T, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func askEvent(session, fingerprint string) pdp.AuditRecord {
	now := time.Now()
	c := "shell.exec"
	return pdp.AuditRecord{SessionID: session, Time: now, Request: api.DecideRequest{Tool: "shell", Args: map[string]any{"command": fingerprint}},
		Decision: api.Decision{DecisionID: pdp.NewDecisionID(now), Decision: api.Ask, NeedApproval: true, Source: "level", Rule: "r", Reason: "r",
			Capability: &c, Fingerprint: &fingerprint, Grantable: true}}
}

// TestTwoStoresOnOneDatabase: two stores (two replicas) started together
// migrate once; a change made through one applies to the very next tree
// read through the other; an answer given through one is announced to
// the other at once.
func TestTwoStoresOnOneDatabase(t *testing.T) {
	url := newDatabase(t, pgtest.Start(t))
	var a, b *postgres.Store
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = open(t, url, postgres.Options{}) }()
	go func() { defer wg.Done(); b = open(t, url, postgres.Options{}) }()
	wg.Wait()
	if a == nil || b == nil {
		t.FailNow()
	}
	ctx := t.Context()
	if _, err := a.CreateSession(ctx, api.Session{ID: "s", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	if tree, err := b.SessionTree(ctx, "s"); err != nil || tree.PermissionLevel != api.ReadOnly {
		t.Fatalf("b's tree = %+v, %v", tree, err)
	}
	full := api.Full
	if _, err := a.UpdateSession(ctx, "s", pdp.SessionPatch{PermissionLevel: &full}); err != nil {
		t.Fatal(err)
	}
	if tree, err := b.SessionTree(ctx, "s"); err != nil || tree.PermissionLevel != api.Full {
		t.Fatalf("b's tree right after a's level switch = %+v, %v", tree, err)
	}

	heard := make(chan string, 4)
	b.OnAnswer(func(id string) { heard <- id })
	ask := askEvent("s", "git push")
	if err := b.Record(ctx, ask); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := a.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowSession, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-heard:
		if id != ask.Decision.DecisionID {
			t.Fatalf("heard %q, want %q", id, ask.Decision.DecisionID)
		}
		t.Logf("b heard a's answer after %s", time.Since(start))
	case <-time.After(time.Second):
		t.Fatal("b did not hear a's answer within a second")
	}
	if _, err := b.AnswerDecision(ctx, ask.Decision.DecisionID, api.DenyAnswer, "api", api.Answerer{}); !errors.Is(err, pdp.ErrConflict) {
		t.Fatalf("b's second answer: %v, want a conflict", err)
	}
	tree, err := b.SessionTree(ctx, "s")
	if err != nil || len(tree.Grants) != 1 {
		t.Fatalf("b's tree after a's grant = %+v, %v", tree, err)
	}
	grants, _ := a.Grants(ctx, "s")
	if err := b.DeleteGrant(ctx, "s", grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if tree, err := a.SessionTree(ctx, "s"); err != nil || len(tree.Grants) != 0 {
		t.Fatalf("a's tree after b's revocation = %+v, %v", tree, err)
	}
}

// TestDatabaseOutage: while PostgreSQL is down every write and read is an
// error (a decision is then a 503, never unrecorded); once it is back the
// same store works again without a restart, and answers are heard again.
func TestDatabaseOutage(t *testing.T) {
	cluster := pgtest.StartCluster(t)
	s := open(t, cluster.URL, postgres.Options{WriteTimeout: 2 * time.Second})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, api.Session{ID: "s", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	before := askEvent("s", "make a")
	if err := s.Record(ctx, before); err != nil {
		t.Fatal(err)
	}
	cluster.Stop(t)
	down := askEvent("s", "make b")
	start := time.Now()
	if err := s.Record(ctx, down); err == nil {
		t.Fatal("an event was acknowledged while the database was down")
	}
	t.Logf("a write failed after %s", time.Since(start))
	if _, err := s.SessionTree(ctx, "s"); err == nil {
		t.Fatal("a session tree was read while the database was down")
	}
	if err := s.Writable(ctx); err == nil {
		t.Fatal("Writable while the database was down")
	}
	cluster.Restart(t)
	after := askEvent("s", "make c")
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := s.Record(ctx, after)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 15s after the database came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := s.Decision(ctx, down.Decision.DecisionID); !errors.Is(err, pdp.ErrNotFound) {
		t.Fatalf("the refused event: %v, want not found", err)
	}
	for _, ev := range []pdp.AuditRecord{before, after} {
		if _, err := s.Decision(ctx, ev.Decision.DecisionID); err != nil {
			t.Fatal(err)
		}
	}
	// The listener reconnects within a second or so.
	heard := make(chan string, 16)
	s.OnAnswer(func(id string) { heard <- id })
	for i := 0; ; i++ {
		ask := askEvent("s", "make d")
		if err := s.Record(ctx, ask); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowOnce, "api", api.Answerer{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
			return
		case <-time.After(time.Second):
		}
		if i == 10 {
			t.Fatal("answers are not heard again after the outage")
		}
	}
}
