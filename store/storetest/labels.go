package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// testFlowLabels: the flow labels of a tree live on its root, are read
// with the next tree (any cache is told), keep the call that set each
// first, come with the audit record of an allowed call, with a person's
// allow of an ask and with a runtime's outcome that the call ran; the
// flow rule's allow_session accepts the three, its allow_project is
// refused and writes nothing; a decision's row keeps the labels its call
// carried.
func testFlowLabels(t *testing.T, s Store) {
	ctx := t.Context()
	mustCreate(t, s, api.Session{ID: "root"})
	mustCreate(t, s, api.Session{ID: "kid", ParentSessionID: "root"})
	labels := func(id string) []string {
		t.Helper()
		tree, err := s.SessionTree(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range pdp.TreeLabels(tree) {
			out = append(out, l.Label)
		}
		slices.Sort(out)
		return out
	}
	if got := labels("kid"); len(got) != 0 { // warm any cache first
		t.Fatalf("a new tree has labels %v", got)
	}

	fetch := event("kid", api.Allow, 0)
	fetch.Decision.Labels = []string{api.LabelUntrusted}
	fetch.LabelRoot = "root"
	fetch.Labels = []api.FlowLabel{{Label: api.LabelUntrusted, DecisionID: fetch.Decision.DecisionID, SessionID: "kid", Time: fetch.Time, Summary: "WebFetch https://x"}}
	mustRecord(t, s, fetch)
	if got := labels("kid"); !slices.Equal(got, []string{api.LabelUntrusted}) {
		t.Fatalf("after an allowed fetch: %v", got)
	}
	tree, _ := s.SessionTree(ctx, "root")
	if l := tree.Labels[0]; l.DecisionID != fetch.Decision.DecisionID || l.SessionID != "kid" || l.Summary != "WebFetch https://x" || !l.Time.Equal(fetch.Time) {
		t.Fatalf("the label as kept: %+v", l)
	}
	// A second setter keeps the first.
	again := event("root", api.Allow, time.Second)
	again.Decision.Labels = []string{api.LabelUntrusted}
	again.LabelRoot, again.Labels = "root", []api.FlowLabel{{Label: api.LabelUntrusted, DecisionID: again.Decision.DecisionID, SessionID: "root", Time: again.Time}}
	mustRecord(t, s, again)
	if tree, _ := s.SessionTree(ctx, "kid"); tree.Parent.Labels[0].DecisionID != fetch.Decision.DecisionID {
		t.Fatalf("a later call replaced the label's first setter: %+v", tree.Parent.Labels)
	}
	if rec, err := s.Decision(ctx, fetch.Decision.DecisionID); err != nil || !slices.Equal(rec.Labels, []string{api.LabelUntrusted}) {
		t.Fatalf("the decision's labels: %v, %v", rec.Labels, err)
	}

	// An ask's labels come with a person's allow, not before.
	secret := shellAsk("kid", 2*time.Second, "")
	secret.Decision.Labels = []string{api.LabelSensitive}
	mustRecord(t, s, secret)
	if got := labels("kid"); slices.Contains(got, api.LabelSensitive) {
		t.Fatalf("an ask set its labels: %v", got)
	}
	if _, err := s.AnswerDecision(ctx, secret.Decision.DecisionID, api.AllowOnce, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	if got := labels("kid"); !slices.Contains(got, api.LabelSensitive) {
		t.Fatalf("allow_once did not set the ask's labels: %v", got)
	}

	// The flow rule's ask: allow_project is refused and writes nothing;
	// allow_session accepts.
	send := shellAsk("kid", 3*time.Second, "")
	send.Decision.Rule, send.Decision.Source = pdp.FlowRule, "config"
	send.Decision.Labels = []string{api.LabelExternal}
	mustRecord(t, s, send)
	_, err := s.AnswerDecision(ctx, send.Decision.DecisionID, api.AllowProject, "console", api.Answerer{})
	wantErr(t, err, pdp.ErrNotGrantable)
	if got := labels("kid"); slices.Contains(got, api.LabelExternal) {
		t.Fatalf("a refused answer wrote labels: %v", got)
	}
	if rec, _ := s.Decision(ctx, send.Decision.DecisionID); rec.Answer != nil {
		t.Fatalf("a refused answer was recorded: %+v", rec.Answer)
	}
	if _, err := s.AnswerDecision(ctx, send.Decision.DecisionID, api.AllowSession, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	if got := labels("kid"); !slices.Equal(got, []string{api.LabelExternal, api.LabelSensitive, api.LabelAccepted, api.LabelUntrusted}) {
		t.Fatalf("after allow_session of the flow's ask: %v", got)
	}
	if g, _ := s.Grants(ctx, "root"); len(g) != 0 {
		t.Fatalf("accepting the flow granted %+v", g)
	}

	// A runtime's outcome: deny sets nothing, allow_once sets the labels.
	mustCreate(t, s, api.Session{ID: "other"})
	for i, outcome := range []string{api.DenyAnswer, api.AllowOnce} {
		ask := shellAsk("other", time.Duration(10+i)*time.Second, "")
		ask.Decision.Labels = []string{api.LabelUntrusted}
		ask.Request.ToolUseID = "toolu_" + outcome
		mustRecord(t, s, ask)
		if _, err := s.RecordOutcome(ctx, ask.Decision.DecisionID, outcome, "claude-code", "d"); err != nil {
			t.Fatal(err)
		}
		want := []string(nil)
		if outcome == api.AllowOnce {
			want = []string{api.LabelUntrusted}
		}
		if got := labels("other"); !slices.Equal(got, want) {
			t.Fatalf("after the outcome %s: %v", outcome, got)
		}
	}
	// A person's deny sets nothing.
	mustCreate(t, s, api.Session{ID: "third"})
	ask := shellAsk("third", 20*time.Second, "")
	ask.Decision.Labels = []string{api.LabelExternal}
	mustRecord(t, s, ask)
	if _, err := s.AnswerDecision(ctx, ask.Decision.DecisionID, api.DenyAnswer, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	if got := labels("third"); len(got) != 0 {
		t.Fatalf("a denied ask set labels: %v", got)
	}
}
