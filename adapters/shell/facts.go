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

	depth int // how deep in sh -c / eval bodies this text is
}

// maxBodyDepth bounds how deep sh -c and eval bodies are parsed.
const maxBodyDepth = 4

// Parse parses a command string as bash. A parse error is a fact, not an
// error: the policy treats an unparsable command as not grantable.
func Parse(command string) Facts {
	return parse(command, 0)
}

func parse(command string, depth int) Facts {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return Facts{Error: err.Error()}
	}
	f := Facts{Parsed: true, depth: depth}
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
			cmd := callCommand(c.Args)
			f.Commands = append(f.Commands, cmd)
			f.Commands = append(f.Commands, f.bodyCommands(cmd)...)
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

// shells are the programs whose -c argument is itself a command string.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// bodyCommands returns the commands of the command strings a call runs
// itself: `sh -c BODY` (also after wrappers: `sudo bash -lc BODY`) and
// `eval ARGS`. A body that is not literal is one unknown command, which
// is never literal.
func (f *Facts) bodyCommands(cmd Command) []Command {
	var bodies []string
	var unknown bool
	for i, word := range cmd.Argv {
		if !cmd.Literal[i] {
			continue
		}
		switch name := word[strings.LastIndexByte(word, '/')+1:]; {
		case name == "eval" && i == 0:
			if !allLiteral(cmd.Literal[1:]) {
				unknown = true
			} else {
				bodies = append(bodies, strings.Join(cmd.Argv[1:], " "))
			}
		case shells[name]:
			for j := i + 1; j < len(cmd.Argv); j++ {
				opt := cmd.Argv[j]
				if !strings.HasPrefix(opt, "-") || opt == "-" || opt == "--" {
					break
				}
				if strings.HasPrefix(opt, "--") || !strings.Contains(opt, "c") || j+1 >= len(cmd.Argv) {
					continue
				}
				if cmd.Literal[j+1] {
					bodies = append(bodies, cmd.Argv[j+1])
				} else {
					unknown = true
				}
				break
			}
		}
	}
	var out []Command
	if unknown || (len(bodies) > 0 && f.depth >= maxBodyDepth) {
		out = append(out, Command{Argv: []string{"<dynamic command string>"}, Literal: []bool{false}})
	}
	if f.depth >= maxBodyDepth {
		return out
	}
	for _, body := range bodies {
		inner := parse(body, f.depth+1)
		if !inner.Parsed {
			out = append(out, Command{Argv: []string{"<unparsable command string>"}, Literal: []bool{false}})
			continue
		}
		out = append(out, inner.Commands...)
	}
	return out
}

func allLiteral(list []bool) bool {
	for _, l := range list {
		if !l {
			return false
		}
	}
	return true
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
	inner := Facts{depth: f.depth}
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

// Canonical returns the command as the shell sees it: parsed and printed
// again, so comments (a favourite place for text addressed to a model)
// are gone. It fails when the command does not parse.
func Canonical(command string) (string, error) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.Minify(false)).Print(&b, file); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
