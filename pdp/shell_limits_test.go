package pdp_test

import (
	"strings"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// TestCommandsOverTheShellLimitsAreNeverAllowed: a command too big or
// too deep to judge is decided without parsing it, quickly, and is
// never allowed — not by a grant, not by a SAFE verdict (the screen
// answers before the model is asked).
func TestCommandsOverTheShellLimitsAreNeverAllowed(t *testing.T) {
	shellOptions := func(n int, body string) string {
		return "sh " + strings.Repeat("-o sh ", n) + "-c '" + strings.ReplaceAll(body, "'", `'\''`) + "'"
	}
	nested := "rm -rf build"
	for range 4 {
		nested = shellOptions(40, nested)
	}
	// reason: what the shell facts' error says (adapters/shell tests it).
	cases := []struct {
		name, cmd, reason string
	}{
		{"450,000-stage pipeline (900 KB)", strings.Repeat("npm install|", 449999) + "npm install", "bytes"},
		{"10,000-stage pipeline (120 KB)", strings.Repeat("npm install|", 9999) + "npm install", "bytes"},
		{"2,000-stage pipeline (24 KB)", strings.Repeat("npm install|", 1999) + "npm install", "operators"},
		{"100,000 nested substitutions (300 KB)", strings.Repeat("$(", 100000) + "npm install" + strings.Repeat(")", 100000), "bytes"},
		{"20,000 nested substitutions (60 KB)", strings.Repeat("$(", 20000) + "npm install" + strings.Repeat(")", 20000), "nested"},
		{"20 nested substitutions", "npm install " + strings.Repeat("$(", 20) + "x" + strings.Repeat(")", 20), "nested"},
		{"carriage return in a word", "npm install\rrm -rf /", "control character"},
		{"-o sh repeated before -c, nested four levels", nested, ""},
		{"-o sh repeated 400 times before -c (2 KB)", shellOptions(400, "rm -rf build"), ""},
	}
	safe := &fixedAssessor{verdict: pdp.Safe}
	e := newEngine(t, pdp.Components{Assessor: safe})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			session := &pdp.SessionTree{PermissionLevel: api.Smart, Workspace: "/w",
				Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "npm install"}}}
			call := shellCall(tc.cmd, session)
			d := decide(t, e, call)
			if d.Decision == api.Allow || d.Grantable || d.Fingerprint != nil {
				t.Fatalf("got %s (grantable %v, fingerprint %v)", d.Decision, d.Grantable, d.Fingerprint)
			}
			if d.Danger == nil || d.Danger.By != "screen" {
				t.Fatalf("danger %+v, want the screen's", d.Danger)
			}
		})
	}
	if n := safe.calls.Load(); n != 0 {
		t.Fatalf("the assessor was asked %d times", n)
	}
}

// A word of a program with command flags (git, make, tar, …) is looked
// up among them by what comes before each of its "=" signs; a word made
// of thousands of them must cost what its length does, not its length
// squared. Allocations per decision do not move with the machine's load.
func TestAWordOfManyEqualsSignsCostsItsLength(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	decideWord := func(n int) float64 {
		call := shellCall("git "+strings.Repeat("=", n), &pdp.SessionTree{Workspace: "/w"})
		return testing.AllocsPerRun(3, func() {
			call.Request.Args = map[string]any{"command": "git " + strings.Repeat("=", n)}
			n++ // a new document every run: no memo answers it
			if _, err := e.Decide(t.Context(), call); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := decideWord(1000), decideWord(16000)
	if large > 4*small {
		t.Errorf("16,000 equals signs cost %.0f allocations, 1,000 cost %.0f: more than linear", large, small)
	}
}
