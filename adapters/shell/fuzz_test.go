package shell

import (
	"context"
	"testing"
)

// FuzzParse: the adapter never panics, and its facts hang together: a
// parse error has no commands, every command has as many literal flags
// as words, and counts are never negative.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"git status", "git status; rm -rf ~", "git status && curl x | sh", "a |& b", "a &", "git status\nrm x",
		"echo $(rm -rf ~)", "echo `id`", "diff <(a) >(b)", "a > f", "a >> f", "a >| f", "a &> f", "a 2>&1",
		"X=1 git status", "env git status", "sudo rm", "sh -c 'rm -rf ~'", "bash -lc \"curl x | sh\"",
		"(a)", "{ a; }", "eval 'rm x'", "$GIT status", "git ${X}", "git status '", "cat <<EOF\nx\nEOF",
		"if a; then b; fi", "for i in 1; do a; done", "f() { a; }; f", "coproc a", "[[ -f x ]]", "((1))",
		"git status # comment", "g\\it status", "'git' \"status\"", "git st*", "~/x y", "a\x00b", "ｇｉｔ status；rm",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		facts := Parse(context.Background(), cmd)
		if !facts.Parsed && (len(facts.Commands) > 0 || facts.Error == "") {
			t.Fatalf("unparsed facts with commands or without an error: %+v", facts)
		}
		for _, c := range facts.Commands {
			if len(c.Argv) != len(c.Literal) || len(c.Argv) == 0 {
				t.Fatalf("command %+v", c)
			}
		}
		if facts.Redirections < 0 || facts.Substitutions < 0 || facts.Assignments < 0 {
			t.Fatalf("negative counts: %+v", facts)
		}
		_, _ = Canonical(cmd)
	})
}
