package pdp

import (
	"context"
	"strings"
)

// ShellCommand is one simple command the shell facts found anywhere in a
// command string.
type ShellCommand struct {
	// Argv holds each word after quote removal; a word with an expansion
	// keeps its source text and is marked non-literal.
	Argv []string
	// Literal[i] is true when Argv[i] is a plain word: no parameter,
	// command, arithmetic, glob, brace or tilde expansion.
	Literal []bool
	// Glob[i], for a word that is not literal only because of its glob
	// characters, is the word as a path.Match pattern (nil: none). Not in
	// the input document; the path rules use it (PathWord).
	Glob []string
}

// ShellFacts are what the policy knows of a command string: how it
// parses, never what it means (docs/policy.md, "The input document").
type ShellFacts struct {
	Parsed bool
	// Typed: the facts are of lines typed into a running process
	// (stdin.go), not of a command the call runs.
	Typed bool
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
	// Parts are the statements of the command's list, split at ;,
	// newlines, &&, ||, | and |&: what command rules and grants judge
	// one by one (docs/design.md §5).
	Parts []ShellPart
	// Redirects are every redirection anywhere, substitutions included.
	Redirects []ShellRedirect
	// Evaluated counts expansions that evaluate text as a variable's name
	// or as arithmetic (${!x}, ${x@P}, ${a[i]}, $(( ))) anywhere.
	Evaluated int
	// Assigned names the variables assigned anywhere (VAR=x prefixes,
	// bare assignments, declare/export/local).
	Assigned []string
	// GlobsAnyName: the call changes what its globs match (dotglob,
	// nocaseglob, GLOBIGNORE); WordsUnknown: where its words lead
	// (CDPATH, cdable_vars, links it makes). Not in the input document;
	// the path rules use them (PathWord).
	GlobsAnyName, WordsUnknown bool
}

// ShellPart is one statement of a command list. Only a part that is one
// simple command with nothing around it can be allowed by a command rule
// or a grant; a deny or ask applies to every command in any part.
type ShellPart struct {
	// Text is the part as the shell sees it, printed from the parse.
	Text string
	// Argv and Literal are its words when it is a simple command.
	Argv    []string
	Literal []bool
	// Simple: one simple command, not a subshell, group, keyword,
	// function or background list.
	Simple bool
	// First and End delimit the part's commands in ShellFacts.Commands:
	// its own, then those of its bodies and substitutions.
	First, End int
	// Assignments, Substitutions and Evaluated count VAR=x prefixes,
	// substitutions and evaluating expansions in the part.
	Assignments, Substitutions, Evaluated int
	// Redirections are the part's own redirections.
	Redirections []ShellRedirect
	// Background is a trailing &; Negated a leading !.
	Background, Negated bool
}

// ShellRedirect is one redirection and what it touches.
type ShellRedirect struct {
	// Op is the operator with its descriptor as written (">", "2>", "<<").
	Op string
	// Target is the word after it (a here-document's delimiter).
	Target string
	// DevNull: the target is exactly /dev/null. Dup: it only duplicates
	// or closes a numbered descriptor (2>&1; >&file is not one).
	DevNull, Dup bool
	// HereDoc: a here-document or here-string.
	HereDoc bool
	// Program is the first word of the command it belongs to.
	Program string
	// Literal: the target is exactly Target wherever the call runs (not
	// in the input document; the path rules use it).
	Literal bool
}

// Shell turns what a shell call runs into facts. A command it cannot
// parse, or one over its limits, is a fact (Parsed false), not an error.
type Shell interface {
	// Parse parses a command string as the shell would run it; it stops
	// when ctx ends.
	Parse(ctx context.Context, command string) ShellFacts
	// FromArgv gives the facts of an argv run without a shell.
	FromArgv(argv []string) ShellFacts
	// Canonical is the command as the shell sees it — parsed and
	// printed again, so comments (a favourite place for text addressed
	// to a model) are gone — or an error when it does not parse or is
	// over the limits. The assessor judges this text.
	Canonical(command string) (string, error)
}

// shellJoin quotes argv into the command string the assessor sees.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@%+") == "" {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
