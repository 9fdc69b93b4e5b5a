package pdp_test

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// refCatalogue is the built-in policy's tool catalogue, read once.
var refCatalogue = func() pdp.Catalogue {
	raw, err := policies.FS.ReadFile("data.json")
	if err != nil {
		panic(err)
	}
	var data struct{ Tools any }
	if err := json.Unmarshal(raw, &data); err != nil {
		panic(err)
	}
	c, err := pdp.DecodeCatalogue(data.Tools)
	if err != nil {
		panic(err)
	}
	return c
}()

// reference is the chain of docs/design.md §4 written as plain Go for the
// benchmarks only: the floor the Rego engine is measured against. It
// knows the built-in policy's data by heart and does the same adapter
// work (path resolution, shell parsing) the engine does.
type reference struct {
	resolver paths.Resolver
}

var (
	refTools = map[string]string{
		"read_file": "fs.read", "write_file": "fs.write", "edit_file": "fs.edit", "glob_search": "fs.glob",
		"grep_search": "fs.grep", "shell": "shell.exec", "Read": "fs.read", "WebFetch": "net.fetch",
	}
	refPolicy = map[string]string{"ask.user": "allow", "plan.update": "allow", "skill.load": "allow",
		"memory.recall": "allow", "review.report": "allow", "task.spawn": "allow", "code.*": "allow"}
	refLevels = map[api.Level]map[string]string{
		api.ReadOnly:  {"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow", "fs.write": "ask", "fs.edit": "ask", "shell.exec": "ask", "shell.jobs": "ask", "shell.stdin": "allow"},
		api.ReadWrite: {"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow", "fs.write": "allow", "fs.edit": "allow", "shell.exec": "ask", "shell.jobs": "ask", "shell.stdin": "allow"},
	}
	refUngrantable = map[string]bool{"rm": true, "sudo": true, "curl": true, "env": true, "xargs": true, "sh": true, "bash": true, "python3": true, "eval": true}
	refRank        = map[string]int{"allow": 0, "assess": 1, "ask": 2, "deny": 3}
)

func candidates(capability string) []string {
	out := []string{capability}
	parts := strings.Split(capability, ".")
	for n := len(parts) - 1; n > 0; n-- {
		out = append(out, strings.Join(parts[:n], ".")+".*")
	}
	return out
}

func lookup(rules map[string]string, cands []string) (string, bool) {
	for _, c := range cands {
		if a, ok := rules[c]; ok {
			return a, true
		}
	}
	return "", false
}

func (r reference) fingerprint(capability string, args map[string]any) string {
	cmd, ok := args["command"].(string)
	if capability != "shell.exec" || !ok {
		return ""
	}
	f := shell.Parse(context.Background(), cmd)
	if !f.Parsed || len(f.Commands) != 1 || len(f.Operators)+len(f.Compound)+f.Redirections+f.Substitutions+f.Assignments > 0 {
		return ""
	}
	c := f.Commands[0]
	if len(c.Argv) < 2 || !c.Literal[0] || !c.Literal[1] || strings.HasPrefix(c.Argv[1], "-") || refUngrantable[path.Base(c.Argv[0])] {
		return ""
	}
	return c.Argv[0] + " " + c.Argv[1]
}

// decide returns the decision of the chain for one call.
func (r reference) decide(req api.DecideRequest, s *pdp.SessionTree) string {
	capability, ok := refTools[req.Tool]
	if parts := strings.Split(req.Tool, "__"); len(parts) == 3 && parts[0] == "mcp" {
		capability, ok = "mcp."+parts[1]+"."+parts[2], true
	}
	if !ok {
		return "deny"
	}
	cands := candidates(capability)
	if len(s.Scope) > 0 {
		scope := make(map[string]string, len(s.Scope))
		for _, p := range s.Scope {
			scope[p] = "in"
		}
		if _, ok := lookup(scope, cands); !ok {
			return "deny"
		}
	}
	var parent string
	if s.Parent != nil {
		if parent = r.decide(req, s.Parent); parent == "deny" {
			return "deny"
		}
	}
	call := pdp.WorkspaceCall{Tool: req.Tool, Args: req.Args, Cwd: req.Cwd, Workspace: s.Workspace}
	if entry, ok := refCatalogue[req.Tool]; ok {
		call.Entry = &entry
	}
	if v, err := r.resolver.Check(context.Background(), call); err != nil || len(v.Outside) > 0 {
		return "deny"
	}
	level := s.PermissionLevel
	if level == "" {
		level = api.ReadOnly
	}
	action, has := "", false
	for _, layer := range []map[string]string{refPolicy, s.Rules, refLevels[level]} {
		if a, ok := lookup(layer, cands); ok && (!has || refRank[a] > refRank[action]) {
			action, has = a, true
		}
	}
	out := func(d string) string {
		if parent != "" && refRank[parent] > refRank[d] {
			return parent
		}
		return d
	}
	switch {
	case action == "deny":
		return "deny"
	case s.Mode == api.AllowAll:
		return out("allow")
	case !has && (strings.HasPrefix(capability, "mcp.") || strings.HasPrefix(capability, "net.") || capability == "fs.write" || capability == "shell.exec"):
		return "deny"
	}
	if fp := r.fingerprint(capability, req.Args); fp != "" {
		for cur := s; cur != nil; cur = cur.Parent {
			for _, g := range cur.Grants {
				if g.Capability == capability && g.Fingerprint == fp {
					return out("allow")
				}
			}
		}
	}
	switch action {
	case "ask", "assess":
		return out("ask")
	case "allow":
		return out("allow")
	}
	return "deny"
}

func TestReferenceAgreesWithTheEngine(t *testing.T) {
	e := newEngine(t, pdp.Components{Workspace: servedResolver})
	r := reference{resolver: servedResolver}
	mixes := map[string][]pdp.Call{"standard": standardMix(), "fresh 1": freshMix(1), "fresh 2": freshMix(2)}
	for name, calls := range mixes {
		t.Run(name, func(t *testing.T) {
			for _, call := range calls {
				want := decide(t, e, call).Decision
				if got := r.decide(call.Request, call.Session); got != want {
					t.Errorf("%s %v: reference %s, engine %s", call.Request.Tool, call.Request.Args, got, want)
				}
			}
		})
	}
}

// BenchmarkReferenceChain decides the calls of BenchmarkDecideUncached
// (the standard mix, a fresh argument in every call) in plain Go, with
// the same shell parser and path resolver.
func BenchmarkReferenceChain(b *testing.B) {
	r := reference{resolver: servedResolver}
	eachFreshCall(b, func(c pdp.Call) { r.decide(c.Request, c.Session) }, func() {})
}
