package pdp

import "context"

// ShellCommand is one simple command the shell facts found anywhere in a
// command string.
type ShellCommand struct {
	// Argv holds each word after quote removal; a word with an expansion
	// keeps its source text and is marked non-literal.
	Argv []string
	// Literal[i] is true when Argv[i] is a plain word: no parameter,
	// command, arithmetic, glob, brace or tilde expansion.
	Literal []bool
}

// ShellFacts are what the policy knows of a command string: how it
// parses, never what it means (docs/policy.md, "The input document").
type ShellFacts struct {
	Parsed bool
	// Error is the parse error, or the limit the command is over, when
	// Parsed is false; Limit names that limit.
	Error string
	Limit string
	// Commands are all simple commands, including those inside
	// substitutions, subshells, compound commands and sh -c bodies.
	Commands []ShellCommand
	// Operators join or wrap commands: ";" (also a newline), "&&", "||",
	// "|", "|&", "&", "!".
	Operators []string
	// Compound names each compound command or keyword: "subshell",
	// "group", "if", "for", …
	Compound []string
	// Redirections counts redirections other than duplicating a numbered
	// descriptor; Substitutions counts $( ), backticks, <( ) and >( );
	// Assignments counts VAR=x prefixes and bare assignments.
	Redirections  int
	Substitutions int
	Assignments   int
}

// Shell turns what a shell call runs into facts. A command it cannot
// parse, or one over its limits, is a fact (Parsed false), not an error.
type Shell interface {
	// Parse parses a command string as the shell would run it; it stops
	// when ctx ends.
	Parse(ctx context.Context, command string) ShellFacts
	// FromArgv gives the facts of an argv run without a shell.
	FromArgv(argv []string) ShellFacts
}
