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

// core copies the facts into the core's type.
func (f Facts) core() pdp.ShellFacts {
	commands := make([]pdp.ShellCommand, len(f.Commands))
	for i, c := range f.Commands {
		commands[i] = pdp.ShellCommand{Argv: c.Argv, Literal: c.Literal}
	}
	return pdp.ShellFacts{
		Parsed: f.Parsed, Error: f.Error, Limit: f.Limit, Commands: commands,
		Operators: f.Operators, Compound: f.Compound,
		Redirections: f.Redirections, Substitutions: f.Substitutions, Assignments: f.Assignments,
	}
}
