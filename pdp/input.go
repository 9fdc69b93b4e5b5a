package pdp

import (
	"context"
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp/internal/evalcache"
)

// The input document's keys and its most frequent values are interned:
// ast.InterfaceToValue, which turns each input into the AST the policy
// reads, then takes them from OPA's table instead of allocating each one
// on every evaluation (what that saves: docs/performance.md). OPA allows
// this only while packages initialise.
func init() {
	ast.InternStringTerm(
		// the document's keys (this file, pathrules.go, pipeline.go)
		"session", "workspace", "tool", "capability", "action", "shell", "danger", "parent_decision",
		"permission_level", "mode", "execution_mode", "rules", "command_rules", "grants", "has_parent", "scope", "fingerprint",
		"outside", "paths", "value", "path", "rel", "inside", "glob", "pattern", "place", AccessRead, AccessWrite, "policy",
		"runtime", "agent", "permission_mode", "parsed", "typed", "commands", "operators", "compound", "redirections", "substitutions", "assignments", "parts", "redirects",
		"evaluated", "assigned", "project", "from", "file", "enabled", FromWorkspace, FromHook, "labels", "tags", "summary", "decision_id", api.LabelUntrusted, api.LabelSensitive, api.LabelExternal, api.LabelAccepted, TagSensitive, TagUntrusted, TagMaybeSensitive, "error", "argv", "literal", "text", "simple", "first", "end", "background", "negated",
		"op", "target", "dev_null", "dup", "here_doc", "program", "possible", "command", "word", "redirect", "verdict", "by", "decision", "source", "rule", "reason",
		// frequent values
		string(api.ReadOnly), string(api.ReadWrite), string(api.Full), string(api.Smart), string(api.AlwaysAsk), string(api.OnDemand), string(api.AllowAll),
		string(api.Local), string(api.Cloud), api.Allow, api.Ask, api.Deny, ".", "|", "&&", "||", ";", "|&", "&",
	)
}

// reusePaths are the parts of the input document the evaluation cache
// judges rules by (pdp/internal/evalcache). Facts depend only on the
// call's capability and its session's settings: which capability a tool
// maps to, each rule layer's most specific pattern, whether the
// capability is dangerous or in a sub-agent's scope are the same for
// every call of one tool in one kind of session, whatever its arguments,
// command or paths. Late are what a later round of one decision adds (the
// parent's decision, the danger verdict: pipeline.go).
var reusePaths = evalcache.Paths{
	Facts: []ast.Ref{
		ast.MustParseRef("input.tool"),
		ast.MustParseRef("input.action"),
		ast.MustParseRef("input.capability"),
		ast.MustParseRef("input.shell.parsed"),
		ast.MustParseRef("input.shell.typed"),
		ast.MustParseRef("input.session.rules"),
		ast.MustParseRef("input.session.command_rules"),
		ast.MustParseRef("input.session.permission_level"),
		ast.MustParseRef("input.session.execution_mode"),
		ast.MustParseRef("input.session.mode"),
		ast.MustParseRef("input.session.scope"),
		ast.MustParseRef("input.session.has_parent"),
		// The project layer's rules and switches (project.go).
		ast.MustParseRef("input.project"),
		// The runtime's facts: which agent's catalogue entry a tool maps
		// through, and the mode a policy may pick a level table by.
		ast.MustParseRef("input.runtime.agent"),
		ast.MustParseRef("input.runtime.permission_mode"),
	},
	Late: []ast.Ref{
		ast.MustParseRef("input.parent_decision"),
		ast.MustParseRef("input.danger"),
	},
}

// input is the document the policy judges for session s: only facts, not
// raw arguments.
func (pl *pipeline) input(ctx context.Context, s *SessionTree) (map[string]any, WorkspaceVerdict, *ProjectPolicy, error) {
	req := pl.call.Request
	verdict, err := pl.workspace(ctx, s)
	if err != nil {
		return nil, verdict, nil, err
	}
	project := pl.project(ctx, s)
	in := map[string]any{
		"session":   sessionInput(s),
		"workspace": map[string]any{"outside": strings2any(verdict.Outside), "paths": pl.p.pathFacts(verdict, s.PathRules, project.pathRules())},
	}
	if project != nil {
		in["project"] = project.input
	}
	if req.Tool != "" {
		in["tool"] = req.Tool
	}
	if req.Capability != "" {
		in["capability"] = req.Capability
	}
	if action, ok := req.Args["action"].(string); ok {
		in["action"] = action
	}
	if pl.facts != nil {
		if pl.shell == nil { // once per decision: the parent's chain shares it
			pl.shell = shellInput(*pl.facts)
		}
		in["shell"] = pl.shell
	}
	if rt := runtimeInput(req.Runtime); rt != nil {
		in["runtime"] = rt
	}
	return in, verdict, project, nil
}

// workspace resolves the call's paths against s's workspace, with the
// tool's catalogue entry from the policy. No resolver configured confines
// everything: every path is outside.
func (pl *pipeline) workspace(ctx context.Context, s *SessionTree) (WorkspaceVerdict, error) {
	req := pl.call.Request
	call := WorkspaceCall{Tool: req.Tool, Args: req.Args, Cwd: req.Cwd, Workspace: s.Workspace}
	switch {
	case pl.facts != nil && pl.facts.Parsed:
		call.Words, call.Bases = shellPathWords(*pl.facts)
	case pl.facts != nil:
		call.Words = unreadWords()
	}
	if entry, ok := pl.p.catalogue.Lookup(req.Runtime, req.Tool); ok {
		call.Entry = &entry
	}
	if pl.e.c.Workspace == nil {
		return WorkspaceVerdict{}, fmt.Errorf("no workspace resolver is configured")
	}
	verdict, err := pl.e.c.Workspace.Check(ctx, call)
	var bad *Error
	if errors.As(err, &bad) {
		return verdict, bad
	}
	if err != nil {
		return verdict, fmt.Errorf("resolving paths: %w", err)
	}
	return verdict, nil
}

func sessionInput(s *SessionTree) map[string]any {
	// Grants are stored on the root of a session tree and apply to every
	// session in it; an inline tree may carry them at any level.
	var grants []any
	for cur := s; cur != nil; cur = cur.Parent {
		for _, g := range cur.Grants {
			scope := "session"
			if g.Scope == "project" {
				scope = "project"
			}
			grants = append(grants, map[string]any{"capability": g.Capability, "fingerprint": g.Fingerprint, "scope": scope})
		}
	}
	if grants == nil {
		grants = []any{}
	}
	out := map[string]any{
		"permission_level": string(s.PermissionLevel),
		"mode":             string(s.Mode),
		"execution_mode":   string(s.ExecutionMode),
		"workspace":        s.Workspace,
		"rules":            stringMap(s.Rules),
		"command_rules":    stringMap(s.CommandRules),
		"grants":           grants,
		"has_parent":       s.Parent != nil,
		"labels":           labelsInput(s),
	}
	if len(s.Scope) > 0 {
		out["scope"] = strings2any(s.Scope)
	}
	return out
}

// stringMap is a table of rules (pattern or prefix → action) as the
// input document holds it.
func stringMap(rules map[string]string) map[string]any {
	out := make(map[string]any, len(rules))
	for p, a := range rules {
		out[p] = a
	}
	return out
}

func shellInput(f ShellFacts) map[string]any {
	commands := make([]any, len(f.Commands))
	for i, c := range f.Commands {
		literal := make([]any, len(c.Literal))
		for j, l := range c.Literal {
			literal[j] = l
		}
		commands[i] = map[string]any{"argv": strings2any(c.Argv), "literal": literal}
	}
	out := map[string]any{
		"parsed":        f.Parsed,
		"commands":      commands,
		"operators":     strings2any(f.Operators),
		"compound":      strings2any(f.Compound),
		"redirections":  f.Redirections,
		"substitutions": f.Substitutions,
		"assignments":   f.Assignments,
		"parts":         partsInput(f.Parts),
		"redirects":     redirectsInput(f.Redirects),
		"evaluated":     f.Evaluated,
		"assigned":      strings2any(f.Assigned),
	}
	if f.Error != "" {
		out["error"] = f.Error
	}
	if f.Typed {
		out["typed"] = true
	}
	return out
}

func partsInput(parts []ShellPart) []any {
	out := make([]any, len(parts))
	for i, p := range parts {
		literal := make([]any, len(p.Literal))
		for j, l := range p.Literal {
			literal[j] = l
		}
		out[i] = map[string]any{
			"text": p.Text, "argv": strings2any(p.Argv), "literal": literal, "simple": p.Simple,
			"first": p.First, "end": p.End, "assignments": p.Assignments, "substitutions": p.Substitutions,
			"evaluated": p.Evaluated, "redirections": redirectsInput(p.Redirections),
			"background": p.Background, "negated": p.Negated,
		}
	}
	return out
}

func redirectsInput(list []ShellRedirect) []any {
	out := make([]any, len(list))
	for i, r := range list {
		out[i] = map[string]any{
			"op": r.Op, "target": r.Target, "dev_null": r.DevNull, "dup": r.Dup,
			"here_doc": r.HereDoc, "program": r.Program,
		}
	}
	return out
}

func strings2any(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
