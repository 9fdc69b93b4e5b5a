package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Part is one part of a command list: a statement joined to the next by
// ;, a newline, &&, ||, | or |&. The policy judges a list part by part,
// and a part only when it is one simple command with nothing around it.
type Part struct {
	// Text is the part as the shell sees it, printed again from the parse
	// (comments are gone).
	Text string
	// Argv and Literal are the part's words when it is a simple command.
	Argv    []string
	Literal []bool
	// Simple is true when the part is one simple command: not a
	// subshell, group, keyword, function or a list run in the background.
	Simple bool
	// First and End delimit the part's commands in Facts.Commands: its
	// own, then those of its sh -c and eval bodies and substitutions.
	First, End int
	// Assignments counts VAR=x prefixes; Substitutions the $( ),
	// backticks, <( ) and >( ) anywhere in the part; Evaluated the
	// expansions that evaluate text as a name or as arithmetic.
	Assignments   int
	Substitutions int
	Evaluated     int
	// Redirections are the part's own redirections.
	Redirections []Redirect
	// Background is a trailing &; Negated a leading !.
	Background bool
	Negated    bool
}

// Redirect is one redirection and what it touches.
type Redirect struct {
	// Op is the operator with its descriptor as written: ">", "2>", "<<".
	Op string
	// Target is the word after the operator (a here-document's
	// delimiter), its source text when it is not literal.
	Target string
	// DevNull: the target is exactly /dev/null, read or written.
	DevNull bool
	// Dup: the redirection only duplicates or closes a numbered
	// descriptor (2>&1, >&2, >&-); >&file writes a file and is not one.
	Dup bool
	// HereDoc: a here-document or here-string feeds the command.
	HereDoc bool
	// Program is the first word of the command it belongs to, if any.
	Program string
	// Literal: the target is exactly Target wherever the call runs.
	Literal bool
}

// list walks a statement of a list: a pipeline or && / || chain is split
// into its parts, anything else is one part.
func (f *Facts) list(s *syntax.Stmt) {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && !s.Negated && !s.Background && !s.Coprocess && len(s.Redirs) == 0 {
		f.Operators = append(f.Operators, b.Op.String())
		f.list(b.X)
		f.piped(b.Op, func() { f.list(b.Y) })
		return
	}
	first, subs, assigns, evals := len(f.Commands), f.Substitutions, f.Assignments, f.Evaluated
	f.stmt(s)
	syntax.Walk(s, f.countWordParts)
	p := Part{
		Text: printed(s), First: first, End: len(f.Commands),
		Substitutions: f.Substitutions - subs, Assignments: f.Assignments - assigns, Evaluated: f.Evaluated - evals,
		Background: s.Background, Negated: s.Negated,
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 && !s.Coprocess && first < len(f.Commands) {
		p.Simple = true
		p.Argv, p.Literal = f.Commands[first].Argv, f.Commands[first].Literal
	}
	for _, r := range s.Redirs {
		p.Redirections = append(p.Redirections, redirect(r, p.Argv))
	}
	f.Parts = append(f.Parts, p)
}

// redirect describes a redirection of the command whose words are argv.
func redirect(r *syntax.Redirect, argv []string) Redirect {
	out := Redirect{Op: r.Op.String(), Dup: isDescriptorDup(r)}
	numbered := true
	if r.N != nil {
		out.Op = r.N.Value + out.Op
		numbered = r.N.Value != "" && strings.Trim(r.N.Value, "0123456789") == ""
	}
	if r.Word != nil {
		target, literal := wordValue(r.Word)
		out.Target, out.Literal = target, literal
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrIn, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			out.DevNull = literal && numbered && target == "/dev/null"
		}
	}
	out.Dup = out.Dup && numbered
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		out.HereDoc = true
	}
	if len(argv) > 0 {
		out.Program = argv[0]
	}
	return out
}

// evaluates reports an expansion that evaluates text as a variable's
// name or as arithmetic (${!x}, ${x@P}, ${a[i]}, ${x:i:n}, $(( ))):
// what it runs depends on values the command does not show.
func evaluates(node syntax.Node) bool {
	switch n := node.(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.ParamExp:
		return n.Excl || n.Names != 0 || n.Index != nil || n.Slice != nil || n.NestedParam != nil ||
			(n.Exp != nil && n.Exp.Op == syntax.OtherParamOps)
	}
	return false
}

// printers are reused: a printer carries a 4 KiB buffer, and a new one
// for every part was the largest allocation of parsing a command. Print
// resets a printer's state, so one serves any number of statements, one
// at a time.
var printers = sync.Pool{New: func() any { return syntax.NewPrinter(syntax.SingleLine(true)) }}

// printed is a statement as the shell sees it, without comments.
func printed(s *syntax.Stmt) string {
	c := *s
	c.Comments = nil
	var b strings.Builder
	p := printers.Get().(*syntax.Printer)
	defer printers.Put(p)
	if err := p.Print(&b, &c); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}
