// Package suggest mines the audit trail for the command rules people are
// in effect already applying: the asks of the level table they allowed
// again and again, grouped by the fingerprint a grant would name, each
// turned into the narrowest command prefix the answers share, checked
// against every refusal in the window and replayed with the policy to
// show what it would change. It proposes nothing that could open a hole:
// no call without a fingerprint (interpreters, shells, wrappers, sudo,
// env, rm and the other programs no grant may name have none), no ask of
// a policy or session rule, the deny floor or the SMART screen, nothing
// covering an ask that was denied or expired, and nothing whose replay
// changes any decision but an ask of the level table.
package suggest

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// Trail is what mining reads: the answered asks and each decision's
// recorded input.
type Trail interface {
	pdp.RecordedDecisions
	Decisions(ctx context.Context, f pdp.DecisionFilter) ([]api.Event, error)
}

// Options select the window and the thresholds.
type Options struct {
	Since time.Time // zero: the whole trail
	// Sessions, when set, limit the trail to these sessions (a project's:
	// ProjectSessions); the suggestions are then the project's.
	Sessions map[string]bool
	// MinAnswers is the fewest allows a suggestion needs (default 5),
	// MinSessions the fewest distinct sessions they come from (default 2).
	MinAnswers  int
	MinSessions int
}

// The defaults of Options.
const (
	DefaultMinAnswers  = 5
	DefaultMinSessions = 2
	// DefaultWindow is how far back `pdp suggest` and GET /v1/suggestions
	// read without a since.
	DefaultWindow = 14 * 24 * time.Hour
)

// MaxAsks bounds the asks one mining reads; a window with more is an
// error (narrow it), never a partial reading that could miss a refusal.
const MaxAsks = 100_000

const (
	pageSize    = 1000
	maxExamples = 5
	// AcceptChannel is the channel of the answer that accepts a
	// suggestion for a project; such an answer is no evidence.
	AcceptChannel = "suggestion"
	// KindCommandRule is a suggestion of a command prefix rule.
	KindCommandRule = "command_rule"
)

// Suggest mines the trail in the window with the active policy.
func Suggest(ctx context.Context, policy *pdp.Policy, trail Trail, o Options) (api.Suggestions, error) {
	if o.MinAnswers <= 0 {
		o.MinAnswers = DefaultMinAnswers
	}
	if o.MinSessions <= 0 {
		o.MinSessions = DefaultMinSessions
	}
	out := api.Suggestions{Suggestions: []api.Suggestion{}, Dropped: []api.DroppedSuggestion{}}
	asks, err := readAsks(ctx, trail, o)
	if err != nil {
		return out, err
	}
	out.Asks = len(asks)
	filter := pdp.ReplayFilter{Since: o.Since}
	if err := trail.EachRecorded(ctx, filter, func(rd pdp.RecordedDecision) error {
		if a := asks[rd.DecisionID]; a != nil {
			a.rec = rd.Recorded
		}
		return nil
	}); err != nil {
		return out, fmt.Errorf("reading the recorded asks: %w", err)
	}
	cands, dropped := mine(asks, o)
	out.Dropped = append(out.Dropped, dropped...)
	replayed, err := measure(ctx, policy, trail, filter, o.Sessions, asks, cands)
	if err != nil {
		return out, err
	}
	out.Replayed = replayed
	for _, c := range cands {
		switch {
		case c.other > 0:
			out.Dropped = append(out.Dropped, drop(c.pattern, fmt.Sprintf("replaying the trail with it changes %d decisions that are not asks of the level table", c.other), c.otherExamples))
		case c.impact.AsksToAllow == 0:
			out.Dropped = append(out.Dropped, drop(c.pattern, "it changes no recorded decision under the active policy", nil))
		default:
			sug := c.suggestion()
			if o.Sessions != nil {
				sug.Scope = "project"
			}
			out.Suggestions = append(out.Suggestions, sug)
		}
	}
	sort.Slice(out.Suggestions, func(i, j int) bool {
		a, b := out.Suggestions[i], out.Suggestions[j]
		if a.Impact.AsksToAllow != b.Impact.AsksToAllow {
			return a.Impact.AsksToAllow > b.Impact.AsksToAllow
		}
		return a.Pattern < b.Pattern
	})
	sort.SliceStable(out.Dropped, func(i, j int) bool { return out.Dropped[i].Pattern < out.Dropped[j].Pattern })
	return out, nil
}

// ask is an ask of the window as mining reads it.
type ask struct {
	ev  api.Event
	rec *pdp.Recorded
}

// refused: a person denied it, it expired unanswered, or the runtime
// reported that it did not run.
func (a *ask) refused() bool {
	if ans := a.ev.Answer; ans != nil && (ans.Answer == api.DenyAnswer || ans.Answer == api.Expired) {
		return true
	}
	return a.ev.Outcome != nil && a.ev.Outcome.Answer == api.DenyAnswer
}

// levelAsk: the ask is the level table's (not a rule's, the deny
// floor's or the ask-always list's) and the SMART screen did not mark
// the command dangerous. Only such an ask may be turned into an allow.
func (a *ask) levelAsk() bool {
	d := a.ev.Decision
	return d.Decision == api.Ask && d.Source == "level" && d.Capability != nil && *d.Capability == "shell.exec" &&
		(d.Danger == nil || d.Danger.By != "screen")
}

func readAsks(ctx context.Context, trail Trail, o Options) (map[string]*ask, error) {
	asks := map[string]*ask{}
	f := pdp.DecisionFilter{Decision: api.Ask, Since: o.Since, Limit: pageSize}
	read := 0
	for {
		page, err := trail.Decisions(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("reading the asks: %w", err)
		}
		for _, ev := range page {
			if o.Sessions == nil || o.Sessions[ev.SessionID] {
				asks[ev.DecisionID] = &ask{ev: ev}
			}
		}
		if read += len(page); read > MaxAsks {
			return nil, pdp.Invalid("too_many_asks", "the window holds more than %d asks; choose a later since", MaxAsks)
		}
		if len(page) < pageSize {
			return asks, nil
		}
		f.Before = page[len(page)-1].DecisionID
	}
}

func drop(pattern, reason string, examples []string) api.DroppedSuggestion {
	if examples == nil {
		examples = []string{}
	}
	return api.DroppedSuggestion{Kind: KindCommandRule, Pattern: pattern, Reason: reason, Examples: examples}
}
