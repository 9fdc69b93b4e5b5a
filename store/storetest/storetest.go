// Package storetest is the behaviour every storage backend of the PDP
// must have, as one suite: store/sqlite and store/postgres run it
// against a fresh store of their own, so the two cannot drift apart.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/schema"
)

// Store is what a backend implements: the core's store roles, the audit
// log, the recorded trail for replay, and the readiness check.
type Store interface {
	pdp.AuditLog
	pdp.SessionStore
	pdp.DecisionStore
	pdp.GrantStore
	pdp.AccessLog
	pdp.RecordedDecisions
	pdp.TrailPruner
	pdp.OutcomeStore
	feed.ChangeLog
	pdp.AskExpirer
	pdp.WaitingStore
	pdp.TicketStore
	// EndWaits removes the waits this store recorded (its server stops).
	EndWaits(ctx context.Context) error
	// ClaimDelivery, RenewDelivery and DeliveryDone hand a notification
	// to one replica at a time, under a lease (notify.Claims).
	ClaimDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, time.Time, error)
	RenewDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, error)
	DeliveryDone(ctx context.Context, sink string, seq int64) error
	// EachDecision streams the events at or after since, oldest first
	// (pdp audit export).
	EachDecision(ctx context.Context, since time.Time, fn func(api.Event) error) error
	Writable(ctx context.Context) error
}

// Open returns a new, empty store for one test; the backend closes it in
// t.Cleanup.
type Open func(t *testing.T) Store

// Run runs every case of the suite, each on a store of its own.
func Run(t *testing.T, open Open) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"sessions", testSessions},
		{"ensure and claim", testEnsureAndClaim},
		{"update applies to the next tree", testUpdateTree},
		{"list sessions", testListSessions},
		{"audit round trip", testAuditRoundTrip},
		{"group commit", testGroupCommit},
		{"paging and filters", testPaging},
		{"answers", testAnswers},
		{"answer races", testAnswerRace},
		{"grants on the root", testGrantsOnRoot},
		{"flow labels on the root", testFlowLabels},
		{"access events", testAccessEvents},
		{"recorded decisions", testRecorded},
		{"retention and export", testRetention},
		{"outcomes", testOutcomes},
		{"command rules", testCommandRules},
		{"compound commands and project grants", testProjectGrants},
		{"every read shows a compound command's parts", testPartsEverywhere},
		{"change log", testChangeLog},
		{"expiry", testExpiry},
		{"expiry races answers", testExpiryRace},
		{"who waits", testWaiting},
		{"notification claims", testClaims},
		{"notification claim leases", testClaimLeases},
		{"answer link tickets", testTickets},
		{"writable", func(t *testing.T, s Store) {
			if err := s.Writable(t.Context()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

var base = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// event is a decision event of session at base+offset.
func event(session, decision string, offset time.Duration) pdp.AuditRecord {
	at := base.Add(offset)
	capability := "fs.read"
	d := api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: decision, NeedApproval: decision == api.Ask,
		Source: "level", Rule: "LEVEL_" + decision, Reason: "because", Capability: &capability, Revision: "r1"}
	return pdp.AuditRecord{Decision: d, SessionID: session, Time: at, Latency: 1500 * time.Microsecond,
		Request: api.DecideRequest{Tool: "read_file", Args: map[string]any{"path": "a.txt"}, Cwd: "/w"}}
}

// shellAsk is an ask on a shell command, grantable when fingerprint is set.
func shellAsk(session string, offset time.Duration, fingerprint string) pdp.AuditRecord {
	ev := event(session, api.Ask, offset)
	c := "shell.exec"
	ev.Decision.Capability = &c
	ev.Request = api.DecideRequest{Tool: "shell", Args: map[string]any{"command": fingerprint + " x"}}
	if fingerprint != "" {
		ev.Decision.Fingerprint, ev.Decision.Grantable = &fingerprint, true
	}
	return ev
}

func mustRecord(t *testing.T, s Store, evs ...pdp.AuditRecord) {
	t.Helper()
	for _, ev := range evs {
		if err := s.Record(t.Context(), ev); err != nil {
			t.Fatalf("recording %s: %v", ev.Decision.DecisionID, err)
		}
	}
}

func mustCreate(t *testing.T, s Store, rec api.Session) api.Session {
	t.Helper()
	if rec.PermissionLevel == "" {
		rec.PermissionLevel = api.ReadOnly
	}
	if rec.Mode == "" {
		rec.Mode = api.OnDemand
	}
	if rec.ExecutionMode == "" {
		rec.ExecutionMode = api.Local
	}
	got, err := s.CreateSession(t.Context(), rec)
	if err != nil {
		t.Fatalf("creating %s: %v", rec.ID, err)
	}
	return got
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
}

func testSessions(t *testing.T, s Store) {
	ctx := t.Context()
	created := mustCreate(t, s, api.Session{ID: "s1", PermissionLevel: api.ReadWrite, Workspace: "/w",
		Rules: map[string]string{"net.fetch": "allow"}, Scope: []string{"fs.read"}, AssessorModel: "m", Owner: "tok"})
	got, err := s.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.PermissionLevel != api.ReadWrite || got.Workspace != "/w" || got.Rules["net.fetch"] != "allow" || len(got.Scope) != 1 ||
		got.AssessorModel != "m" || got.Owner != "tok" || got.ExecutionMode != api.Local {
		t.Fatalf("stored session = %+v", got)
	}
	if !got.CreatedAt.Truncate(time.Microsecond).Equal(created.CreatedAt.Truncate(time.Microsecond)) || got.CreatedAt.Location() != time.UTC {
		t.Fatalf("created_at = %v, want %v in UTC", got.CreatedAt, created.CreatedAt)
	}
	_, err = s.CreateSession(ctx, api.Session{ID: "s1", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local})
	wantErr(t, err, pdp.ErrExists)
	_, err = s.CreateSession(ctx, api.Session{ID: "child", ParentSessionID: "nobody", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local})
	wantErr(t, err, pdp.ErrNotFound)
	_, err = s.GetSession(ctx, "nobody")
	wantErr(t, err, pdp.ErrNotFound)
	_, err = s.SessionTree(ctx, "nobody")
	wantErr(t, err, pdp.ErrNotFound)
	_, err = s.UpdateSession(ctx, "nobody", pdp.SessionPatch{})
	wantErr(t, err, pdp.ErrNotFound)
	mustCreate(t, s, api.Session{ID: "s1.a", ParentSessionID: "s1"})
	mustCreate(t, s, api.Session{ID: "s1.a.b", ParentSessionID: "s1.a"})
	for _, id := range []string{"s1", "s1.a", "s1.a.b"} {
		root, err := s.RootID(ctx, id)
		if err != nil || root != "s1" {
			t.Fatalf("RootID(%s) = %q, %v", id, root, err)
		}
	}
	tree, err := s.SessionTree(ctx, "s1.a.b")
	if err != nil {
		t.Fatal(err)
	}
	if tree.ID != "s1.a.b" || tree.Parent == nil || tree.Parent.ID != "s1.a" || tree.Parent.Parent == nil || tree.Parent.Parent.ID != "s1" ||
		tree.Parent.Parent.Parent != nil || tree.Parent.Parent.Rules["net.fetch"] != "allow" {
		t.Fatalf("tree = %+v", tree)
	}
}

func testEnsureAndClaim(t *testing.T, s Store) {
	ctx := t.Context()
	rec := api.Session{ID: "auto", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}
	got, err := s.EnsureSession(ctx, rec)
	if err != nil || got.ID != "auto" || got.Workspace != "" {
		t.Fatalf("EnsureSession = %+v, %v", got, err)
	}
	again := rec
	again.PermissionLevel = api.Full
	if got, err = s.EnsureSession(ctx, again); err != nil || got.PermissionLevel != api.ReadOnly {
		t.Fatalf("EnsureSession of an existing session = %+v, %v; want the stored one", got, err)
	}
	// Concurrent first decisions of one session all get the one stored.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := api.Session{ID: "raced", PermissionLevel: pdp.Levels[i%len(pdp.Levels)], Mode: api.OnDemand, ExecutionMode: api.Local}
			if _, err := s.EnsureSession(ctx, r); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent EnsureSession: %v", err)
	}
	if err := s.ClaimWorkspace(ctx, "auto", "/first"); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimWorkspace(ctx, "auto", "/second"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSession(ctx, "auto"); got.Workspace != "/first" {
		t.Fatalf("workspace = %q, want the first claim to stay", got.Workspace)
	}
}

func testUpdateTree(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "root"})
	mustCreate(t, s, api.Session{ID: "kid", ParentSessionID: "root"})
	paths := map[string]api.PathRule{"**/.env": {Read: "deny", Write: "deny"}, "build/**": {Write: "ask"}}
	if _, err := s.UpdateSession(ctx, "root", pdp.SessionPatch{PathRules: paths, PathRulesSet: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetSession(ctx, "root"); err != nil || fmt.Sprint(got.PathRules) != fmt.Sprint(paths) {
		t.Fatalf("path rules = %v, %v; want %v", got.PathRules, err, paths)
	}
	for i, level := range []api.Level{api.ReadWrite, api.Full, api.ReadOnly} {
		tree, err := s.SessionTree(ctx, "kid") // warm any cache first
		if err != nil {
			t.Fatal(err)
		}
		mode := pdp.Modes[i%len(pdp.Modes)]
		rules := map[string]string{"fs.write": fmt.Sprint("r", i)}
		if _, err := s.UpdateSession(ctx, "root", pdp.SessionPatch{PermissionLevel: &level, Mode: &mode, Rules: rules, RulesSet: true}); err != nil {
			t.Fatal(err)
		}
		if tree, err = s.SessionTree(ctx, "kid"); err != nil {
			t.Fatal(err)
		}
		if p := tree.Parent; p.PermissionLevel != level || p.Mode != mode || p.Rules["fs.write"] != rules["fs.write"] {
			t.Fatalf("after update %d the tree's root is %+v", i, p)
		}
	}
	got, err := s.UpdateSession(ctx, "root", pdp.SessionPatch{})
	if err != nil || got.PermissionLevel != api.ReadOnly || len(got.PathRules) != 2 {
		t.Fatalf("empty patch = %+v, %v", got, err)
	}
	if got, err = s.UpdateSession(ctx, "root", pdp.SessionPatch{PathRulesSet: true}); err != nil || len(got.PathRules) != 0 {
		t.Fatalf("removing the path rules = %+v, %v", got, err)
	}
	if got, err = s.GetSession(ctx, "root"); err != nil || len(got.PathRules) != 0 {
		t.Fatalf("path rules after removing them = %+v, %v", got.PathRules, err)
	}
}

func testListSessions(t *testing.T, s Store) {
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, s, api.Session{ID: id})
		time.Sleep(2 * time.Millisecond)
	}
	level := api.Full
	if _, err := s.UpdateSession(ctx, "a", pdp.SessionPatch{PermissionLevel: &level}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListSessions(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" {
		t.Fatalf("ListSessions(2) = %v, want a (updated last), c", ids(got))
	}
}

func ids(ss []api.Session) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

func testAuditRoundTrip(t *testing.T, s Store) {
	ctx := t.Context()
	ev := event("s", api.Allow, 1500*time.Millisecond)
	ev.Decision.Danger = &api.Danger{Verdict: "SAFE", By: "model-x"}
	fp := "git status"
	ev.Decision.Fingerprint, ev.Decision.Grantable = &fp, true
	mustRecord(t, s, ev)
	got, err := s.Decision(ctx, ev.Decision.DecisionID)
	if err != nil {
		t.Fatal(err)
	}
	d := got.Decision
	if d.DecisionID != ev.Decision.DecisionID || d.Decision != api.Allow || d.Source != "level" || d.Rule != "LEVEL_allow" || d.Reason != "because" ||
		*d.Capability != "fs.read" || *d.Fingerprint != fp || !d.Grantable || d.Danger == nil || d.Danger.Verdict != "SAFE" || d.Danger.By != "model-x" ||
		d.Revision != "r1" || d.NeedApproval {
		t.Fatalf("decision = %+v", d)
	}
	if !got.Time.Equal(ev.Time) || got.Time.Location() != time.UTC || got.SessionID != "s" || got.Tool != "read_file" || got.Args["path"] != "a.txt" ||
		got.Cwd != "/w" || got.LatencyUS != 1500 || got.Answer != nil {
		t.Fatalf("event = %+v", got)
	}
	_, err = s.Decision(ctx, "nope")
	wantErr(t, err, pdp.ErrNotFound)
	bare := event("s", api.Deny, 2*time.Second)
	bare.Decision.Capability, bare.Request.Args = nil, nil
	mustRecord(t, s, bare)
	if got, err = s.Decision(ctx, bare.Decision.DecisionID); err != nil || got.Capability != nil || got.Danger != nil || len(got.Args) != 0 {
		t.Fatalf("bare event = %+v, %v", got, err)
	}
}

// testGroupCommit: concurrent callers are each answered after their event
// is stored, and every one is.
func testGroupCommit(t *testing.T, s Store) {
	ctx := t.Context()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	evs := make([]pdp.AuditRecord, n)
	for i := range n {
		evs[i] = event(fmt.Sprint("g", i%5), api.Allow, time.Duration(i)*time.Millisecond)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Record(ctx, evs[i]); err != nil {
				errs <- err
				return
			}
			if _, err := s.Decision(ctx, evs[i].Decision.DecisionID); err != nil {
				errs <- fmt.Errorf("answered before stored: %w", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.Decisions(ctx, pdp.DecisionFilter{Limit: 2 * n})
	if err != nil || len(all) != n {
		t.Fatalf("listed %d, %v; want %d", len(all), err, n)
	}
}

func testPaging(t *testing.T, s Store) {
	ctx := t.Context()
	var evs []pdp.AuditRecord
	for i := range 30 {
		decision := []string{api.Allow, api.Deny, api.Ask}[i%3]
		ev := event([]string{"p1", "p2"}[i%2], decision, time.Duration(i)*time.Second)
		if i%4 == 0 {
			ev.Decision.Source = "rule"
		}
		evs = append(evs, ev)
	}
	mustRecord(t, s, evs...)
	count := func(pred func(pdp.AuditRecord) bool, since time.Time, before string) []string {
		var out []string
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if pred(ev) && !ev.Time.Before(since) && (before == "" || ev.Decision.DecisionID < before) {
				out = append(out, ev.Decision.DecisionID)
			}
		}
		return out
	}
	cases := []struct {
		name string
		f    pdp.DecisionFilter
		pred func(pdp.AuditRecord) bool
	}{
		{"everything", pdp.DecisionFilter{}, func(pdp.AuditRecord) bool { return true }},
		{"session", pdp.DecisionFilter{SessionID: "p1"}, func(e pdp.AuditRecord) bool { return e.SessionID == "p1" }},
		{"decision", pdp.DecisionFilter{Decision: api.Ask}, func(e pdp.AuditRecord) bool { return e.Decision.Decision == api.Ask }},
		{"source", pdp.DecisionFilter{Source: "rule"}, func(e pdp.AuditRecord) bool { return e.Decision.Source == "rule" }},
		{"session and source", pdp.DecisionFilter{SessionID: "p2", Source: "level"}, func(e pdp.AuditRecord) bool {
			return e.SessionID == "p2" && e.Decision.Source == "level"
		}},
		{"all three", pdp.DecisionFilter{SessionID: "p1", Source: "level", Decision: api.Deny}, func(e pdp.AuditRecord) bool {
			return e.SessionID == "p1" && e.Decision.Source == "level" && e.Decision.Decision == api.Deny
		}},
		{"since", pdp.DecisionFilter{Since: base.Add(10 * time.Second)}, func(pdp.AuditRecord) bool { return true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := count(c.pred, c.f.Since, "")
			var got []string
			f := c.f
			f.Limit = 4
			for {
				page, err := s.Decisions(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page {
					got = append(got, e.DecisionID)
				}
				if len(page) < f.Limit {
					break
				}
				f.Before = page[len(page)-1].DecisionID
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("pages = %v\nwant    %v", got, want)
			}
		})
	}
}

func testAnswers(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	ask, allow, notGrantable := shellAsk("s", 0, "git push"), event("s", api.Allow, time.Second), shellAsk("s", 2*time.Second, "")
	mustRecord(t, s, ask, allow, notGrantable)
	_, err := s.AnswerDecision(ctx, "nope", api.AllowOnce, "api", api.Answerer{})
	wantErr(t, err, pdp.ErrNotFound)
	_, err = s.AnswerDecision(ctx, allow.Decision.DecisionID, api.AllowOnce, "api", api.Answerer{})
	wantErr(t, err, pdp.ErrConflict)
	_, err = s.AnswerDecision(ctx, notGrantable.Decision.DecisionID, api.AllowSession, "api", api.Answerer{})
	wantErr(t, err, pdp.ErrNotGrantable)
	// Nothing was written: it can still be answered.
	if got, err := s.AnswerDecision(ctx, notGrantable.Decision.DecisionID, api.DenyAnswer, "console", api.Answerer{}); err != nil || got.Answer.Answer != api.DenyAnswer {
		t.Fatalf("answer after a refused allow_session = %+v, %v", got.Answer, err)
	}
	// A person signed in with the provider: e-mail and subject.
	got, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowOnce, "terminal", api.Answerer{Name: "alice@example.com", Subject: "248289761001"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Answer == nil || got.Answer.Answer != api.AllowOnce || got.Answer.Channel != "terminal" || got.Answer.GrantID != 0 || got.Answer.AnsweredAt.IsZero() ||
		got.Answer.AnsweredBy != "alice@example.com" || got.Answer.AnsweredBySubject != "248289761001" || !got.Answer.Allows() {
		t.Fatalf("answer = %+v", got.Answer)
	}
	stored, err := s.Decision(ctx, ask.Decision.DecisionID)
	if err != nil || stored.Answer == nil || !stored.Answer.AnsweredAt.Equal(got.Answer.AnsweredAt) || stored.Answer.Channel != "terminal" ||
		stored.Answer.AnsweredBy != "alice@example.com" || stored.Answer.AnsweredBySubject != "248289761001" {
		t.Fatalf("stored answer = %+v, %v; returned %+v", stored.Answer, err, got.Answer)
	}
	wantSettled(t, s, ask.Decision.DecisionID, "s")
}

// wantSettled: an ask answered once (allow_once, deny) takes no other
// answer from a person, and a runtime's outcome recorded after it leaves
// the answer as it was; it left its session no grant.
func wantSettled(t *testing.T, s Store, id, session string) {
	t.Helper()
	before, err := s.Decision(t.Context(), id)
	if err != nil || before.Answer == nil {
		t.Fatalf("the answered ask = %+v, %v", before.Answer, err)
	}
	_, err = s.AnswerDecision(t.Context(), id, api.DenyAnswer, "console", api.Answerer{})
	wantErr(t, err, pdp.ErrConflict)
	if before.Outcome == nil {
		if _, err := s.RecordOutcome(t.Context(), id, api.AllowOnce, "claude-code", "runtime"); err != nil {
			t.Fatalf("an outcome after the answer: %v", err)
		}
	}
	after, err := s.Decision(t.Context(), id)
	if err != nil || after.Answer == nil || *after.Answer != *before.Answer || after.Outcome == nil {
		t.Fatalf("after another answer and an outcome: %+v / %+v, %v; was %+v", after.Answer, after.Outcome, err, before.Answer)
	}
	if grants, _ := s.Grants(t.Context(), session); len(grants) != 0 {
		t.Fatalf("answering %s once stored grants %+v", id, grants)
	}
}

// testAnswerRace: of many answers to one ask at once, exactly one is
// recorded and the others are conflicts.
func testAnswerRace(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	for round := range 3 {
		ask := shellAsk("s", time.Duration(round)*time.Second, "make test")
		mustRecord(t, s, ask)
		const n = 8
		var wg sync.WaitGroup
		results := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, []string{api.AllowSession, api.DenyAnswer}[i%2], fmt.Sprint("c", i), api.Answerer{})
				results <- err
			}()
		}
		wg.Wait()
		close(results)
		ok := 0
		for err := range results {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, pdp.ErrConflict):
				t.Fatalf("a racing answer failed with %v, want a conflict", err)
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d answers recorded, want exactly 1", round, ok)
		}
	}
}

func testGrantsOnRoot(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "root"})
	mustCreate(t, s, api.Session{ID: "kid", ParentSessionID: "root"})
	if _, err := s.SessionTree(ctx, "kid"); err != nil { // warm any cache first
		t.Fatal(err)
	}
	ask := shellAsk("kid", 0, "npm test")
	mustRecord(t, s, ask)
	got, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowSession, "console", api.Answerer{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Answer.GrantID == 0 {
		t.Fatalf("allow_session answer has no grant id: %+v", got.Answer)
	}
	if kid, _ := s.Grants(ctx, "kid"); len(kid) != 0 {
		t.Fatalf("grant stored on the sub-agent: %+v", kid)
	}
	grants, err := s.Grants(ctx, "root")
	if err != nil || len(grants) != 1 {
		t.Fatalf("root grants = %+v, %v", grants, err)
	}
	g := grants[0]
	if g.ID != got.Answer.GrantID || g.SessionID != "root" || g.Capability != "shell.exec" || g.Fingerprint != "npm test" || g.Scope != "session" ||
		g.DecisionID != ask.Decision.DecisionID || g.CreatedAt.IsZero() {
		t.Fatalf("grant = %+v", g)
	}
	treeGrants := func() []pdp.Grant {
		tree, err := s.SessionTree(ctx, "kid")
		if err != nil {
			t.Fatal(err)
		}
		return tree.Parent.Grants
	}
	if tg := treeGrants(); len(tg) != 1 || tg[0].Fingerprint != "npm test" || tg[0].Capability != "shell.exec" {
		t.Fatalf("the next tree's grants = %+v", tg)
	}
	// The same call granted again keeps one grant.
	again := shellAsk("kid", time.Second, "npm test")
	mustRecord(t, s, again)
	if _, err := s.AnswerDecision(ctx, again.Decision.DecisionID, api.AllowSession, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	if grants, _ = s.Grants(ctx, "root"); len(grants) != 1 || grants[0].DecisionID != again.Decision.DecisionID {
		t.Fatalf("grants after a second allow_session = %+v", grants)
	}
	wantErr(t, s.DeleteGrant(ctx, "kid", g.ID), pdp.ErrNotFound)
	if err := s.DeleteGrant(ctx, "root", g.ID); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeleteGrant(ctx, "root", g.ID), pdp.ErrNotFound)
	if tg := treeGrants(); len(tg) != 0 {
		t.Fatalf("a revoked grant is still in the next tree: %+v", tg)
	}
}

func testAccessEvents(t *testing.T, s Store) {
	ctx := t.Context()
	for i := range 3 {
		ev := api.AccessEvent{Time: base.Add(time.Duration(i) * time.Second), Method: "POST", Route: "/v1/decide", Code: 401 + i,
			Token: "t", Reason: fmt.Sprint("r", i), Remote: "10.0.0.1"}
		if err := s.RecordAccessDenied(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.AccessEvents(ctx, 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("AccessEvents = %+v, %v", got, err)
	}
	if got[0].Code != 403 || got[0].Reason != "r2" || !got[0].Time.Equal(base.Add(2*time.Second)) || got[1].Code != 402 || got[0].Remote != "10.0.0.1" {
		t.Fatalf("newest first: %+v", got)
	}
}

func testRecorded(t *testing.T, s Store) {
	ctx := t.Context()
	a, b, c := event("r1", api.Allow, 0), event("r2", api.Deny, time.Second), event("r1", api.Ask, 2*time.Second)
	a.Recorded = &pdp.Recorded{Input: map[string]any{"tool": "read_file"}}
	c.Recorded = &pdp.Recorded{Input: map[string]any{"tool": "shell"}, Parent: &pdp.Recorded{Input: map[string]any{"tool": "task"}}}
	mustRecord(t, s, a, b, c)
	var got []pdp.RecordedDecision
	collect := func(f pdp.ReplayFilter) {
		got = nil
		if err := s.EachRecorded(ctx, f, func(rd pdp.RecordedDecision) error { got = append(got, rd); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	collect(pdp.ReplayFilter{})
	if len(got) != 3 || got[0].DecisionID != a.Decision.DecisionID || got[0].Recorded == nil || got[0].Recorded.Input["tool"] != "read_file" ||
		got[1].Recorded != nil || got[1].Decision != api.Deny || got[1].Rule != "LEVEL_deny" || got[2].Recorded.Parent == nil {
		t.Fatalf("recorded = %+v", got)
	}
	collect(pdp.ReplayFilter{SessionID: "r1", Since: base.Add(time.Second)})
	if len(got) != 1 || got[0].DecisionID != c.Decision.DecisionID || got[0].SessionID != "r1" {
		t.Fatalf("recorded since 1s in r1 = %+v", got)
	}
}

func testRetention(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "old"})
	var evs []pdp.AuditRecord
	for i := range 10 {
		evs = append(evs, event("old", api.Allow, time.Duration(i)*time.Second))
	}
	ask := shellAsk("old", 9500*time.Millisecond, "go test")
	evs = append(evs, ask)
	mustRecord(t, s, evs...)
	if _, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowSession, "api", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	cut := base.Add(5 * time.Second)
	for _, want := range []int{3, 2, 0} {
		n, err := s.PruneDecisions(ctx, cut, 3)
		if err != nil || n != want {
			t.Fatalf("PruneDecisions = %d, %v; want %d", n, err, want)
		}
	}
	if err := s.ReclaimSpace(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrailSize(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := s.EachDecision(ctx, base.Add(7*time.Second), func(rec api.Event) error {
		got = append(got, rec.DecisionID)
		return nil
	})
	want := []string{evs[7].Decision.DecisionID, evs[8].Decision.DecisionID, evs[9].Decision.DecisionID, ask.Decision.DecisionID}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("EachDecision = %v, %v; want %v", got, err, want)
	}
	// Grants outlive the event that created them.
	if _, err := s.PruneDecisions(ctx, base.Add(time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	if grants, err := s.Grants(ctx, "old"); err != nil || len(grants) != 1 {
		t.Fatalf("grants after the trail is pruned = %+v, %v", grants, err)
	}
}

// testOutcomes: a runtime's outcome is kept apart from the person's
// answer. It answers nothing (the ask stays pending and a person still
// answers it), is recorded once, never grants, and its change-log entry
// is an outcome, not an answer.
func testOutcomes(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	ask, other, allow := shellAsk("s", 0, "git push"), shellAsk("s", time.Second, "git pull"), event("s", api.Allow, 2*time.Second)
	ask.Request.ToolUseID = "toolu_1"
	mustRecord(t, s, ask, other, allow)
	found, err := s.DecisionsByToolUse(ctx, "toolu_1")
	if err != nil || len(found) != 1 || found[0].DecisionID != ask.Decision.DecisionID || found[0].ToolUseID != "toolu_1" {
		t.Fatalf("DecisionsByToolUse = %+v, %v", found, err)
	}
	if found, err = s.DecisionsByToolUse(ctx, "toolu_none"); err != nil || len(found) != 0 {
		t.Fatalf("an unknown tool use = %+v, %v", found, err)
	}
	id := ask.Decision.DecisionID
	_, err = s.RecordOutcome(ctx, id, api.AllowSession, "claude-code", "runtime")
	wantErr(t, err, pdp.ErrConflict)
	_, err = s.RecordOutcome(ctx, allow.Decision.DecisionID, api.AllowOnce, "claude-code", "runtime")
	wantErr(t, err, pdp.ErrConflict)
	got, err := s.RecordOutcome(ctx, id, api.AllowOnce, "claude-code", "runtime")
	if err != nil || got.Answer != nil || got.Outcome == nil || got.Outcome.Answer != api.AllowOnce || got.Outcome.Channel != "claude-code" ||
		got.Outcome.By != "runtime" || got.Outcome.RecordedAt.IsZero() {
		t.Fatalf("RecordOutcome = answer %+v, outcome %+v, %v", got.Answer, got.Outcome, err)
	}
	stored, err := s.Decision(ctx, id)
	if err != nil || stored.Answer != nil || stored.Outcome == nil || *stored.Outcome != *got.Outcome {
		t.Fatalf("stored = answer %+v, outcome %+v, %v; returned %+v", stored.Answer, stored.Outcome, err, got.Outcome)
	}
	// One outcome per ask: a second is a conflict and changes nothing.
	_, err = s.RecordOutcome(ctx, id, api.DenyAnswer, "claude-code", "runtime")
	wantErr(t, err, pdp.ErrConflict)
	// Still pending: a person answers it, and the outcome stays.
	answered, err := s.AnswerDecision(ctx, id, api.DenyAnswer, "console", api.Answerer{})
	if err != nil || answered.Answer == nil || answered.Answer.Answer != api.DenyAnswer || answered.Answer.Channel != "console" ||
		answered.Outcome == nil || *answered.Outcome != *got.Outcome {
		t.Fatalf("a person's answer after the outcome = %+v / %+v, %v", answered.Answer, answered.Outcome, err)
	}
	wantSettled(t, s, id, "s")
	// An ask a person answered first takes the runtime's outcome too.
	if _, err := s.AnswerDecision(ctx, other.Decision.DecisionID, api.AllowOnce, "terminal", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	wantSettled(t, s, other.Decision.DecisionID, "s")
	changes, err := s.ChangesAfter(ctx, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range changes {
		if c.Decision != nil && c.Decision.DecisionID == id {
			kinds = append(kinds, c.Kind)
		}
	}
	if fmt.Sprint(kinds) != "[ask outcome answer]" {
		t.Fatalf("the ask's changes = %v, want [ask outcome answer]", kinds)
	}
}

func testChangeLog(t *testing.T, s Store) {
	ctx := t.Context()
	if first, last, err := s.ChangeBounds(ctx); err != nil || first != 0 || last != 0 {
		t.Fatalf("bounds of an empty log = %d, %d, %v", first, last, err)
	}
	mustCreate(t, s, api.Session{ID: "s"})
	ask := shellAsk("s", 0, "git push")
	mustRecord(t, s, ask, event("s", api.Allow, time.Second))
	if _, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.DenyAnswer, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	mode, level := api.AlwaysAsk, api.ReadWrite
	if _, err := s.UpdateSession(ctx, "s", pdp.SessionPatch{Mode: &mode}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSession(ctx, "s", pdp.SessionPatch{PermissionLevel: &level}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ChangesAfter(ctx, 0, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("changes = %+v, %v; want ask, answer, level", got, err)
	}
	if got[0].Kind != feed.ChangeAsk || got[0].Decision == nil || got[0].Decision.DecisionID != ask.Decision.DecisionID || got[0].SessionID != "s" ||
		got[1].Kind != feed.ChangeAnswer || got[1].Decision == nil || got[1].Decision.Answer == nil ||
		got[2].Kind != feed.ChangeLevel || got[2].Session == nil || got[2].Session.PermissionLevel != api.ReadWrite {
		t.Fatalf("changes = %+v", got)
	}
	if !(got[0].Seq < got[1].Seq && got[1].Seq < got[2].Seq) {
		t.Fatalf("seqs out of order: %d %d %d", got[0].Seq, got[1].Seq, got[2].Seq)
	}
	first, last, err := s.ChangeBounds(ctx)
	if err != nil || first != got[0].Seq || last != got[2].Seq {
		t.Fatalf("bounds = %d, %d, %v", first, last, err)
	}
	if rest, err := s.ChangesAfter(ctx, got[0].Seq, 10); err != nil || len(rest) != 2 || rest[0].Seq != got[1].Seq {
		t.Fatalf("changes after the first = %+v, %v", rest, err)
	}
	// Concurrent asks and answers: one entry each, in increasing order.
	asks := make([]pdp.AuditRecord, 40)
	for i := range asks {
		asks[i] = shellAsk("s", time.Duration(10+i)*time.Second, "make x")
	}
	var wg sync.WaitGroup
	for i := range asks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Record(ctx, asks[i]); err == nil && i%2 == 0 {
				_, _ = s.AnswerDecision(ctx, asks[i].Decision.DecisionID, api.AllowOnce, "api", api.Answerer{})
			}
		}()
	}
	wg.Wait()
	more, err := s.ChangesAfter(ctx, last, 1000)
	if err != nil || len(more) != 60 {
		t.Fatalf("%d changes after concurrent asks and answers, %v; want 60", len(more), err)
	}
	for i := 1; i < len(more); i++ {
		if more[i].Seq <= more[i-1].Seq {
			t.Fatalf("seq %d after %d", more[i].Seq, more[i-1].Seq)
		}
	}
}

func testCommandRules(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "c", CommandRules: map[string]string{"rm -rf": "deny"}})
	mustCreate(t, s, api.Session{ID: "c.kid", ParentSessionID: "c"})
	if got, err := s.GetSession(ctx, "c"); err != nil || got.CommandRules["rm -rf"] != "deny" {
		t.Fatalf("command rules at creation = %v, %v", got.CommandRules, err)
	}
	if got, err := s.GetSession(ctx, "c.kid"); err != nil || got.CommandRules == nil || len(got.CommandRules) != 0 {
		t.Fatalf("a session without command rules has %v, %v; want an empty map", got.CommandRules, err)
	}
	rules := map[string]string{"go test": "allow", "git push": "ask"}
	if _, err := s.UpdateSession(ctx, "c", pdp.SessionPatch{CommandRules: rules, CommandRulesSet: true}); err != nil {
		t.Fatal(err)
	}
	tree, err := s.SessionTree(ctx, "c.kid")
	if err != nil || fmt.Sprint(tree.Parent.CommandRules) != fmt.Sprint(rules) {
		t.Fatalf("the next tree's command rules = %v, %v; want %v", tree.Parent.CommandRules, err, rules)
	}
	if got, err := s.UpdateSession(ctx, "c", pdp.SessionPatch{CommandRulesSet: true}); err != nil || len(got.CommandRules) != 0 {
		t.Fatalf("removing the command rules = %v, %v", got.CommandRules, err)
	}
	if got, _ := s.GetSession(ctx, "c"); len(got.CommandRules) != 0 {
		t.Fatalf("command rules after removing them = %v", got.CommandRules)
	}
}

// compoundAsk is an ask on "git status && go test ./..." whose first part
// a rule allows and whose second the level asks for.
func compoundAsk(session string, offset time.Duration) pdp.AuditRecord {
	ev := shellAsk(session, offset, "")
	allow, rule, src := api.Allow, "git status", "command-rule"
	status, test := "git status", "go test"
	ev.Decision.Grantable = true
	ev.Decision.Parts = []api.Part{
		{Text: "git status", Fingerprint: &status, Decision: &allow, Source: &src, Rule: &rule},
		{Text: "go test ./...", Fingerprint: &test},
	}
	return ev
}

func testProjectGrants(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "p1", Workspace: "/proj", Owner: "ana"})
	mustCreate(t, s, api.Session{ID: "p2", Workspace: "/proj", Owner: "ana"})
	mustCreate(t, s, api.Session{ID: "other-owner", Workspace: "/proj", Owner: "bo"})
	mustCreate(t, s, api.Session{ID: "nowhere", Owner: "ana"})

	ask := compoundAsk("p1", 0)
	mustRecord(t, s, ask)
	stored, err := s.Decision(ctx, ask.Decision.DecisionID)
	if err != nil || len(stored.Parts) != 2 || stored.Parts[0].Decision == nil || *stored.Parts[0].Decision != api.Allow || stored.Parts[1].Decision != nil {
		t.Fatalf("stored parts = %+v, %v", stored.Parts, err)
	}
	got, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.AllowProject, "console", api.Answerer{})
	if err != nil || got.Answer.GrantID == 0 {
		t.Fatalf("allow_project = %+v, %v", got.Answer, err)
	}
	for _, c := range []struct {
		session string
		want    int
	}{{"p1", 1}, {"p2", 1}, {"other-owner", 0}, {"nowhere", 0}} {
		grants, err := s.Grants(ctx, c.session)
		if err != nil || len(grants) != c.want {
			t.Fatalf("grants of %s = %+v, %v; want %d", c.session, grants, err, c.want)
		}
		if c.want == 1 && (grants[0].Fingerprint != "go test" || grants[0].Scope != "project" || grants[0].Workspace != "/proj") {
			t.Fatalf("grant of %s = %+v: want only the part no rule allowed, for the project", c.session, grants[0])
		}
		tree, err := s.SessionTree(ctx, c.session)
		if err != nil || len(tree.Grants) != c.want {
			t.Fatalf("the tree of %s has grants %+v, %v; want %d", c.session, tree.Grants, err, c.want)
		}
		if c.want == 1 && tree.Grants[0].Scope != "project" {
			t.Fatalf("the tree of %s holds %+v: a project grant says so, to be reported as one", c.session, tree.Grants[0])
		}
	}
	// A project grant is revoked from any session it applies to.
	grants, _ := s.Grants(ctx, "p2")
	wantErr(t, s.DeleteGrant(ctx, "other-owner", grants[0].ID), pdp.ErrNotFound)
	if err := s.DeleteGrant(ctx, "p2", grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if tree, _ := s.SessionTree(ctx, "p1"); len(tree.Grants) != 0 {
		t.Fatalf("a revoked project grant is still in p1's tree: %+v", tree.Grants)
	}
	// No workspace, no project: nothing is written.
	homeless := compoundAsk("nowhere", time.Second)
	mustRecord(t, s, homeless)
	_, err = s.AnswerDecision(ctx, homeless.Decision.DecisionID, api.AllowProject, "console", api.Answerer{})
	wantErr(t, err, pdp.ErrNotGrantable)
	// A part without a fingerprint makes the call not grantable.
	bad := compoundAsk("p1", 2*time.Second)
	bad.Decision.Parts[1].Fingerprint = nil
	mustRecord(t, s, bad)
	_, err = s.AnswerDecision(ctx, bad.Decision.DecisionID, api.AllowSession, "console", api.Answerer{})
	wantErr(t, err, pdp.ErrNotGrantable)
	if got, err := s.AnswerDecision(ctx, bad.Decision.DecisionID, api.AllowOnce, "console", api.Answerer{}); err != nil || got.Answer.Answer != api.AllowOnce {
		t.Fatalf("allow_once after a refused allow_session = %+v, %v", got.Answer, err)
	}
}

// testPartsEverywhere: a compound command's parts are shown alike by
// the single read, every list (the plain list, its filters, the pending
// asks), the read by tool use and the export; a call of one part has
// none in each.
func testPartsEverywhere(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "lp"})
	ask := compoundAsk("lp", 0)
	ask.Request.ToolUseID = "toolu_parts"
	plain := shellAsk("lp", time.Second, "git push")
	mustRecord(t, s, ask, plain)
	single, err := s.Decision(ctx, ask.Decision.DecisionID)
	if err != nil || !reflect.DeepEqual(single.Parts, ask.Decision.Parts) {
		t.Fatalf("the decision's parts %s, %v; recorded %s", asJSON(single.Parts), err, asJSON(ask.Decision.Parts))
	}
	reads := map[string]func() ([]api.Event, error){}
	for name, f := range map[string]pdp.DecisionFilter{
		"list":                {Limit: 10},
		"list of a session":   {SessionID: "lp", Limit: 10},
		"list of asks":        {Decision: api.Ask, Limit: 10},
		"list of a source":    {Source: "level", Limit: 10},
		"list of pending":     {Pending: true, Limit: 10},
		"list since its time": {Since: base, Limit: 10},
	} {
		reads[name] = func() ([]api.Event, error) { return s.Decisions(ctx, f) }
	}
	reads["by tool use"] = func() ([]api.Event, error) { return s.DecisionsByToolUse(ctx, "toolu_parts") }
	reads["export"] = func() ([]api.Event, error) {
		var out []api.Event
		err := s.EachDecision(ctx, base, func(ev api.Event) error { out = append(out, ev); return nil })
		return out, err
	}
	for name, read := range reads {
		evs, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen := false
		for _, ev := range evs {
			switch ev.DecisionID {
			case ask.Decision.DecisionID:
				seen = true
				if !reflect.DeepEqual(ev.Parts, single.Parts) {
					t.Fatalf("%s shows the parts %s; the decision has %s", name, asJSON(ev.Parts), asJSON(single.Parts))
				}
			case plain.Decision.DecisionID:
				if ev.Parts != nil {
					t.Fatalf("%s shows parts %s for a call of one part", name, asJSON(ev.Parts))
				}
			}
		}
		if !seen {
			t.Fatalf("%s does not show the compound ask: %+v", name, evs)
		}
	}
}

func asJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// OutcomesMoved checks schema.OutcomesFromAnswers on a store whose
// trail holds outcomes recorded as answers, as stores did before the
// outcome columns: exec runs SQL on the store's database. An answer that
// names the token that reported it becomes the ask's outcome and the ask
// is unanswered again; a person's answer stays as it was.
func OutcomesMoved(t *testing.T, s Store, exec func(ctx context.Context, sql string) error) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "s"})
	reported, person := shellAsk("s", 0, "git push"), shellAsk("s", time.Second, "git pull")
	mustRecord(t, s, reported, person)
	const at = "2026-11-29T10:00:15.000000000Z"
	for _, sql := range []string{
		`UPDATE decisions SET answer = 'allow_once', answer_channel = 'claude-code', answered_at = '` + at + `', answered_by = 'runtime'
			WHERE id = '` + reported.Decision.DecisionID + `'`,
		`UPDATE decisions SET answer = 'deny', answer_channel = 'console', answered_at = '` + at + `'
			WHERE id = '` + person.Decision.DecisionID + `'`,
		schema.OutcomesFromAnswers,
	} {
		if err := exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	want := time.Date(2026, 11, 29, 10, 0, 15, 0, time.UTC)
	got, err := s.Decision(ctx, reported.Decision.DecisionID)
	if err != nil || got.Answer != nil || got.Outcome == nil ||
		*got.Outcome != (api.Outcome{Answer: api.AllowOnce, Channel: "claude-code", By: "runtime", RecordedAt: want}) {
		t.Fatalf("an outcome recorded as an answer, moved: answer %+v, outcome %+v, %v", got.Answer, got.Outcome, err)
	}
	got, err = s.Decision(ctx, person.Decision.DecisionID)
	if err != nil || got.Outcome != nil || got.Answer == nil ||
		*got.Answer != (api.Answer{Answer: api.DenyAnswer, Channel: "console", AnsweredAt: want}) {
		t.Fatalf("a person's answer, moved: answer %+v, outcome %+v, %v", got.Answer, got.Outcome, err)
	}
	// The ask the runtime reported on is a person's to answer now.
	if _, err := s.AnswerDecision(ctx, reported.Decision.DecisionID, api.AllowOnce, "console", api.Answerer{}); err != nil {
		t.Fatalf("answering it: %v", err)
	}
}
