package httpapi_test

import (
	"fmt"
	"slices"
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
			if would := stringList(t, d["would_grant"]); (len(would) > 0) != (d["grantable"] == true) {
				t.Fatalf("%q: grantable %v, would_grant %v", cmd, d["grantable"], would)
			}
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

// The decision's would_grant is exactly what the answer allow_session
// grants: for a single command its fingerprint, for a compound one each
// part's that nothing allows yet, and the same list wherever the decision
// is read back (the single decision, the list, the pending asks). A call
// that is not grantable has would_grant [] and its answer is refused.
func TestWouldGrantIsWhatAllowSessionGrants(t *testing.T) {
	s := newService(t)
	cases := []struct {
		session, already, cmd string
		want                  []string
	}{
		{"w1", "", "make check", []string{"make check"}},
		{"w2", "", "make check && go vet ./...", []string{"make check", "go vet"}},
		{"w3", "make check", "make check && go vet ./...", []string{"go vet"}},
	}
	for _, c := range cases {
		func() {
			s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": c.session, "workspace": "/home/u/proj"})
			if c.already != "" {
				d := s.decide(shell(c.session, c.already))
				s.mustStatus(200, "POST", "/v1/decisions/"+d["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_session", "channel": "cli"})
			}
			before := grantedFingerprints(s, c.session)
			d := s.decide(shell(c.session, c.cmd))
			if d["decision"] != "ask" || d["grantable"] != true {
				t.Fatalf("%q: %v grantable %v (%v), want a grantable ask", c.cmd, d["decision"], d["grantable"], d["reason"])
			}
			would := stringList(t, d["would_grant"])
			if !slices.Equal(would, c.want) {
				t.Fatalf("%q: would_grant %v, want %v", c.cmd, would, c.want)
			}
			for _, fp := range would {
				if slices.Contains(before, fp) {
					t.Fatalf("%q: would_grant %v names %q, already granted", c.cmd, would, fp)
				}
			}
			id := d["decision_id"].(string)
			// Read back from the audit trail, the list is the same.
			if got := stringList(t, s.mustStatus(200, "GET", "/v1/decisions/"+id, nil)["would_grant"]); !slices.Equal(got, would) {
				t.Fatalf("GET /v1/decisions/%s: would_grant %v, the decision said %v", id, got, would)
			}
			for _, list := range []string{"/v1/decisions?session_id=" + c.session, "/v1/decisions?decision=ask&pending=true&session_id=" + c.session} {
				items := s.mustStatus(200, "GET", list, nil)["decisions"].([]any)
				if len(items) == 0 {
					t.Fatalf("%s: empty", list)
				}
				if got := stringList(t, items[0].(map[string]any)["would_grant"]); !slices.Equal(got, would) {
					t.Fatalf("%s: would_grant %v, the decision said %v", list, got, would)
				}
			}
			s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_session", "channel": "cli"})
			after := grantedFingerprints(s, c.session)
			var added []string
			for _, fp := range after {
				if !slices.Contains(before, fp) {
					added = append(added, fp)
				}
			}
			slices.Sort(added)
			sorted := slices.Sorted(slices.Values(would))
			if !slices.Equal(added, sorted) {
				t.Fatalf("%q: allow_session granted %v, would_grant said %v", c.cmd, added, would)
			}
		}()
	}

	// Not grantable: [] and a refused answer.
	{
		s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "w4", "workspace": "/home/u/proj"})
		d := s.decide(shell("w4", "make check && python3 -c 'print(1)'"))
		if d["decision"] != "ask" || d["grantable"] != false {
			t.Fatalf("%v grantable %v (%v), want an ask that is not grantable", d["decision"], d["grantable"], d["reason"])
		}
		if got, ok := d["would_grant"].([]any); !ok || len(got) != 0 {
			t.Fatalf("would_grant %#v, want []", d["would_grant"])
		}
		id := d["decision_id"].(string)
		if got, ok := s.mustStatus(200, "GET", "/v1/decisions/"+id, nil)["would_grant"].([]any); !ok || len(got) != 0 {
			t.Fatalf("GET /v1/decisions/%s: would_grant %#v, want []", id, got)
		}
		s.mustStatus(422, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_session", "channel": "cli"})
		if got := grantedFingerprints(s, "w4"); len(got) != 0 {
			t.Fatalf("grants after a refused answer: %v", got)
		}
	}
}

// grantedFingerprints lists the fingerprints of the session's grants.
func grantedFingerprints(s *service, session string) []string {
	s.t.Helper()
	out := []string{}
	for _, g := range s.mustStatus(200, "GET", "/v1/sessions/"+session+"/grants", nil)["grants"].([]any) {
		out = append(out, g.(map[string]any)["fingerprint"].(string))
	}
	return out
}

// stringList reads a JSON array of strings, failing on anything else (null
// included).
func stringList(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%#v is not a list", v)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			t.Fatalf("%#v is not a list of strings", v)
		}
		out = append(out, s)
	}
	return out
}
