package shellbypass_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/store/sqlite"
)

// choices reads the fuzzer's bytes as a sequence of choices; past the
// end every choice is the first one.
type choices struct {
	b []byte
	i int
}

func (c *choices) pick(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	v := int(c.b[c.i]) % n
	c.i++
	return v
}

// Quoting styles for one word of shell text; each gives bash the word
// back whole (bare only when nothing in it is special).
var quoters = []func(string) string{
	bare,
	singleQuoted,
	doubleQuoted,
	ansiQuoted,
	backslashed,
	halves,
}

func bare(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,+@%", r)) {
			return singleQuoted(s)
		}
	}
	return s
}

func singleQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func doubleQuoted(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

func ansiQuoted(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\t", `\t`)
	return "$'" + r.Replace(s) + "'"
}

// backslashed escapes every character (a newline, which a backslash
// would remove, is quoted instead).
func backslashed(s string) string {
	if s == "" || strings.Contains(s, "\n") {
		return singleQuoted(s)
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteByte('\\')
		b.WriteRune(r)
	}
	return b.String()
}

// halves quotes the two halves of a word differently: g'it', "pu"sh.
func halves(s string) string {
	if len(s) < 2 {
		return singleQuoted(s)
	}
	m := len(s) / 2
	return bare(s[:m]) + doubleQuoted(s[m:])
}

// quoteText quotes a whole shell text as one word for a body or a here
// string: single, double or ANSI-C quotes.
func quoteText(c *choices, s string) string {
	switch c.pick(3) {
	case 1:
		return doubleQuoted(s)
	case 2:
		return ansiQuoted(s)
	}
	return singleQuoted(s)
}

// argvWrappers wrap the command's words in a command that runs them.
var argvWrappers = []func(c *choices, words []string) []string{
	func(_ *choices, w []string) []string { return append([]string{"nice"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"timeout", "5"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"nohup"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"env"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"env", "-u", "X", "--"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"command"}, w...) },
	func(_ *choices, w []string) []string { return append([]string{"xargs"}, w...) }, // stdin is empty: runs once
	func(_ *choices, w []string) []string {
		return append(append([]string{"find", ".", "-maxdepth", "0", "-exec"}, w...), ";")
	},
	// env's split string: -S"…", -S "…", --split-string=…, with a
	// space, a tab or \_ between the words.
	func(c *choices, w []string) []string {
		line := strings.Join(w, []string{" ", "\t", `\_`}[c.pick(3)])
		switch c.pick(3) {
		case 1:
			return []string{"env", "-S", line}
		case 2:
			return []string{"env", "--split-string=" + line}
		}
		return []string{"env", "-S" + line}
	},
}

// renders turn the words into shell text that runs them.
var renders = []func(c *choices, words []string) string{
	// each word quoted its own way
	func(c *choices, w []string) string { return quoteWords(c, w) },
	// an unquoted expansion of one variable
	func(c *choices, w []string) string { return "c=" + quoteText(c, strings.Join(w, " ")) + "; $c" },
	// the positional parameters
	func(c *choices, w []string) string { return "set -- " + quoteWords(c, w) + `; "$@"` },
	// an array
	func(c *choices, w []string) string { return "a=(" + quoteWords(c, w) + `); "${a[@]}"` },
	// brace expansion
	func(c *choices, w []string) string {
		if len(w) < 2 {
			return quoteWords(c, w)
		}
		q := make([]string, len(w))
		for i, x := range w {
			q[i] = quoters[c.pick(len(quoters))](x)
		}
		return "{" + strings.Join(q, ",") + "}"
	},
	// field splitting of $IFS
	func(c *choices, w []string) string {
		q := make([]string, len(w))
		for i, x := range w {
			q[i] = quoters[c.pick(len(quoters))](x)
		}
		return strings.Join(q, "${IFS}")
	},
	// the program from a variable or a substitution
	func(c *choices, w []string) string {
		form, program := c.pick(4), quoteText(c, w[0])
		rest := ""
		if len(w) > 1 {
			rest = " " + quoteWords(c, w[1:])
		}
		switch form {
		case 1:
			return "g=" + program + `; "${g}"` + rest
		case 2:
			return "$(printf %s " + program + ")" + rest
		case 3:
			return "`echo " + program + "`" + rest
		}
		return "g=" + program + "; $g" + rest
	},
	// xargs reads the arguments from stdin
	func(c *choices, w []string) string {
		if len(w) < 2 {
			return quoteWords(c, w)
		}
		rest := strings.Join(w[1:], " ")
		switch c.pick(3) {
		case 1:
			return "echo " + quoteText(c, rest) + " | xargs " + quoteWords(c, w[:1])
		case 2:
			return "printf '%s\\n' " + quoteText(c, rest) + " | xargs " + quoteWords(c, w[:1])
		}
		return "xargs " + quoteWords(c, w[:1]) + " <<< " + quoteText(c, rest)
	},
}

func quoteWords(c *choices, w []string) string {
	q := make([]string, len(w))
	for i, x := range w {
		q[i] = quoters[c.pick(len(quoters))](x)
	}
	return strings.Join(q, " ")
}

// textWrappers wrap shell text in shell text that runs it.
var textWrappers = []func(c *choices, s string) string{
	func(c *choices, s string) string { return "bash -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash -o posix -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash -O extglob -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash +o posix -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash --norc -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash --rcfile /dev/null -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash -c -- " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash -ec " + quoteText(c, s) },
	func(c *choices, s string) string { return "sh -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "rbash -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "/usr/bin/bash -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "env bash -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "timeout 5 sh -c " + quoteText(c, s) },
	func(c *choices, s string) string { return "eval " + quoteText(c, s) },
	func(c *choices, s string) string { return "X=" + quoteText(c, s) + `; eval "$X"` },
	func(c *choices, s string) string { return "X=" + quoteText(c, s) + `; bash -c "$X"` },
	func(c *choices, s string) string { return "trap " + quoteText(c, s) + " EXIT" },
	func(c *choices, s string) string { return "bash <<< " + quoteText(c, s) },
	func(c *choices, s string) string { return "bash -s <<< " + quoteText(c, s) },
	func(c *choices, s string) string { return "source /dev/stdin <<< " + quoteText(c, s) },
	func(c *choices, s string) string { return ". /dev/fd/0 <<< " + quoteText(c, s) },
	func(c *choices, s string) string { return "echo " + quoteText(c, s) + " | bash" },
	func(c *choices, s string) string { return "bash <<'EOF'\n" + s + "\nEOF\n" },
	func(c *choices, s string) string { return "(" + s + ")" },
	func(c *choices, s string) string { return "{ " + s + "\n}" },
	func(c *choices, s string) string { return "if true; then " + s + "\nfi" },
	func(c *choices, s string) string { return "for i in 1; do " + s + "\ndone" },
	func(c *choices, s string) string { return "f() { " + s + "\n}; f" },
	func(c *choices, s string) string { return `echo "$(` + s + "\n)\"" },
	func(c *choices, s string) string { return "{ " + s + "\n} & wait" },
}

// Harmless commands before and after, and what joins them.
var (
	prefixes   = []string{"", "true", "echo hi", "cd .", ":", "ls >/dev/null", "git status", "go version >/dev/null 2>&1"}
	prefixSeps = []string{"; ", " && ", "\n", " | "}
	suffixes   = []string{"", "true", "echo done", "ls -la | wc -l", "git status"}
	suffixSeps = []string{"; ", " && ", "\n", " || "}
)

// hiddenText builds shell text from the fuzzer's bytes around the
// denied command: wrappers of its words, a way of writing the words,
// wrappers of the text, and harmless commands before and after.
func hiddenText(b []byte) string {
	c := &choices{b: b}
	words := strings.Fields(deniedCommand)
	for n := c.pick(3); n > 0; n-- {
		words = argvWrappers[c.pick(len(argvWrappers))](c, words)
	}
	text := renders[c.pick(len(renders))](c, words)
	for n := c.pick(3); n > 0; n-- {
		text = textWrappers[c.pick(len(textWrappers))](c, text)
	}
	if p := prefixes[c.pick(len(prefixes))]; p != "" {
		text = p + prefixSeps[c.pick(len(prefixSeps))] + text
	}
	if s := suffixes[c.pick(len(suffixes))]; s != "" {
		text = strings.TrimSuffix(text, "\n") + suffixSeps[c.pick(len(suffixSeps))] + s
	}
	return text
}

// fuzzSeeds are choice sequences for the constructs of
// TestHiddenCommandsMeetCommandRules (the comments show the text each
// builds; TestFuzzSeedsRunTheCommand checks that each runs it), then one
// for each text wrapper around the plain command.
var fuzzSeeds = append([][]byte{
	{},                             // git push --force
	{0, 0, 1},                      // 'git' push --force
	{1, 0, 0, 0, 0, 0, 0, 1, 1, 0}, // bash -o posix -c 'nice git push --force'
	{0, 1, 0, 1, 2, 0},             // bash -O extglob -c 'c='\''git push --force'\''; $c'
	{0, 4},                         // {git,push,--force}
	{0, 5},                         // git${IFS}push${IFS}--force
	{0, 2},                         // set -- git push --force; "$@"
	{0, 3},                         // a=(git push --force); "${a[@]}"
	{0, 6, 0},                      // g=git; $g push --force
	{0, 6, 2, 0},                   // $(printf %s 'git') push --force
	{1, 8, 1, 0},                   // env '-Sgit<TAB>push<TAB>--force'
	{1, 8, 0, 1},                   // env -S 'git push --force'
	{1, 8, 0, 2},                   // env '--split-string=git push --force'
	{1, 8, 2, 0},                   // env '-Sgit\_push\_--force'
	{1, 1},                         // timeout 5 git push --force
	{1, 2},                         // nohup git push --force
	{1, 6},                         // xargs git push --force
	{0, 7, 0},                      // xargs git <<< 'push --force'
	{0, 7, 1},                      // echo 'push --force' | xargs git
	{1, 7},                         // find . -maxdepth 0 -exec git push --force ';'
	{0, 0, 0, 0, 0, 2, 8, 0, 0, 0, 6, 0, 1, 0}, // git status; bash -c 'sh -c …'; true
	{0, 0, 0, 0, 0, 0, 5, 1, 3, 1},             // ls >/dev/null && git push --force && ls -la | wc -l
}, wrapperSeeds()...)

// wrapperSeeds: each text wrapper around the plain command.
func wrapperSeeds() [][]byte {
	var seeds [][]byte
	for i := range textWrappers {
		seeds = append(seeds, []byte{0, 0, 0, 0, 0, 1, byte(i)})
	}
	return seeds
}

// FuzzHiddenDeniedCommand: whatever shell text built around `git push
// --force` really runs it in bash (a fake git records its arguments), a
// FULL session whose command rule denies `git push --force` is never
// answered allow for it.
func FuzzHiddenDeniedCommand(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	box := newSandbox(f)
	svc := startService(f, builtinPolicy(f), sqlite.Options{Synchronous: "OFF"})
	svc.createSession(f, "fuzz", map[string]any{"permission_level": "FULL", "command_rules": map[string]any{deniedCommand: "deny"}})
	f.Fuzz(func(t *testing.T, b []byte) {
		text := hiddenText(b)
		calls, err := box.run(text, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !pushedForce(calls) {
			return // bash did not run it: nothing to hold
		}
		if d := svc.decide(t, "fuzz", text); d["decision"] == "allow" {
			t.Fatalf("bash runs git push --force from %q, and the deny rule allows it (source %v, rule %v: %v)", text, d["source"], d["rule"], d["reason"])
		}
	})
}

// TestFuzzSeedsRunTheCommand: each seed of FuzzHiddenDeniedCommand builds
// text that runs git push --force in bash, so the seeds test something.
func TestFuzzSeedsRunTheCommand(t *testing.T) {
	box := newSandbox(t)
	for _, seed := range fuzzSeeds {
		text := hiddenText(seed)
		calls, err := box.run(text, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !pushedForce(calls) {
			t.Errorf("seed %v: %q does not run git push --force (git calls: %q)", seed, text, calls)
		}
	}
}
