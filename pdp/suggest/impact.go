package suggest

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// measure replays every recorded decision in the window that names a
// candidate's program with the candidate's rule added, and counts what
// changes because of it: an ask of the level table no one refused that
// becomes allow is the candidate's own; anything else is a change beyond
// it. A change the policy alone makes (the trail recorded under another
// policy) is not the candidate's. It returns how many replays it made.
func measure(ctx context.Context, policy *pdp.Policy, trail pdp.RecordedDecisions, f pdp.ReplayFilter, sessions map[string]bool, asks map[string]*ask, cands []*candidate) (int, error) {
	if len(cands) == 0 {
		return 0, nil
	}
	replayed := 0
	err := trail.EachRecorded(ctx, f, func(rd pdp.RecordedDecision) error {
		if rd.Recorded == nil || (sessions != nil && !sessions[rd.SessionID]) {
			return nil
		}
		var baseline *api.Decision
		for _, c := range cands {
			if !mentions(rd.Recorded, c.words[0]) {
				continue
			}
			if rd.Decision != api.Allow && under(rd.Rule, c.words) {
				// A deny or ask rule of fewer words: an allow of more
				// words written beside it in the same table would
				// override it, so the candidate is no suggestion.
				c.changeBeyond(rd.DecisionID)
				continue
			}
			replayed++
			d, err := policy.Replay(ctx, WithRule(rd.Recorded, c.pattern))
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				// The rule's effect on this decision is unknown: it
				// counts against the candidate.
				c.changeBeyond(rd.DecisionID)
				continue
			}
			if d.Decision == rd.Decision {
				continue
			}
			if baseline == nil {
				b, err := policy.Replay(ctx, rd.Recorded)
				if err != nil {
					b = api.Decision{Decision: "error"}
				}
				baseline = &b
			}
			if baseline.Decision == d.Decision {
				continue
			}
			a := asks[rd.DecisionID]
			if rd.Decision == api.Ask && d.Decision == api.Allow && a != nil && a.levelAsk() && !a.refused() {
				c.impact.AsksToAllow++
				if len(c.impact.Examples) < maxExamples {
					c.impact.Examples = append(c.impact.Examples, rd.DecisionID)
				}
				continue
			}
			c.changeBeyond(rd.DecisionID)
		}
		return nil
	})
	if err != nil {
		return replayed, fmt.Errorf("replaying the trail with the suggestions: %w", err)
	}
	return replayed, nil
}

func (c *candidate) changeBeyond(id string) {
	c.other++
	if len(c.otherExamples) < maxExamples {
		c.otherExamples = append(c.otherExamples, id)
	}
}

// WithRule is the recorded decision with the command rule prefix → allow
// added to the session's rules at every level of its tree, as a rule of
// the policy's data.commands would apply there: a call that reached the
// level table met no deny or ask rule of its own words, so the layer the
// allow sits in does not change what it decides. A rule the session has
// for the prefix already stays.
func WithRule(rec *pdp.Recorded, prefix string) *pdp.Recorded {
	if rec == nil {
		return nil
	}
	out := *rec
	out.Input = maps.Clone(rec.Input)
	sess, _ := rec.Input["session"].(map[string]any)
	sess = maps.Clone(sess)
	if sess == nil {
		sess = map[string]any{}
	}
	rules := map[string]any{}
	if old, ok := sess["command_rules"].(map[string]any); ok {
		maps.Copy(rules, old)
	}
	if !stopped(rules, prefix) {
		rules[prefix] = api.Allow
	}
	sess["command_rules"] = rules
	out.Input["session"] = sess
	out.Parent = WithRule(rec.Parent, prefix)
	return &out
}

// stopped: the session has a rule for the prefix or fewer of its words
// that is not an allow; the session's own deny or ask stays as it is.
func stopped(rules map[string]any, prefix string) bool {
	if _, ok := rules[prefix]; ok {
		return true
	}
	words := strings.Split(prefix, " ")
	for k, action := range rules {
		if under(k, words) && action != api.Allow {
			return true
		}
	}
	return false
}

// under: the rule's words are the first words of the prefix, its
// program compared lower-cased, as rule tables key it.
func under(rule string, words []string) bool {
	rw := strings.Split(rule, " ")
	if rule == "" || len(rw) > len(words) || strings.ToLower(rw[0]) != words[0] {
		return false
	}
	return equalWords(words[1:], rw[1:])
}
