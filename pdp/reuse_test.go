package pdp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/pdp"
)

// approvingPolicy allows a shell call for a reason of its session (a
// session fact on its own) or of its command's words (a rule with a
// general head that adds to the same document).
const approvingPolicy = `package toolperm

approved.shell contains "full session" if input.session.permission_level == "full"

approved[kind] contains "read-only command" if {
	input.shell.parsed
	every c in input.shell.commands { c.argv[0] in {"ls", "cat"} }
	kind := "shell"
}

answer := {"decision": "allow", "source": "config", "rule": "approved", "reason": concat(",", approved.shell), "grantable": false} if {
	count(approved.shell) > 0
} else := {"decision": "deny", "source": "config", "rule": "default", "reason": "not approved", "grantable": false}

decision := answer
`

// partBuiltPolicy denies a call by a document topdown may cache
// part-built (a lookup a.b[x][x] made for another command's sake).
const partBuiltPolicy = `package toolperm

a.b := {} if false

a[k][m][n] := true if {
	k := "b"
	some m in input.session.scope
	some n in input.session.scope
}

diagonal := [x | some x; a.b[x][x]]

blocked if a.b["fs.read"]["shell.exec"]

verdict := "deny" if blocked
else := "allow"

pre if {
	input.shell.commands[0].argv[0] == "echo"
	count(diagonal) >= 0
}

pre if input.shell.commands[0].argv[0] != "echo"

answer := {"decision": verdict, "source": "config", "rule": "r", "reason": "r", "grantable": false} if pre

decision := answer
`

// What one session's call computed never answers another's: a session
// with the same settings that runs another command gets OPA's answer for
// its own input.
func TestOneCallsReusedRulesNeverAnswerAnothers(t *testing.T) {
	for name, policy := range map[string]string{"a general head": approvingPolicy, "a part-built document": partBuiltPolicy} {
		t.Run(name, func(t *testing.T) { sameAsOPAAcrossSessions(t, policy) })
	}
}

func sameAsOPAAcrossSessions(t *testing.T, policy string) {
	ctx := context.Background()
	data := map[string]any{"tools": map[string]any{"shell": map[string]any{"capability": "shell.exec", "args": map[string]any{"command": "command"}}}}
	modules := map[string]*ast.Module{"p.rego": ast.MustParseModule(policy)}
	p, err := pdp.Compile(ctx, modules, data, "test", "r1")
	if err != nil {
		t.Fatal(err)
	}
	e := pdp.New(p, pdp.Components{Workspace: paths.Resolver{}, Shell: shell.Parser{}})
	call := func(id, cmd string) pdp.Call {
		return pdp.Call{Request: api.DecideRequest{SessionID: id, Tool: "shell", Args: map[string]any{"command": cmd}},
			Session: &pdp.SessionTree{ID: id, Workspace: "/w", Scope: []string{"fs.read", "shell.exec"}}}
	}
	opa := func(c pdp.Call) string {
		in, err := e.Input(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := rego.New(rego.Query(pdp.AnswerPoint), rego.ParsedModule(modules["p.rego"]), rego.Input(in)).Eval(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rs[0].Expressions[0].Value.(map[string]any)["decision"].(string)
	}
	for _, c := range []pdp.Call{call("a", "echo hi"), call("a", "ls"), call("b", "rm -rf /"), call("a", "cat x"), call("c", "curl x | sh")} {
		d, err := e.Decide(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if want := opa(c); d.Decision != want {
			t.Errorf("%s in session %s: the engine %s, OPA %s", c.Request.Args["command"], c.Request.SessionID, d.Decision, want)
		}
	}
}

// Many sessions deciding at once, with session settings that repeat and
// differ, get OPA's answers for their own inputs: the facts one session's
// settings computed never reach another's.
func TestConcurrentSessionsGetTheirOwnAnswers(t *testing.T) {
	ctx := context.Background()
	files := policytest.Files(t, func(map[string]any) {})
	modules := map[string]*ast.Module{}
	var data map[string]any
	for name, raw := range files {
		switch {
		case strings.HasSuffix(name, ".rego"):
			modules[name] = ast.MustParseModule(string(raw))
		case name == "data.json":
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
		}
	}
	p, err := pdp.Compile(ctx, modules, data, "test", "r1")
	if err != nil {
		t.Fatal(err)
	}
	e := pdp.New(p, pdp.Components{Workspace: paths.Resolver{}, Shell: shell.Parser{}})
	var opts []func(*rego.Rego)
	for name, raw := range files {
		if strings.HasSuffix(name, ".rego") {
			opts = append(opts, rego.Module(name, string(raw))) // parsed again: Compile rewrites its modules
		}
	}
	opts = append(opts, rego.Query(pdp.AnswerPoint), rego.Store(inmem.NewFromObject(data)))
	plain, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rules := []map[string]string{nil, {"shell.exec": "allow"}, {"shell.exec": "deny"}, {"fs.*": "ask"}}
	commandRules := []map[string]string{nil, {"git status": "allow"}, {"rm": "deny"}, {"git": "ask", "rm -rf": "allow"}, {"GIT": "deny"}}
	levels := []api.Level{api.ReadOnly, api.ReadWrite, api.Smart}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"shell", map[string]any{"command": "git status"}},
		{"shell", map[string]any{"command": "rm -rf /"}},
		{"read_file", map[string]any{"path": "a.go"}},
		{"write_file", map[string]any{"path": "../x"}},
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 24 {
				c := calls[(g+i)%len(calls)]
				s := &pdp.SessionTree{ID: fmt.Sprint("s", g), Workspace: "/w", PermissionLevel: levels[(g*7+i)%len(levels)], Rules: rules[(g+i*3)%len(rules)],
					CommandRules: commandRules[(g*3+i*5)%len(commandRules)]}
				call := pdp.Call{Request: api.DecideRequest{SessionID: s.ID, Tool: c.tool, Args: c.args, Cwd: "/w"}, Session: s}
				d, err := e.Decide(ctx, call)
				if err != nil {
					t.Error(err)
					return
				}
				in, err := e.Input(ctx, call)
				if err != nil {
					t.Error(err)
					return
				}
				if s.PermissionLevel == api.Smart && c.tool == "shell" {
					continue // the engine adds a danger verdict the first input lacks
				}
				rs, err := plain.Eval(ctx, rego.EvalInput(in))
				if err != nil || len(rs) != 1 {
					t.Errorf("OPA: %v", err)
					return
				}
				if want := rs[0].Expressions[0].Value.(map[string]any)["decision"]; d.Decision != want {
					t.Errorf("%s %v at %s with %v and %v: the engine %s, OPA %v", c.tool, c.args, s.PermissionLevel, s.Rules, s.CommandRules, d.Decision, want)
				}
			}
		}()
	}
	wg.Wait()
}
