package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a command runs besides itself. The principle (docs/security.md,
// "Command rules"): for every text a call hands to a shell — a -c body, a
// here-document fed to a shell, a trap action, an eval, an env -S line —
// the analysis either reads it literally, and its commands are judged
// like any other, or it could not, and the call holds an opaque command
// (a non-literal program word) that every deny and ask rule may match.

// opaque* are the program words of the commands the analysis could not
// read; each is non-literal, so the policy matches it against every
// deny and ask rule, screens it and never grants it.
const (
	opaqueBody    = "<dynamic command string>"
	opaqueParse   = "<unparsable command string>"
	opaqueStdin   = "<commands read from standard input>"
	opaqueOptions = "<options the analysis does not know>"
	opaqueInput   = "<words read from standard input>"
)

func opaque(word string) Command {
	return Command{Argv: []string{word}, Literal: []bool{false}}
}

// programNames are the names a word may run as, as the policy's
// program_names gives them: the last path element, lower-cased
// (case-insensitive file systems run BASH as bash), with and without a
// version suffix (bash5.2 is bash).
func programNames(word string) (string, string) {
	name := strings.ToLower(word[strings.LastIndexByte(word, '/')+1:])
	return name, strings.TrimRight(name, "0123456789.")
}

// named reports whether the word runs as one of the programs.
func named(word string, set map[string]bool) bool {
	a, b := programNames(word)
	return set[a] || set[b]
}

// shells are the programs that run a command string: -c BODY, a script
// operand, or the commands on their standard input. Every one of them is
// also on the policy's data.shell.interpreters (TestShellsAreInterpreters).
var shells = setOf("sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "lksh", "pdksh", "oksh", "loksh",
	"ash", "yash", "posh", "bosh", "fish", "csh", "tcsh", "elvish", "nu", "xonsh")

// precommands run the command their later words name (sudo -u x CMD, env
// A=1 CMD, timeout 5 CMD); a shell, eval, source or trap behind one runs
// as it would first. Every one is on the policy's data.shell.wrappers.
var precommands = setOf("env", "sudo", "doas", "run0", "pkexec", "nice", "nohup", "timeout", "stdbuf", "setsid", "ssh-agent", "gdb",
	"ionice", "taskset", "command", "builtin", "exec", "time", "chroot", "unbuffer", "busybox", "runuser",
	"chpst", "nsenter", "unshare", "strace", "ltrace", "firejail", "bwrap", "systemd-run", "sg", "fakeroot",
	"caffeinate", "flock", "script", "xargs", "parallel", "watch", "find", "--")

// commandOptionPrograms take a command string as the argument of -c or
// --command (su -c CMD, runuser -c, script -c, flock FILE -c CMD).
var commandOptionPrograms = setOf("su", "runuser", "script", "flock")

// textWrappers may hand a word to a shell as text (watch and parallel
// join their words for sh -c, sudo -s runs its words through the user's
// shell, ssh runs them on the other side): a literal word of theirs with
// white space or shell syntax in it is parsed as a command too.
var textWrappers = setOf("watch", "parallel", "sudo", "doas", "run0", "ssh", "tmux", "screen", "su", "runuser",
	"script", "flock")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// input is what a statement feeds standard input and the here-documents
// it opens on any descriptor.
type input struct {
	kind  inputKind
	texts []text // here-documents and here-strings, any descriptor
	stdin *text  // the one on descriptor 0, when it is one
}

type inputKind uint8

const (
	inputInherited inputKind = iota // whatever the call's caller gives
	inputPipe                       // another command's output
	inputText                       // a here-document or here-string
	inputFile                       // a file or descriptor redirected in
)

// text is a command text the analysis found: literal when it is exactly
// that text wherever the call runs.
type text struct {
	s       string
	literal bool
	// guess: the text is only possibly a command (a word with white space
	// given to a wrapper); a parse error adds nothing instead of an
	// opaque command.
	guess bool
}

// statementInput is the input of a statement given its enclosing one's.
func statementInput(s *syntax.Stmt, outer input) input {
	in := input{kind: outer.kind, stdin: outer.stdin}
	in.texts = append(in.texts, outer.texts...)
	for _, r := range s.Redirs {
		fd0 := r.N == nil || r.N.Value == "0"
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			t := hereText(r)
			in.texts = append(in.texts, t)
			if fd0 {
				in.kind, in.stdin = inputText, &t
			}
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
			if fd0 {
				in.kind, in.stdin = inputFile, nil
			}
		}
	}
	return in
}

// hereText is the text a here-document or here-string gives: a quoted
// delimiter's body as written; an unquoted one's after bash's escapes,
// not literal when it expands anything.
func hereText(r *syntax.Redirect) text {
	if r.Op == syntax.WordHdoc {
		v, lit := wordValue(r.Word)
		return text{s: v + "\n", literal: lit}
	}
	if r.Hdoc == nil {
		return text{literal: true}
	}
	quoted := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, `\`)
		}
	}
	var b strings.Builder
	for _, part := range r.Hdoc.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			return text{s: b.String(), literal: false}
		}
		if quoted {
			b.WriteString(lit.Value)
		} else {
			b.WriteString(unescapeHeredoc(lit.Value))
		}
	}
	return text{s: b.String(), literal: true}
}

// unescapeHeredoc applies the escapes of an unquoted here-document:
// \$, \`, \\ and a backslash-newline; a backslash before anything else
// stays.
func unescapeHeredoc(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// runs gives the command texts a call hands to a shell, and the opaque
// commands for what it runs that the analysis could not read.
func (f *Facts) runs(cmd Command) ([]text, []Command) {
	var texts []text
	var out []Command
	if f.envDepth == 0 {
		f.envWords = 0
	}
	addOpaque := func(word string) {
		for _, c := range out {
			if c.Argv[0] == word {
				return
			}
		}
		out = append(out, opaque(word))
	}
	argv, literal := cmd.Argv, cmd.Literal
	// leads reports a word in command position: the first, or any word of
	// a precommand (a prefix cannot know which of its words are options).
	wrapped := literal[0] && named(argv[0], precommands)
	leads := func(i int) bool { return i == 0 || wrapped }
	var scan [][4]scanResult // computed for the first shell word
	var readOnce map[string]bool
	for i, word := range argv {
		if !literal[i] {
			continue
		}
		name, base := programNames(word)
		if !shells[name] && !shells[base] && name != "env" && base != "env" && leads(i) {
			// Each of the programs below reads the words after it; a
			// second word of the same name (sudo eval eval eval …) would
			// read them again, so only its first is read: quadratic
			// otherwise.
			if readOnce[name] {
				continue
			}
			if readOnce == nil {
				readOnce = map[string]bool{}
			}
			readOnce[name] = true
		}
		switch {
		case shells[name] || shells[base]:
			if scan == nil {
				scan = shellScans(argv, literal)
			}
			r := scan[i+1][0]
			switch r.kind {
			case scanBody:
				texts = append(texts, text{s: argv[r.at], literal: literal[r.at]})
			case scanOpaque:
				if leads(i) {
					addOpaque(opaqueOptions)
				}
			case scanStdin:
				if leads(i) {
					texts, out = f.stdinTexts(texts, out)
				}
			case scanScript:
				if leads(i) {
					texts, out = f.scriptTexts(argv[r.at], literal[r.at], texts, out)
				}
			}
		case !leads(i):
		case name == "eval":
			if !allLiteral(literal[i+1:]) {
				addOpaque(opaqueBody)
			} else if i+1 < len(argv) {
				texts = append(texts, text{s: strings.Join(argv[i+1:], " "), literal: true})
			}
		case name == "trap":
			if j := firstOperand(argv, i+1); j > 0 {
				texts = append(texts, text{s: argv[j], literal: literal[j]})
			}
		case name == "source" || name == ".":
			if j := firstOperand(argv, i+1); j > 0 {
				texts, out = f.scriptTexts(argv[j], literal[j], texts, out)
			}
		case commandOptionPrograms[name] || commandOptionPrograms[base]:
			texts = append(texts, commandOptions(argv, literal, i+1)...)
		case name == "env" || base == "env":
			texts, out = f.envRuns(argv[i:], literal[i:], texts, out)
		case name == "alias":
			// alias x='…' defines a command the call may run later.
			for j := i + 1; j < len(argv); j++ {
				if k := strings.IndexByte(argv[j], '='); k > 0 {
					texts = append(texts, text{s: argv[j][k+1:], literal: literal[j]})
				}
			}
		case name == "mapfile" || name == "readarray":
			// -C CALLBACK runs code.
			for j := i + 1; j+1 < len(argv); j++ {
				if argv[j] == "-C" {
					texts = append(texts, text{s: argv[j+1], literal: literal[j+1]})
				}
			}
		case name == "fc", name == "hash", name == "enable":
			// fc runs history; hash -p and enable name programs anew.
			if name == "fc" || i+1 < len(argv) {
				addOpaque(opaqueBody)
			}
		case name == "gdb" || base == "gdb":
			for j := i + 1; j < len(argv); j++ {
				if t, ok := strings.CutPrefix(argv[j], "shell "); ok {
					texts = append(texts, text{s: t, literal: literal[j]})
				} else if t, ok := strings.CutPrefix(argv[j], "!"); ok {
					texts = append(texts, text{s: t, literal: literal[j]})
				}
			}
		case strings.HasPrefix(name, "git-") && len(name) > 4:
			// git-push is git push.
			out = append(out, Command{
				Argv:    append([]string{"git", name[4:]}, argv[i+1:]...),
				Literal: append([]bool{true, true}, literal[i+1:]...),
			})
		case name == "git" || base == "git":
			if gitRunsConfig(argv[i+1:]) {
				addOpaque(opaqueOptions)
			}
		}
		if i == 0 && (strings.HasPrefix(word, "/proc/") || strings.HasPrefix(word, "/dev/fd/")) {
			addOpaque(opaqueBody) // /proc/self/exe is whatever runs the call
		}
	}
	if literal[0] && named(argv[0], textWrappers) {
		// watch runs its words through sh -c: a text it cannot parse is
		// still run up to the error.
		certain := named(argv[0], setOf("watch"))
		for i := 1; i < len(argv); i++ {
			if literal[i] && strings.ContainsAny(argv[i], " \t\n;&|<>()`$") {
				texts = append(texts, text{s: argv[i], literal: true, guess: !certain})
			}
		}
	}
	return texts, out
}

// maxEnvWords bounds the env words of one command whose options are read
// (env -u env -u env … would cost a scan each); past it the command is
// opaque.
const maxEnvWords = 8

// envRuns adds what an env in command position runs from a line of its
// own (env -S), and what that command runs in turn.
func (f *Facts) envRuns(argv []string, literal []bool, texts []text, out []Command) ([]text, []Command) {
	f.envWords++
	if f.envWords > maxEnvWords || f.envDepth >= maxBodyDepth {
		return texts, append(out, opaque(opaqueOptions))
	}
	c, ok := envCommand(argv, literal)
	switch {
	case !ok:
		return texts, append(out, opaque(opaqueOptions))
	case len(c.Argv) == 0:
		return texts, out
	}
	c = runTimeWords(c)
	out = append(out, c)
	f.envDepth++
	t, o := f.runs(c)
	f.envDepth--
	return append(texts, t...), append(out, o...)
}

// stdinTexts: a shell reading commands from its standard input runs the
// here-document it is fed; anything else it reads the analysis cannot.
func (f *Facts) stdinTexts(texts []text, out []Command) ([]text, []Command) {
	if f.in.kind == inputText {
		return append(texts, *f.in.stdin), out
	}
	// A pipe, a file, a descriptor (<&3), or whatever the call inherits
	// (an earlier exec <<< may have set it): not read here.
	return texts, append(out, opaque(opaqueStdin))
}

// scriptTexts: a script operand that is a descriptor or process file
// (/dev/stdin, /dev/fd/0, /proc/self/fd/3) runs the statement's
// here-documents, or what another program wrote; a script whose name
// is not literal (<(…), $F) is unknown. A script file on disk is out of
// the analysis' reach (docs/security.md, "Known limits").
func (f *Facts) scriptTexts(word string, literal bool, texts []text, out []Command) ([]text, []Command) {
	if !literal {
		return texts, append(out, opaque(opaqueBody))
	}
	if word == "-" || strings.HasPrefix(word, "/dev/") || strings.HasPrefix(word, "/proc/") {
		if len(f.in.texts) == 0 || f.in.kind == inputPipe {
			out = append(out, opaque(opaqueStdin))
		}
		return append(texts, f.in.texts...), out
	}
	return texts, out
}

// firstOperand is the index of the first word from i on that is not an
// option (after a "--"), or -1.
func firstOperand(argv []string, i int) int {
	for ; i < len(argv); i++ {
		switch w := argv[i]; {
		case w == "--":
			if i+1 < len(argv) {
				return i + 1
			}
			return -1
		case len(w) > 1 && w[0] == '-':
		default:
			return i
		}
	}
	return -1
}

// gitRunsConfig: git's words set configuration that may define what runs
// (-c alias.x=…, -c core.pager=…, --config-env, include paths): the
// analysis does not follow it.
func gitRunsConfig(words []string) bool {
	for j, w := range words {
		switch {
		case w == "-c" && j+1 < len(words):
			return true
		case strings.HasPrefix(w, "--config-env"), strings.HasPrefix(w, "-c") && len(w) > 2:
			return true
		case !strings.HasPrefix(w, "-"):
			return false
		}
	}
	return false
}

// commandOptions are the command strings given as -c CMD, -cCMD,
// --command CMD or --command=CMD.
func commandOptions(argv []string, literal []bool, from int) []text {
	var out []text
	for j := from; j < len(argv); j++ {
		w := argv[j]
		switch {
		case !literal[j]:
		case (w == "-c" || w == "--command") && j+1 < len(argv):
			out = append(out, text{s: argv[j+1], literal: literal[j+1]})
		case strings.HasPrefix(w, "--command="):
			out = append(out, text{s: strings.TrimPrefix(w, "--command="), literal: true})
		case strings.HasPrefix(w, "-c") && len(w) > 2:
			out = append(out, text{s: w[2:], literal: true})
		}
	}
	return out
}

// The outcome of a shell's option scan from some word on.
type scanKind uint8

const (
	scanNone   scanKind = iota // -c without its body: the shell fails
	scanBody                   // -c: the body is the word at
	scanScript                 // a script operand at
	scanStdin                  // commands from standard input (-s, or no operand)
	scanOpaque                 // an option the scan does not know, or a word that is not literal
)

type scanResult struct {
	kind scanKind
	at   int
}

// shellScans gives, for every position j, what a shell's option scan
// starting at argv[j] finds, following bash's grammar: clusters of
// single-letter options after - or + (-lc, -ec, +x), -o/+o/-O/+O NAME
// (also inside a cluster), --rcfile/--init-file FILE, the long options
// without argument, and -- or - ending the options; with -c the first
// operand is the body, with -s or without an operand the commands come
// from standard input, else the operand is a script. A word it does not
// know makes the rest opaque. One pass from the end, per state (-c seen,
// -s seen), so a shell word anywhere costs a lookup, not a scan.
func shellScans(argv []string, literal []bool) [][4]scanResult {
	n := len(argv)
	res := make([][4]scanResult, n+2)
	for st := 0; st < 4; st++ {
		res[n][st] = endOfWords(st)
		res[n+1][st] = endOfWords(st)
	}
	for j := n - 1; j >= 0; j-- {
		for st := 0; st < 4; st++ {
			res[j][st] = scanFrom(argv, literal, res, j, st)
		}
	}
	return res
}

const (
	stC = 1 // -c seen
	stS = 2 // -s seen
)

func endOfWords(st int) scanResult {
	if st&stC != 0 {
		return scanResult{kind: scanNone}
	}
	return scanResult{kind: scanStdin}
}

func operandAt(st, j int) scanResult {
	switch {
	case st&stC != 0:
		return scanResult{kind: scanBody, at: j}
	case st&stS != 0:
		return scanResult{kind: scanStdin}
	}
	return scanResult{kind: scanScript, at: j}
}

// shellLongOptions are bash's long options: true when one takes an argument.
var shellLongOptions = map[string]bool{
	"--rcfile": true, "--init-file": true,
	"--login": false, "--noediting": false, "--noprofile": false, "--norc": false, "--posix": false,
	"--restricted": false, "--verbose": false, "--version": false, "--help": false, "--debugger": false,
	"--dump-po-strings": false, "--dump-strings": false, "--wordexp": false, "--protected": false, "--pretty-print": false,
}

// isLongOption: a word that is one of bash's long options.
func isLongOption(w string) bool {
	_, ok := shellLongOptions[w]
	return ok
}

// shellLetters are bash's single-letter options (set's and the
// invocation's).
const shellLetters = "abcefhiklmnprstuvxBCDEHPT"

func scanFrom(argv []string, literal []bool, res [][4]scanResult, j, st int) scanResult {
	w := argv[j]
	if !literal[j] {
		if st&stC != 0 {
			return scanResult{kind: scanBody, at: j} // a body that is not literal
		}
		return scanResult{kind: scanOpaque}
	}
	switch {
	case w == "--" || w == "-":
		if j+1 >= len(argv) {
			return endOfWords(st)
		}
		if !literal[j+1] {
			return scanResult{kind: scanOpaque}
		}
		return operandAt(st, j+1)
	case strings.HasPrefix(w, "--") || isLongOption("-"+w):
		if !strings.HasPrefix(w, "--") {
			w = "-" + w // bash takes its long options after one dash too (-posix, -rcfile F)
		}
		takes, known := shellLongOptions[w]
		if !known {
			return scanResult{kind: scanOpaque}
		}
		if takes {
			return res[min(j+2, len(argv))][st]
		}
		return res[j+1][st]
	case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
		args := 0
		for k := 1; k < len(w); k++ {
			c := w[k]
			switch {
			case c == 'o' || c == 'O':
				args++
			case strings.IndexByte(shellLetters, c) < 0:
				return scanResult{kind: scanOpaque}
			case c == 'c': // bash and dash take +c as -c
				st |= stC
			case c == 's':
				st |= stS
			}
		}
		next := j + 1 + args
		if next > len(argv) {
			return scanResult{kind: scanNone}
		}
		for k := j + 1; k < next; k++ {
			if !literal[k] {
				return scanResult{kind: scanOpaque}
			}
		}
		return res[next][st]
	}
	return operandAt(st, j)
}

// runTimeWords marks the words a wrapper fills in when it runs: xargs and
// parallel append words read from standard input, and with -I R (-i,
// --replace) replace R in any word; find -exec replaces {}. Such a word,
// and the input appended, is not literal, so a rule whose prefix it
// could complete may match.
func runTimeWords(cmd Command) Command {
	if len(cmd.Argv) == 0 || !cmd.Literal[0] {
		return cmd
	}
	name, base := programNames(cmd.Argv[0])
	var replaced []string
	appends := false
	switch {
	case name == "xargs" || base == "xargs" || name == "parallel" || base == "parallel":
		appends = true
		replaced = append(replaced, "{}")
		for i := 1; i < len(cmd.Argv); i++ {
			w := cmd.Argv[i]
			switch {
			case (w == "-I" || w == "--replace") && i+1 < len(cmd.Argv):
				replaced = append(replaced, cmd.Argv[i+1])
			case strings.HasPrefix(w, "-I") && len(w) > 2:
				replaced = append(replaced, w[2:])
			case strings.HasPrefix(w, "--replace="):
				replaced = append(replaced, strings.TrimPrefix(w, "--replace="))
			}
		}
	case name == "find" || base == "find":
		replaced = []string{"{}"}
	default:
		return cmd
	}
	out := Command{Argv: append([]string(nil), cmd.Argv...), Literal: append([]bool(nil), cmd.Literal...)}
	if cmd.Glob != nil {
		out.Glob = append([]string(nil), cmd.Glob...)
	}
	for i := 1; i < len(out.Argv); i++ {
		for _, r := range replaced {
			if r != "" && strings.Contains(out.Argv[i], r) {
				out.Literal[i] = false
				if out.Glob != nil {
					out.Glob[i] = ""
				}
			}
		}
	}
	if appends {
		out.Argv = append(out.Argv, opaqueInput)
		out.Literal = append(out.Literal, false)
		if out.Glob != nil {
			out.Glob = append(out.Glob, "")
		}
	}
	return out
}

// evaluators are the builtins that may evaluate a string as arithmetic
// or as a name with a subscript ('a[$(cmd)]'), which runs the command
// substitution inside it.
var evaluators = setOf("test", "[", "declare", "typeset", "local", "export", "readonly", "read", "unset",
	"mapfile", "readarray", "let", "wait", "shift", "return", "exit", "ulimit")

// codeVariables run their value as code (prompts, start-up files,
// exported functions) when a shell expands or starts them.
var codeVariables = setOf("PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "SHELLOPTS",
	"BASHOPTS", "BASH_LOADABLES_PATH", "EXECIGNORE")

// globOptions change which names a glob matches; dirOptions where a
// relative word resolves.
var (
	globOptions = setOf("dotglob", "nocaseglob", "extglob", "globstar", "nocasematch", "globskipdots")
	dirOptions  = setOf("cdable_vars", "autocd")
)

// callLevel looks at the whole text for what changes how its words are
// read: quoted code a builtin may evaluate, variables whose values run as
// code, glob options, and what makes a relative word's directory
// unknown. What it cannot follow becomes an opaque command of the last
// part.
func (f *Facts) callLevel(file *syntax.File) {
	quotedCode, evaluates := false, f.Evaluated > 0
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Lit:
			quotedCode = quotedCode || strings.Contains(n.Value, "$(") || strings.Contains(n.Value, "`") || strings.Contains(n.Value, "$\\(")
		case *syntax.SglQuoted:
			quotedCode = quotedCode || strings.Contains(n.Value, "$(") || strings.Contains(n.Value, "`")
		case *syntax.Assign:
			evaluates = evaluates || n.Index != nil // a[x]=1 evaluates x
		case *syntax.CStyleLoop:
			evaluates = true
		}
		return true
	})
	for _, k := range f.Compound {
		evaluates = evaluates || k == "arithmetic" || k == "let" || k == "test" || k == "declare"
	}
	code := false
	for _, name := range f.Assigned {
		code = code || codeVariables[name] || strings.HasPrefix(name, "BASH_FUNC_")
		f.GlobsAnyName = f.GlobsAnyName || name == "GLOBIGNORE"
		f.WordsUnknown = f.WordsUnknown || name == "CDPATH"
	}
	for _, c := range f.Commands {
		if len(c.Argv) == 0 || !c.Literal[0] {
			continue
		}
		name, base := programNames(c.Argv[0])
		evaluates = evaluates || evaluators[name] || (name == "printf" && slices.Contains(c.Argv, "-v"))
		for i, w := range c.Argv[1:] {
			if !c.Literal[i+1] {
				continue
			}
			if k := strings.IndexByte(w, '='); k > 0 && (name == "env" || evaluators[name]) {
				v := w[:k]
				code = code || codeVariables[v] || strings.HasPrefix(v, "BASH_FUNC_")
				f.GlobsAnyName = f.GlobsAnyName || v == "GLOBIGNORE"
				f.WordsUnknown = f.WordsUnknown || v == "CDPATH"
			}
			if name == "shopt" || name == "set" {
				f.GlobsAnyName = f.GlobsAnyName || globOptions[w]
				f.WordsUnknown = f.WordsUnknown || dirOptions[w]
			}
		}
		switch {
		case name == "ln" || name == "link" || name == "mount" || base == "ln" || name == "bindfs":
			f.WordsUnknown = true // a name the call creates may lead anywhere
		}
	}
	if (quotedCode && evaluates) || code {
		f.Commands = append(f.Commands, opaque(opaqueBody))
		if len(f.Parts) > 0 {
			f.Parts[len(f.Parts)-1].End = len(f.Commands)
		}
	}
}
