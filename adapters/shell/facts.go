package shell

import (
	"context"
	"strings"

	"github.com/toolperm/pdp/pdp"
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
	// Glob[i], for a word that is not literal only because of its glob
	// characters, is the word as a path.Match pattern; nil when there is
	// none.
	Glob []string
}

// Facts are what the policy needs to know of a command string.
type Facts struct {
	Parsed bool
	// Error is the parse error, or the limit the command is over, when
	// Parsed is false.
	Error string
	// Limit names the limit (LimitBytes, LimitDepth, …) the command is
	// over, when that is why it was not parsed.
	Limit string
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
	// Parts are the statements of the command's list (see Part).
	Parts []Part
	// Redirects are every redirection anywhere, substitutions included.
	Redirects []Redirect
	// Evaluated counts expansions that evaluate text as a name or as
	// arithmetic (${!x}, ${x@P}, $(( )), …) anywhere.
	Evaluated int
	// Assigned names the variables assigned anywhere: VAR=x prefixes,
	// bare assignments and declare/export/local arguments.
	Assigned []string
	// GlobsAnyName: the call changes what globs match (shopt -s dotglob,
	// nocaseglob, GLOBIGNORE=…). WordsUnknown: it makes where a word
	// leads unknown (CDPATH, cdable_vars, ln, mount).
	GlobsAnyName, WordsUnknown bool

	in input // what the statement being walked reads
	// envWords and envDepth count the env words read in the command
	// being walked and how deep in env -S lines it is.
	envWords, envDepth int
	depth              int     // how deep in sh -c / eval bodies this text is
	nest               int     // nesting levels of the text this one is a body of
	budget             *budget // the work left for the whole command
	failed             *pdp.Error
}

// maxBodyDepth bounds how deep sh -c and eval bodies are parsed.
const maxBodyDepth = 4

// Parse parses a command string as bash within DefaultLimits. A parse
// error or a command over a limit is a fact, not an error: the policy
// treats a command that is not parsed as not grantable.
func Parse(ctx context.Context, command string) Facts {
	return DefaultLimits.Parse(ctx, command)
}

// Parse parses a command string as bash within the limits; parsing stops
// when ctx ends.
func (l Limits) Parse(ctx context.Context, command string) Facts {
	f := parse(newBudget(ctx, l.withDefaults()), command, 0, 0)
	if f.failed != nil {
		return Facts{Error: f.failed.Message, Limit: f.failed.Code}
	}
	if f.Parsed && dialectsMayDiffer(command) {
		f.asShReadsIt(ctx, l, command)
	}
	return f
}

// dialectsMayDiffer reports whether bash and a POSIX sh (dash, which runs
// `sh -c` on Debian) may read the text as different commands: "&>" is a
// redirection in bash but a background "&" in sh, "$'…'" and "$"…"" are
// quotes in bash but a "$" and a plain quote in sh. (bash's "|&" and "<<<"
// are syntax errors in sh, which then runs nothing.)
func dialectsMayDiffer(command string) bool {
	for _, s := range []string{"&>", "$'", "$\""} {
		if strings.Contains(command, s) {
			return true
		}
	}
	return false
}

// asShReadsIt adds the commands a POSIX sh would run to the facts, so a
// deny or ask rule meets them too, and marks every part as evaluated: a
// text whose meaning depends on the shell that runs it is never allowed
// by a rule or grant, and SMART screens it.
func (f *Facts) asShReadsIt(ctx context.Context, l Limits, command string) {
	for i := range f.Parts {
		f.Parts[i].Evaluated++
	}
	f.Evaluated++
	// sh's reading, written as bash would read it: "&>" is a background
	// "&" then a redirection, "$'" a plain "$" then a quote. A rewrite
	// inside quotes only adds commands to check, never takes one away.
	asSh := strings.NewReplacer("&>", "& >", "$'", "\\$'", "$\"", "\\$\"").Replace(command)
	g := parse(newBudget(ctx, l.withDefaults()), asSh, 0, 0)
	if !g.Parsed {
		return
	}
	// sh's reading joins as parts of their own, after bash's.
	offset := len(f.Commands)
	f.Commands = append(f.Commands, g.Commands...)
	for _, p := range g.Parts {
		p.First, p.End = p.First+offset, p.End+offset
		p.Evaluated++
		f.Parts = append(f.Parts, p)
	}
}

// parseTree checks the text against the budget, parses it and measures
// the tree, so that nothing over a limit reaches a walk that recurses.
func (b *budget) parseTree(command string, nest int) (*syntax.File, *pdp.Error, error) {
	if err := b.cancelled(); err != nil {
		return nil, err, nil
	}
	if err := b.spendBytes(len(command)); err != nil {
		return nil, err, nil
	}
	if err := checkControl(command); err != nil {
		return nil, err, nil
	}
	if err := checkNesting(command, 2*(b.lim.MaxDepth-nest)); err != nil {
		return nil, err, nil
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(ctxReader{b.ctx, strings.NewReader(command)}, "")
	if err != nil {
		if lim := b.cancelled(); lim != nil {
			return nil, lim, nil
		}
		return nil, nil, err
	}
	if err := b.measure(file, nest); err != nil {
		return nil, err, nil
	}
	return file, nil, nil
}

func parse(b *budget, command string, depth, nest int) Facts {
	file, lim, err := b.parseTree(command, nest)
	if lim != nil {
		return Facts{Error: lim.Message, Limit: lim.Code, failed: lim}
	}
	if err != nil {
		return Facts{Error: err.Error()}
	}
	f := Facts{Parsed: true, depth: depth, nest: nest, budget: b}
	for i, stmt := range file.Stmts {
		if i > 0 {
			f.Operators = append(f.Operators, ";")
		}
		f.list(stmt)
	}
	if f.failed == nil {
		f.callLevel(file)
	}
	return f
}

// ctxReader ends the parse when the request's context ends.
type ctxReader struct {
	ctx context.Context
	r   *strings.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// FromArgv gives the facts of an argv that runs without a shell: one
// command whose words are all literal.
func FromArgv(argv []string) Facts {
	literal := make([]bool, len(argv))
	for i := range literal {
		literal[i] = true
	}
	return Facts{
		Parsed: true, Commands: []Command{{Argv: argv, Literal: literal}},
		Parts: []Part{{Text: strings.Join(argv, " "), Argv: argv, Literal: literal, Simple: true, End: 1}},
	}
}

func (f *Facts) stmt(s *syntax.Stmt) {
	if s.Negated {
		f.Operators = append(f.Operators, "!")
	}
	if s.Background {
		f.Operators = append(f.Operators, "&")
	}
	if s.Coprocess {
		f.compound("coproc")
	}
	var argv []string
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
		argv = []string{""}
		argv[0], _ = wordValue(call.Args[0])
	}
	for _, r := range s.Redirs {
		if !isDescriptorDup(r) {
			f.Redirections++
		}
		f.Redirects = append(f.Redirects, redirect(r, argv))
	}
	if s.Cmd != nil {
		outer := f.in
		f.in = statementInput(s, outer)
		f.command(s.Cmd)
		f.in = outer
	}
}

// piped walks the right side of a pipe: its standard input is another
// command's output.
func (f *Facts) piped(op syntax.BinCmdOperator, walk func()) {
	if op != syntax.Pipe && op != syntax.PipeAll {
		walk()
		return
	}
	outer := f.in
	f.in = input{kind: inputPipe, texts: outer.texts}
	walk()
	f.in = outer
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
		f.assigned(c.Assigns)
		if len(c.Args) > 0 {
			cmd := runTimeWords(callCommand(c.Args))
			f.Commands = append(f.Commands, cmd)
			f.Commands = append(f.Commands, f.bodyCommands(cmd)...)
		}
	case *syntax.BinaryCmd:
		f.Operators = append(f.Operators, c.Op.String())
		f.stmt(c.X)
		f.piped(c.Op, func() { f.stmt(c.Y) })
	case *syntax.Subshell:
		f.compound("subshell", c.Stmts)
	case *syntax.Block:
		f.compound("group", c.Stmts)
	case *syntax.IfClause:
		f.compound("if")
		for clause := c; clause != nil; clause = clause.Else {
			f.stmts(clause.Cond)
			f.stmts(clause.Then)
		}
	case *syntax.WhileClause:
		f.compound("while", c.Cond, c.Do)
	case *syntax.ForClause:
		f.compound("for", c.Do)
	case *syntax.CaseClause:
		f.compound("case")
		for _, item := range c.Items {
			f.stmts(item.Stmts)
		}
	case *syntax.FuncDecl:
		f.compound("function", []*syntax.Stmt{c.Body})
	case *syntax.TimeClause:
		f.compound("time")
		if c.Stmt != nil {
			f.stmt(c.Stmt)
		}
	case *syntax.CoprocClause:
		f.compound("coproc", []*syntax.Stmt{c.Stmt})
		if c.Name != nil {
			// coproc NAME CMD, and coproc WORD <redirection>, which bash
			// runs as a command WORD: not read here.
			f.Commands = append(f.Commands, opaque(opaqueBody))
		}
	case *syntax.ArithmCmd:
		f.compound("arithmetic")
	case *syntax.TestClause:
		f.compound("test")
	case *syntax.DeclClause:
		f.compound("declare")
		f.assigned(c.Args)
	case *syntax.LetClause:
		f.compound("let")
	default:
		// A construct this adapter does not know is never plain.
		f.compound("unknown")
	}
}

// compound records a compound command or keyword of this kind and walks
// each of its bodies, a list of statements each.
func (f *Facts) compound(kind string, bodies ...[]*syntax.Stmt) {
	f.Compound = append(f.Compound, kind)
	for _, body := range bodies {
		f.stmts(body)
	}
}

// assigned records the names of the variables that assignments set.
func (f *Facts) assigned(list []*syntax.Assign) {
	for _, a := range list {
		if a.Name != nil {
			f.Assigned = append(f.Assigned, a.Name.Value)
		}
	}
}

// bodyCommands returns the commands of the command texts a call hands
// to a shell (runs): `sh -c BODY` (also after wrappers: `sudo bash -lc
// BODY`), eval, trap actions, here-documents fed to a shell or sourced,
// env -S lines, and an opaque command for each that is not literal. Each
// text is parsed once however many words lead to it, against the budget
// of the whole command.
func (f *Facts) bodyCommands(cmd Command) []Command {
	if f.failed != nil {
		return nil
	}
	texts, out := f.runs(cmd)
	var bodies []text
	seen := make(map[string]bool)
	for _, t := range texts {
		if !t.literal {
			if !t.guess {
				out = append(out, opaque(opaqueBody))
			}
			continue
		}
		if !seen[t.s] {
			seen[t.s] = true
			bodies = append(bodies, t)
		}
	}
	if f.depth >= maxBodyDepth {
		if len(bodies) > 0 {
			out = append(out, opaque(opaqueBody))
		}
		return out
	}
	for _, body := range bodies {
		if err := f.budget.spendBody(); err != nil {
			f.failed = err
			return nil
		}
		inner := parse(f.budget, body.s, f.depth+1, f.nest+1)
		if inner.failed != nil {
			f.failed = inner.failed
			return nil
		}
		if !inner.Parsed {
			if !body.guess {
				out = append(out, opaque(opaqueParse))
			}
			continue
		}
		out = append(out, inner.Commands...)
		// What a body redirects, the shell it is handed to writes or
		// reads (sh -c 'echo x > /dev/sda').
		f.Redirects = append(f.Redirects, inner.Redirects...)
		f.GlobsAnyName = f.GlobsAnyName || inner.GlobsAnyName
		f.WordsUnknown = f.WordsUnknown || inner.WordsUnknown
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

// countWordParts counts substitutions and evaluating expansions anywhere
// in the tree, and collects the simple commands nested inside them.
func (f *Facts) countWordParts(node syntax.Node) bool {
	if evaluates(node) {
		f.Evaluated++
	}
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
	inner := Facts{depth: f.depth, nest: f.nest, budget: f.budget}
	inner.stmts(list)
	f.Commands = append(f.Commands, inner.Commands...)
	f.Redirects = append(f.Redirects, inner.Redirects...)
	f.Assigned = append(f.Assigned, inner.Assigned...)
	if inner.failed != nil && f.failed == nil {
		f.failed = inner.failed
	}
}

func callCommand(words []*syntax.Word) Command {
	cmd := Command{Argv: make([]string, len(words)), Literal: make([]bool, len(words))}
	for i, w := range words {
		cmd.Argv[i], cmd.Literal[i] = wordValue(w)
		if !cmd.Literal[i] {
			if pattern, ok := globPattern(w); ok {
				if cmd.Glob == nil {
					cmd.Glob = make([]string, len(words))
				}
				cmd.Glob[i] = pattern
			}
		}
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
// are gone. It fails when the command does not parse or is over
// DefaultLimits.
func Canonical(command string) (string, error) {
	file, lim, err := newBudget(context.Background(), DefaultLimits).parseTree(command, 0)
	if lim != nil {
		return "", lim
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.Minify(false)).Print(&b, file); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}
