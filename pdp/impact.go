package pdp

import (
	"context"
	"fmt"
	"sort"
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
func Impact(ctx context.Context, candidate *Policy, src RecordedDecisions, f ReplayFilter, progress func(n int)) (api.ImpactReport, error) {
	report := api.ImpactReport{Changes: []api.ImpactChange{}, Loosening: []api.ImpactChange{}}
	groups := map[[3]string]*api.ImpactChange{}
	n := 0
	err := src.EachRecorded(ctx, f, func(rd RecordedDecision) error {
		if n++; progress != nil && n%10000 == 0 {
			progress(n)
		}
		if rd.Recorded == nil {
			report.Skipped++
			return nil
		}
		d, err := candidate.Replay(ctx, rd.Recorded)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			report.Skipped++
			return nil
		}
		report.Replayed++
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
