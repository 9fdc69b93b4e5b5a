package httpapi_test

import (
	"fmt"
	"testing"
)

// A decision that says it is grantable is granted by allow_session, and
// the grant allows the same call next time; one that says it is not is
// refused by the answer too. The decision and the answer decide
// grantability from the same facts. The commands are of the shapes real
// agents sent that were once refused with 422 not_grantable after their
// decision said grantable, and one a path rule asks for (no grant can
// lift that ask, so it is not grantable).
func TestWhatADecisionCallsGrantableIsGranted(t *testing.T) {
	s := newService(t)
	for i, cmd := range []string{
		`cd /home/u/proj && grep -n "~Q" tests/x.py | head -20 && make check`,
		`grep -n "~Q" tests/x.py | head -20 && make check`,
		`make check && cat $F`,
		`git add -A && git commit --amend -m "Fix: don't call tearDown twice"`,
		`make check; go vet ./... | head -20`,
		`npm test -- --watch=false && make lint --stat`,
	} {
		t.Run(cmd, func(t *testing.T) {
			session := fmt.Sprintf("g%d", i)
			d := s.decide(shell(session, cmd))
			if d["decision"] != "ask" {
				t.Fatalf("%q: %v (%v), want an ask", cmd, d["decision"], d["reason"])
			}
			answer := map[string]any{"answer": "allow_session", "channel": "cli"}
			if d["grantable"] != true {
				// Not grantable: the answer says so too, and changes nothing.
				s.mustStatus(422, "POST", "/v1/decisions/"+d["decision_id"].(string)+"/answer", answer)
				return
			}
			s.mustStatus(200, "POST", "/v1/decisions/"+d["decision_id"].(string)+"/answer", answer)
			if again := s.decide(shell(session, cmd)); again["decision"] != "allow" {
				t.Fatalf("after allow_session %q is %v (%v)", cmd, again["decision"], again["reason"])
			}
		})
	}
}
