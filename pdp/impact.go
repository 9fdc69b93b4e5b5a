package pdp

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
)

// api.ImpactReport is what a candidate policy would change.

// RecordedDecision is an audit event as replay reads it: what was decided
// and, when the event kept it, what it was judged on.
type RecordedDecision struct {
	DecisionID string
	SessionID  string
	Decision   string
	Rule       string
	// Ran: the call ran — allowed, an ask a person allowed, or one the
	// runtime reported it ran.
	Ran bool
	// Recorded is nil for an event that is not replayable (older than the
	// trail's recording, or over MaxRecordedBytes).
	Recorded *Recorded
}

// ReplayFilter selects the recorded decisions to replay.
type ReplayFilter struct {
	Since     time.Time // zero: from the first
	SessionID string    // empty: every session
}

// RecordedDecisions streams the recorded decisions of the audit trail.
type RecordedDecisions interface {
	EachRecorded(ctx context.Context, f ReplayFilter, fn func(RecordedDecision) error) error
}

// maxExamples is how many decision ids each group of changes names.
const maxExamples = 5

// Impact replays every recorded decision in range with the candidate and
// reports what changes. A decision that cannot be replayed (not recorded,
// or the candidate fails on it) is skipped and counted. progress, when
// set, is told how many were read so far.
//
// The trail is replayed in order, oldest first, so each session tree's
// flow labels are the candidate's (docs/design.md §4, "Flow"): a call
// adds the labels the candidate gives it when the candidate allows it,
// or asks and the call ran (a person allowed it then, and would be
// asked now). A tree first met in range starts with the labels its
// first replayed decision had, and a person's acceptance of the three
// (allow_session of the flow rule's ask) is kept as it happened.
func Impact(ctx context.Context, candidate *Policy, src RecordedDecisions, f ReplayFilter, progress func(n int)) (api.ImpactReport, error) {
	report := api.ImpactReport{Changes: []api.ImpactChange{}, Loosening: []api.ImpactChange{}}
	groups := map[[3]string]*api.ImpactChange{}
	sessions := map[[3]string]map[string]bool{}
	flows := flowReplay{}
	n := 0
	err := src.EachRecorded(ctx, f, func(rd RecordedDecision) error {
		if n++; progress != nil && n%10000 == 0 {
			progress(n)
		}
		if rd.Recorded == nil {
			report.Skipped++
			return nil
		}
		labels := flows.of(rd)
		d, err := candidate.Replay(ctx, withLabels(rd.Recorded, labels))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			report.Skipped++
			return nil
		}
		report.Replayed++
		if d.Decision == api.Allow || (d.Decision == api.Ask && rd.Ran) {
			for _, l := range d.Labels {
				if _, ok := labels[l]; !ok {
					labels[l] = map[string]any{"decision_id": rd.DecisionID, "summary": recordedSummary(rd.Recorded)}
				}
			}
		}
		if d.Decision == rd.Decision {
			return nil
		}
		report.Changed++
		if loosens(rd.Decision, d.Decision) {
			report.Loosened++
		}
		key := [3]string{rd.Decision, d.Decision, d.Rule}
		g := groups[key]
		if g == nil {
			g = &api.ImpactChange{From: rd.Decision, To: d.Decision, Rule: d.Rule, Examples: []string{}}
			groups[key] = g
		}
		g.Count++
		if sessions[key] == nil {
			sessions[key] = map[string]bool{}
		}
		if !sessions[key][rd.SessionID] {
			sessions[key][rd.SessionID] = true
			g.Sessions++
		}
		if len(g.Examples) < maxExamples {
			g.Examples = append(g.Examples, rd.DecisionID)
		}
		return nil
	})
	if err != nil {
		return report, fmt.Errorf("replaying the audit trail: %w", err)
	}
	for _, g := range groups {
		report.Changes = append(report.Changes, *g)
	}
	sort.Slice(report.Changes, func(i, j int) bool {
		a, b := report.Changes[i], report.Changes[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.From+a.To+a.Rule < b.From+b.To+b.Rule
	})
	for _, g := range report.Changes {
		if loosens(g.From, g.To) {
			report.Loosening = append(report.Loosening, g)
		}
	}
	return report, nil
}

// strictness ranks the answers: an allow is the loosest.
var strictness = map[string]int{api.Allow: 0, api.Ask: 1, api.Deny: 2}

// loosens reports whether going from one answer to another lets more
// through: deny or ask → allow, deny → ask.
func loosens(from, to string) bool {
	return strictness[to] < strictness[from]
}

// flowReplay keeps each session tree's flow labels, as the candidate
// gives them, while a trail is replayed oldest first.
type flowReplay map[string]map[string]any

// of is the labels of rd's tree so far: on its first decision in range,
// those the decision was judged with; a person's acceptance of the three
// recorded since is kept.
func (f flowReplay) of(rd RecordedDecision) map[string]any {
	tree := rd.Recorded.Tree
	if tree == "" {
		tree = rd.SessionID
	}
	recorded := recordedLabels(rd.Recorded.Input)
	labels, ok := f[tree]
	if !ok {
		labels = map[string]any{}
		for k, v := range recorded {
			labels[k] = v
		}
		f[tree] = labels
	}
	if accepted, ok := recorded[api.LabelAccepted]; ok {
		if _, have := labels[api.LabelAccepted]; !have {
			labels[api.LabelAccepted] = accepted
		}
	}
	return labels
}

func recordedLabels(input map[string]any) map[string]any {
	session, _ := input["session"].(map[string]any)
	labels, _ := session["labels"].(map[string]any)
	return labels
}

// withLabels is rec judged with the tree's labels: its input's and its
// parent's (one tree) session labels replaced.
func withLabels(rec *Recorded, labels map[string]any) *Recorded {
	if rec == nil {
		return nil
	}
	out := *rec
	out.Input = make(map[string]any, len(rec.Input))
	for k, v := range rec.Input {
		out.Input[k] = v
	}
	if session, ok := rec.Input["session"].(map[string]any); ok {
		s := make(map[string]any, len(session)+1)
		for k, v := range session {
			s[k] = v
		}
		copied := make(map[string]any, len(labels))
		for k, v := range labels {
			copied[k] = v
		}
		s["labels"] = copied
		out.Input["session"] = s
	}
	out.Parent = withLabels(rec.Parent, labels)
	return &out
}

// recordedSummary names a replayed call for the label it sets: its tool
// and its command.
func recordedSummary(rec *Recorded) string {
	tool, _ := rec.Input["tool"].(string)
	if tool == "" {
		tool, _ = rec.Input["capability"].(string)
	}
	shell, _ := rec.Input["shell"].(map[string]any)
	parts, _ := shell["parts"].([]any)
	var texts []string
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			if t, ok := m["text"].(string); ok {
				texts = append(texts, t)
			}
		}
	}
	if len(texts) == 0 {
		return tool
	}
	return CallSummary(api.DecideRequest{Tool: tool, Args: map[string]any{"command": strings.Join(texts, "; ")}})
}
