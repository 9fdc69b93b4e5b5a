package shell

import (
	"context"

	"github.com/toolperm/pdp/pdp"
)

// Parser implements pdp.Shell with bash parsing within Limits (zero
// fields take DefaultLimits).
type Parser struct {
	Limits Limits
}

// Parse parses a command string into the core's shell facts.
func (p Parser) Parse(ctx context.Context, command string) pdp.ShellFacts {
	return p.Limits.Parse(ctx, command).core()
}

// FromArgv gives the facts of an argv run without a shell.
func (Parser) FromArgv(argv []string) pdp.ShellFacts {
	return FromArgv(argv).core()
}

// Canonical is the command as the shell sees it, comments gone
// (Canonical).
func (Parser) Canonical(command string) (string, error) { return Canonical(command) }

// core copies the facts into the core's type.
func (f Facts) core() pdp.ShellFacts {
	commands := make([]pdp.ShellCommand, len(f.Commands))
	for i, c := range f.Commands {
		commands[i] = pdp.ShellCommand{Argv: c.Argv, Literal: c.Literal, Glob: c.Glob}
	}
	parts := make([]pdp.ShellPart, len(f.Parts))
	for i, p := range f.Parts {
		parts[i] = pdp.ShellPart{
			Text: p.Text, Argv: p.Argv, Literal: p.Literal, Simple: p.Simple, First: p.First, End: p.End,
			Assignments: p.Assignments, Substitutions: p.Substitutions, Evaluated: p.Evaluated,
			Redirections: coreRedirects(p.Redirections), Background: p.Background, Negated: p.Negated,
		}
	}
	return pdp.ShellFacts{
		Parsed: f.Parsed, Error: f.Error, Limit: f.Limit, Commands: commands,
		Operators: f.Operators, Compound: f.Compound,
		Redirections: f.Redirections, Substitutions: f.Substitutions, Assignments: f.Assignments,
		Parts: parts, Redirects: coreRedirects(f.Redirects), Evaluated: f.Evaluated, Assigned: f.Assigned,
		GlobsAnyName: f.GlobsAnyName, WordsUnknown: f.WordsUnknown,
	}
}

func coreRedirects(list []Redirect) []pdp.ShellRedirect {
	out := make([]pdp.ShellRedirect, len(list))
	for i, r := range list {
		out[i] = pdp.ShellRedirect(r)
	}
	return out
}
