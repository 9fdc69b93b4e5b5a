// Package hookflowtest checks an agent adapter against golden files: for
// every testdata/<case>.json event (an agent's documented payload), the
// call it maps to and its reply to allow, deny and ask, in
// testdata/<case>.golden. Run the tests with -update to rewrite them.
package hookflowtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookflow"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Adapter is an agent adapter's pure mapping.
type Adapter struct {
	Parse func([]byte) (hookflow.Call, error)
	Reply func(hookflow.Call, hookflow.Verdict) hookflow.Reply
}

type golden struct {
	Request any              `json:"request"`
	Kind    string           `json:"kind"`
	Child   string           `json:"child,omitempty"`
	Replies map[string]reply `json:"replies"`
}

type reply struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Exit   int    `json:"exit"`
	Body   string `json:"body"`
}

var kinds = map[hookflow.Kind]string{hookflow.Pre: "pre", hookflow.Permission: "permission", hookflow.Outcome: "outcome"}

// Run checks every event in dir against its golden file.
func Run(t *testing.T, dir string, a Adapter) {
	t.Helper()
	events, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(events) == 0 {
		t.Fatalf("no events in %s: %v", dir, err)
	}
	for _, path := range events {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := a.Parse(raw)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			g := golden{Request: c.Request(), Kind: kinds[c.Kind], Child: c.Child, Replies: map[string]reply{}}
			for _, d := range []string{"allow", "deny", "ask"} {
				r := a.Reply(c, hookflow.Verdict{Decision: d, Reason: "toolperm: the reason (rule r, decision d1)", DecisionID: "d1"})
				g.Replies[d] = reply{string(r.Stdout), r.Stderr, r.Exit, string(r.Body)}
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			file := filepath.Join(dir, name+".golden")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from what the adapter does now:\n%s", file, got)
			}
		})
	}
}

// Refuses checks that each malformed event is refused with an error
// that says the given piece.
func Refuses(t *testing.T, a Adapter, cases map[string]struct{ Event, Says string }) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := a.Parse([]byte(tc.Event))
			if err == nil || !strings.Contains(err.Error(), tc.Says) {
				t.Fatalf("error %v, want one that says %q", err, tc.Says)
			}
		})
	}
}
