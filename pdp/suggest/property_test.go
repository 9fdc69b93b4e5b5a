package suggest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/pdp/suggest"
)

// expiring is the store as it reads once asks expire: the asks named
// carry the answer "expired" (channel pdp).
type expiring struct {
	suggest.Trail
	expired map[string]bool
}

func (e expiring) Decisions(ctx context.Context, f pdp.DecisionFilter) ([]api.Event, error) {
	list, err := e.Trail.Decisions(ctx, f)
	for i := range list {
		if e.expired[list[i].DecisionID] {
			list[i].Answer = &api.Answer{Answer: api.Expired, Channel: "pdp"}
		}
	}
	return list, err
}

var (
	programs = []string{"git", "go", "make", "npm", "cargo"}
	subs     = []string{"status", "log", "test", "build", "diff", "push", "run"}
	args     = []string{"", " ./...", " --short", " -v", " main", " x y", " $HOME", " > out.txt", " | head"}
)

// For random trails, no suggestion covers an ask that was denied or
// expired, and a policy with every suggestion added changes no recorded
// decision but asks of the level table that no one refused, each one an
// ask a suggestion covers.
func TestSuggestionsNeverCoverARefusalNorLoosenBeyondTheirAsks(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 35))
			sessions := []string{"a", "b", "c", "d"}
			tr := newTrail(t, sessions...)
			// Session d's own rule asks for every git command: those
			// asks are the rule's, never a suggestion's to turn.
			dRules := map[string]string{"git": api.Ask}
			if _, err := tr.person.Sessions().Update(context.Background(), "d", api.SessionChange{CommandRules: &dRules}); err != nil {
				t.Fatal(err)
			}
			expired := map[string]bool{}
			commands := map[string]string{} // decision id → command
			for range 60 + rng.IntN(60) {
				cmd := programs[rng.IntN(len(programs))] + " " + subs[rng.IntN(3)+rng.IntN(4)] + args[rng.IntN(len(args))]
				if rng.IntN(4) == 0 {
					cmd += args[rng.IntN(len(args))]
				}
				answer := []string{api.AllowOnce, api.AllowOnce, api.AllowOnce, api.AllowOnce, api.DenyAnswer, ""}[rng.IntN(6)]
				d := tr.run(sessions[rng.IntN(len(sessions))], cmd, answer)
				commands[d.DecisionID] = cmd
				if answer == "" && rng.IntN(2) == 0 {
					expired[d.DecisionID] = true
				}
			}
			trail := expiring{Trail: tr.srv.Store, expired: expired}
			out, err := suggest.Suggest(context.Background(), tr.srv.Policy, trail, suggest.Options{MinAnswers: 2})
			if err != nil {
				t.Fatal(err)
			}
			asks := map[string]api.Event{}
			events, err := trail.Decisions(context.Background(), pdp.DecisionFilter{Decision: api.Ask, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events {
				asks[ev.DecisionID] = ev
			}
			rules := map[string]string{}
			for _, s := range out.Suggestions {
				rules[s.Pattern] = api.Allow
				if s.Impact.OtherChanges != 0 || s.Evidence.Denies != 0 || s.Evidence.Expired != 0 {
					t.Errorf("suggestion %+v", s)
				}
				for id, ev := range asks {
					refused := ev.Answer != nil && (ev.Answer.Answer == api.DenyAnswer || ev.Answer.Answer == api.Expired)
					if refused && covers(s.Pattern, commands[id]) {
						t.Errorf("%q covers %s, %q, answered %s", s.Pattern, id, commands[id], ev.Answer.Answer)
					}
				}
			}
			if len(rules) == 0 {
				return
			}
			candidate := candidatePolicy(t, rules)
			err = tr.srv.Store.EachRecorded(context.Background(), pdp.ReplayFilter{}, func(rd pdp.RecordedDecision) error {
				d, err := candidate.Replay(context.Background(), rd.Recorded)
				if err != nil {
					return err
				}
				if d.Decision == rd.Decision {
					return nil
				}
				ev, isAsk := asks[rd.DecisionID]
				refused := isAsk && ev.Answer != nil && !ev.Answer.Allows()
				if !isAsk || d.Decision != api.Allow || ev.Source != "level" || refused {
					t.Errorf("%s %q: %s → %s (%s) with %v", rd.DecisionID, commands[rd.DecisionID], rd.Decision, d.Decision, d.Rule, rules)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d suggestions over %d asks", len(out.Suggestions), len(asks))
		})
	}
}

// covers: the command's words start with the pattern's.
func covers(pattern, command string) bool {
	return strings.HasPrefix(command+" ", pattern+" ")
}
