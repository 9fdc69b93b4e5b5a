// Package gtfobins checks the program table of the shell effects
// (policies/data.json shell.programs) against an attacker's catalogue:
// every technique GTFOBins and the programs' manuals list for a program
// the table describes — running code, writing files, reading outside the
// workspace, reaching the network — is never judged a read, and one that
// leaves the workspace never a write in it.
package gtfobins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

type entry struct {
	Program   string `json:"program"`
	Technique string `json:"technique"`
	Command   string `json:"command"`
	Effect    string `json:"effect"`
	Source    string `json:"source"`
}

func load(t *testing.T, name string) []entry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func engine(t *testing.T) (*pdp.Engine, string) {
	t.Helper()
	p, err := policysource.LoadFS(context.Background(), policies.FS, "builtin")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"notes.txt", "x.txt", "archive.zip", "archive.tar", "app.py", "src/a.py"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pdp.New(p, pdp.Components{Shell: shell.Parser{}, Workspace: paths.Resolver{FollowSymlinks: true}}), ws
}

func decide(t *testing.T, e *pdp.Engine, ws, cmd string, level api.Level) api.Decision {
	t.Helper()
	d, err := e.Decide(context.Background(), pdp.Call{
		Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": cmd}, Cwd: ws},
		Session: &pdp.SessionTree{Workspace: ws, PermissionLevel: level},
	})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return d
}

func TestNoTechniqueIsJudgedARead(t *testing.T) {
	e, ws := engine(t)
	catalogue := load(t, "catalogue.json")
	if len(catalogue) < 200 {
		t.Fatalf("the catalogue has %d techniques", len(catalogue))
	}
	for _, c := range catalogue {
		t.Run(c.Program+"/"+c.Technique+"/"+c.Command, func(t *testing.T) {
			for _, level := range []api.Level{api.ReadOnly, api.ReadWrite} {
				d := decide(t, e, ws, c.Command, level)
				byEffect := d.Decision == api.Allow && (d.Rule == "fs.read" || d.Rule == "fs.write")
				switch {
				case byEffect && d.Rule == "fs.read":
					t.Fatalf("%s: judged a read (%s)", level, d.Reason)
				case byEffect && c.Effect != "write":
					t.Fatalf("%s: a %s technique judged a write in the workspace (%s)", level, c.Effect, d.Reason)
				}
			}
		})
	}
}

// The harmless twins: ordinary reads of the same programs. Each one of a
// program the table describes runs at READ_ONLY; the share allowed is
// logged for docs/asks.md.
func TestHarmlessTwinsRun(t *testing.T) {
	e, ws := engine(t)
	twins := load(t, "harmless.json")
	allowed := 0
	for _, c := range twins {
		level := api.ReadOnly
		if c.Effect == "write" {
			level = api.ReadWrite
		}
		d := decide(t, e, ws, c.Command, level)
		if d.Decision == api.Allow {
			allowed++
			continue
		}
		t.Logf("%s asks: %q (%s)", level, c.Command, d.Reason)
	}
	t.Logf("%d of %d harmless twins allowed", allowed, len(twins))
	if allowed*100 < 60*len(twins) {
		t.Errorf("only %d of %d harmless twins run without a person", allowed, len(twins))
	}
}
