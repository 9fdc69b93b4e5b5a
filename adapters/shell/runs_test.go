package shell

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestWhatACommandRuns: every text a call hands to a shell is read and
// its commands join the facts, or, where it cannot be read, an opaque
// command (a program word that is not literal) stands for it.
func TestWhatACommandRuns(t *testing.T) {
	const push = "git push --force"
	cases := map[string]string{ // command → the commands found after the first, joined by " | "
		"bash -o posix -c 'git push --force'":           push,
		"bash -O extglob -c 'git push --force'":         push,
		"bash +o posix -c 'git push --force'":           push,
		"bash -eo pipefail -c 'git push --force'":       push,
		"bash --rcfile /dev/null -c 'git push --force'": push,
		"bash --norc --noprofile -c 'git push --force'": push,
		"bash -c -- 'git push --force'":                 push,
		"bash -c -x 'git push --force'":                 push,
		"rbash -c 'git push --force'":                   push,
		"/usr/bin/BASH5.2 -c 'git push --force'":        push,
		"busybox sh -c 'git push --force'":              push,
		"bash --frobnicate -c 'git push --force'":       opaqueOptions,
		"bash -Z -c 'git push --force'":                 opaqueOptions,
		`bash -c "$X"`:                                  opaqueBody,
		`X='git push --force'; eval "$X"`:               opaqueBody,
		"command eval 'git push --force'":               push,
		"trap 'git push --force' EXIT":                  push,
		"trap -- 'git push --force' EXIT":               push,
		"bash <<< 'git push --force'":                   push,
		"bash -s <<< 'git push --force'":                push,
		"bash -s arg <<< 'git push --force'":            push,
		"sudo bash <<< 'git push --force'":              push,
		"source /dev/stdin <<< 'git push --force'":      push,
		". /dev/fd/0 <<< 'git push --force'":            push,
		"bash /dev/stdin <<< 'git push --force'":        push,
		"bash <<'EOF'\ngit push --force\nEOF":           push,
		"bash <<EOF\ngit push --force\nEOF":             push,
		"bash <<EOF\ngit push \\$(id)\nEOF":             "git push $(id) | id", // bash runs the $(id) the escape left
		"bash <<EOF\ngit push $F\nEOF":                  opaqueBody,
		"{ bash; } <<< 'git push --force'":              push,
		"echo 'git push --force' | bash":                opaqueStdin,
		"cat x | sudo sh -s":                            opaqueStdin,
		"source <(echo 'git push --force')":             opaqueBody + " | echo git push --force",
		"source /dev/stdin":                             opaqueStdin,
		"su -c 'git push --force'":                      push,
		"script -q -c 'git push --force' /dev/null":     push,
		"watch -n1 'git push --force'":                  push,
		"env -S'git\tpush --force'":                     push,
		`env -S"git\_push --force"`:                     push,
		"env -S 'git push --force'":                     push,
		"env --split-string='git push --force'":         push,
		"env --split='git push --force'":                push,
		"env -iS'git push --force'":                     push,
		"env -S'-i A=1 git push --force'":               push,
		"env -S'git push' --force":                      push,
		"env --frobnicate git push --force":             opaqueOptions,
		"nice env '-Sgit\tpush\t--force'":               push,
		"timeout 5 env '-Sgit push --force'":            push,
		"env A=1 env -S'git push --force'":              push,
		"nice env -S 'git\\_push\\_--force'":            push,
		`env '-Senv --split-string=git\_push\_--force'`: "env --split-string=git push --force | " + push, // \_ splits at the first level
		"env -S'bash -c \"git push --force\"'":          push,
		`env -S'git push \q'`:                           opaqueOptions,
		// Not a shell in command position: nothing more is read.
		"grep bash x":            "",
		"ps aux | grep bash":     "",
		"bash script.sh":         "",
		"env A='a b' git status": "",
	}
	for cmd, want := range cases {
		t.Run(cmd, func(t *testing.T) {
			f := Parse(context.Background(), cmd)
			if !f.Parsed {
				t.Fatalf("not parsed: %s", f.Error)
			}
			var got []string
			for _, c := range f.Commands[1:] {
				if c.Argv[0] == "echo" && len(c.Argv) > 1 && strings.HasPrefix(cmd, "echo") {
					continue
				}
				if c.Argv[0] == "cat" || c.Argv[0] == "ps" || c.Argv[0] == "grep" || c.Argv[0] == "sudo" || c.Argv[0] == "bash" || c.Argv[0] == "sh" {
					continue
				}
				got = append(got, strings.Join(c.Argv, " "))
			}
			if strings.Join(got, " | ") != want {
				t.Fatalf("commands after the first %q, want %q", got, want)
			}
		})
	}
}

// TestRunTimeWords: words xargs, parallel and find fill in when they run
// are not literal, and xargs' appended input is a word of its own.
func TestRunTimeWords(t *testing.T) {
	cases := map[string][]bool{
		"xargs git":                    {true, true, false},
		"xargs -I X git X --force":     {true, true, false, true, false, true, false},
		"find . -exec git push {} \\;": {true, true, true, true, true, false, true},
		"find . -name x.go":            {true, true, true, true},
		"parallel git ::: push":        {true, true, true, true, false},
	}
	for cmd, want := range cases {
		f := Parse(context.Background(), cmd)
		if got := f.Commands[0].Literal; !reflect.DeepEqual(got, want) {
			t.Errorf("%q: literal %v, want %v (argv %q)", cmd, got, want, f.Commands[0].Argv)
		}
	}
}

// TestSplitString follows GNU env's -S splitting.
func TestSplitString(t *testing.T) {
	cases := []struct {
		in      string
		words   []string
		literal bool
		ok      bool
	}{
		{"git push --force", []string{"git", "push", "--force"}, true, true},
		{"git\tpush\n--force", []string{"git", "push", "--force"}, true, true},
		{`git\_push`, []string{"git", "push"}, true, true},
		{`"a\_b" c`, []string{"a b", "c"}, true, true},
		{`'a b' "c d"`, []string{"a b", "c d"}, true, true},
		{`'it\'s'`, []string{"it's"}, true, true},
		{`a \c b`, []string{"a"}, true, true},
		{`a #b c`, []string{"a"}, true, true},
		{`a\tb`, []string{"a\tb"}, true, true},
		{"a ${HOME}", []string{"a", "${HOME}"}, false, true},
		{`a \q`, nil, true, false},
		{`a $HOME`, nil, true, false},
		{`'open`, nil, true, false},
	}
	for _, c := range cases {
		words, lits, ok := splitString(c.in)
		if ok != c.ok || !reflect.DeepEqual(words, c.words) {
			t.Errorf("splitString(%q) = %q, %v; want %q, %v", c.in, words, ok, c.words, c.ok)
			continue
		}
		if ok && !c.literal && lits[len(lits)-1] {
			t.Errorf("splitString(%q): the expansion is literal", c.in)
		}
	}
}
