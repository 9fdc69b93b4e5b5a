package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Command is one simple command found anywhere in the parsed text.
type Command struct {
	// Argv holds each word after quote removal; a word with an expansion
	// keeps its source text and is marked non-literal.
	Argv []string
	// Literal[i] is true when Argv[i] is a plain word: no parameter,
	// command, arithmetic, glob, brace or tilde expansion.
	Literal []bool
}

// Facts are what the policy needs to know of a command string.
type Facts struct {
	Parsed bool
	// Error is the parse error, when Parsed is false.
	Error string
	// Commands are all simple commands, including those inside
	// substitutions, subshells and compound commands.
	Commands []Command
	// Operators are the control operators that join or wrap commands:
	// ";" (also a newline), "&&", "||", "|", "|&", "&", "!".
	Operators []string
	// Compound names each compound command or keyword: "subshell",
	// "group", "if", "for", "while", "case", "function", "time",
	// "coproc", "arithmetic", "test", "declare", "let".
	Compound []string
	// Redirections counts redirections other than duplicating a numbered
	// descriptor (2>&1): files, here-documents, here-strings.
	Redirections int
	// Substitutions counts $( ), backticks, <( ) and >( ).
	Substitutions int
	// Assignments counts VAR=x prefixes and bare assignments.
	Assignments int
}

// Parse parses a command string as bash. A parse error is a fact, not an
// error: the policy treats an unparsable command as not grantable.
func Parse(command string) Facts {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Facts{Error: err.Error()}
	}
	f := Facts{Parsed: true}
	for i, stmt := range file.Stmts {
		if i > 0 {
			f.Operators = append(f.Operators, ";")
		}
		f.stmt(stmt)
	}
	syntax.Walk(file, f.countWordParts)
	return f
}

// FromArgv gives the facts of an argv that runs without a shell: one
// command whose words are all literal.
func FromArgv(argv []string) Facts {
	literal := make([]bool, len(argv))
	for i := range literal {
		literal[i] = true
	}
	return Facts{Parsed: true, Commands: []Command{{Argv: argv, Literal: literal}}}
}

func (f *Facts) stmt(s *syntax.Stmt) {
	if s.Negated {
		f.Operators = append(f.Operators, "!")
	}
	if s.Background {
		f.Operators = append(f.Operators, "&")
	}
	if s.Coprocess {
		f.Compound = append(f.Compound, "coproc")
	}
	for _, r := range s.Redirs {
		if !isDescriptorDup(r) {
			f.Redirections++
		}
	}
	if s.Cmd != nil {
		f.command(s.Cmd)
	}
}

func (f *Facts) stmts(list []*syntax.Stmt) {
	for i, s := range list {
		if i > 0 {
			f.Operators = append(f.Operators, ";")
		}
		f.stmt(s)
	}
}

func (f *Facts) command(c syntax.Command) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		f.Assignments += len(c.Assigns)
		if len(c.Args) > 0 {
			f.Commands = append(f.Commands, callCommand(c.Args))
		}
	case *syntax.BinaryCmd:
		f.Operators = append(f.Operators, c.Op.String())
		f.stmt(c.X)
		f.stmt(c.Y)
	case *syntax.Subshell:
		f.Compound = append(f.Compound, "subshell")
		f.stmts(c.Stmts)
	case *syntax.Block:
		f.Compound = append(f.Compound, "group")
		f.stmts(c.Stmts)
	case *syntax.IfClause:
		f.Compound = append(f.Compound, "if")
		for clause := c; clause != nil; clause = clause.Else {
			f.stmts(clause.Cond)
			f.stmts(clause.Then)
		}
	case *syntax.WhileClause:
		f.Compound = append(f.Compound, "while")
		f.stmts(c.Cond)
		f.stmts(c.Do)
	case *syntax.ForClause:
		f.Compound = append(f.Compound, "for")
		f.stmts(c.Do)
	case *syntax.CaseClause:
		f.Compound = append(f.Compound, "case")
		for _, item := range c.Items {
			f.stmts(item.Stmts)
		}
	case *syntax.FuncDecl:
		f.Compound = append(f.Compound, "function")
		f.stmt(c.Body)
	case *syntax.TimeClause:
		f.Compound = append(f.Compound, "time")
		if c.Stmt != nil {
			f.stmt(c.Stmt)
		}
	case *syntax.CoprocClause:
		f.Compound = append(f.Compound, "coproc")
		f.stmt(c.Stmt)
	case *syntax.ArithmCmd:
		f.Compound = append(f.Compound, "arithmetic")
	case *syntax.TestClause:
		f.Compound = append(f.Compound, "test")
	case *syntax.DeclClause:
		f.Compound = append(f.Compound, "declare")
	case *syntax.LetClause:
		f.Compound = append(f.Compound, "let")
	default:
		// A construct this adapter does not know is never plain.
		f.Compound = append(f.Compound, "unknown")
	}
}

// countWordParts counts substitutions anywhere in the tree, and collects
// the simple commands nested inside them.
func (f *Facts) countWordParts(node syntax.Node) bool {
	switch n := node.(type) {
	case *syntax.CmdSubst:
		f.Substitutions++
		f.nested(n.Stmts)
	case *syntax.ProcSubst:
		f.Substitutions++
		f.nested(n.Stmts)
	}
	return true
}

// nested records the commands of a substitution without counting its
// operators twice: the substitution alone already makes the call
// ungrantable.
func (f *Facts) nested(list []*syntax.Stmt) {
	inner := Facts{}
	inner.stmts(list)
	f.Commands = append(f.Commands, inner.Commands...)
}

func callCommand(words []*syntax.Word) Command {
	cmd := Command{Argv: make([]string, len(words)), Literal: make([]bool, len(words))}
	for i, w := range words {
		cmd.Argv[i], cmd.Literal[i] = wordValue(w)
	}
	return cmd
}

// isDescriptorDup reports a redirection such as 2>&1 or >&- that only
// duplicates or closes a descriptor and touches no file.
func isDescriptorDup(r *syntax.Redirect) bool {
	if r.Op != syntax.DplOut && r.Op != syntax.DplIn {
		return false
	}
	v, ok := wordValue(r.Word)
	if !ok || v == "" {
		return false
	}
	if v == "-" {
		return true
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
