package shell

import (
	"context"
	"strings"
	"testing"
)

// pipeline is n stages of `a|a|…`.
func pipeline(n int) string { return strings.Repeat("a|", n-1) + "a" }

// substitutions nests n command substitutions: $($(… a …)).
func substitutions(n int) string {
	return strings.Repeat("$(", n) + "a" + strings.Repeat(")", n)
}

// shellOptions is `sh` followed by n pairs `-o sh`, each holding a word that looks like an
// option and a shell, then -c BODY.
func shellOptions(n int, body string) string {
	return "sh " + strings.Repeat("-o sh ", n) + "-c " + quote(body)
}

// quote single-quotes a word for the shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestLimits(t *testing.T) {
	lim := DefaultLimits
	cases := []struct {
		name  string
		cmd   string
		limit string // "" when the command is parsed
	}{
		{"bytes: at the limit", "echo " + strings.Repeat("x", lim.MaxBytes-5), ""},
		{"bytes: one over", "echo " + strings.Repeat("x", lim.MaxBytes-4), LimitBytes},
		{"commands: at the limit", strings.Repeat("a;", lim.MaxCommands-1) + "a", ""},
		{"commands: one over", strings.Repeat("a;", lim.MaxCommands) + "a", LimitCommands},
		{"commands in a word: one over", "echo " + strings.Repeat("$(a)", lim.MaxCommands), LimitCommands},
		{"operators: at the limit", "! " + pipeline(lim.MaxOperators), ""},
		{"operators: one over", "! " + pipeline(lim.MaxOperators) + " &", LimitOperators},
		{"pipeline: one stage over", pipeline(lim.MaxCommands + 1), LimitCommands},
		{"operators in arithmetic: one over", "echo $((" + strings.Repeat("1+", lim.MaxOperators+1) + "1))", LimitOperators},
		{"depth: at the limit", substitutions(lim.MaxDepth), ""},
		{"depth: one over", substitutions(lim.MaxDepth + 1), LimitDepth},
		{"depth: subshells at the limit", strings.Repeat("( ", lim.MaxDepth) + "a" + strings.Repeat(" )", lim.MaxDepth), ""},
		{"depth: subshells one over", strings.Repeat("( ", lim.MaxDepth+1) + "a" + strings.Repeat(" )", lim.MaxDepth+1), LimitDepth},
		{"depth: groups one over", strings.Repeat("{ ", lim.MaxDepth+1) + "a" + strings.Repeat("; }", lim.MaxDepth+1), LimitDepth},
		{"depth: backticks in quotes one over", `echo "` + strings.Repeat("$(echo \"", lim.MaxDepth+1) + strings.Repeat("\")", lim.MaxDepth+1) + `"`, LimitDepth},
		{"depth: parameter expansions one over", "echo " + strings.Repeat("${a:-", lim.MaxDepth+1) + strings.Repeat("}", lim.MaxDepth+1), LimitDepth},
		{"depth: keywords one over", strings.Repeat("if a; then ", lim.MaxDepth+1) + "b" + strings.Repeat("; fi", lim.MaxDepth+1), LimitDepth},
		{"depth: sh -c bodies count one level each", "sh -c " + quote(substitutions(lim.MaxDepth)), LimitDepth},
		{"bodies: at the limit", strings.Repeat("sh -c a;", lim.MaxBodies-1) + "sh -c a", ""},
		{"bodies: one over", strings.Repeat("sh -c a;", lim.MaxBodies) + "sh -c a", LimitBodies},
		{"parsed bytes: bodies of 60 KiB each", strings.Repeat("eval ", 5) + strings.Repeat("x", 60<<10), LimitParsedBytes},
		{"deep brackets are refused before parsing", strings.Repeat("(", 30000) + strings.Repeat(")", 30000), LimitDepth},
		{"parentheses in quotes, comments and here-documents do not nest", "echo '" + strings.Repeat("(", 100) + "' \"" + strings.Repeat("(", 100) + "\" # " + strings.Repeat("(", 100) + "\ncat <<'EOF'\n" + strings.Repeat("(", 100) + "\nEOF\ncat <<EOF\n" + strings.Repeat("(", 100) + "\nEOF", ""},
		{"a ) in a here-document closes nothing", strings.Repeat("$(cat <<E\n)\nE\n", 40) + strings.Repeat(")", 40), LimitDepth},
		{"case patterns close nothing", strings.Repeat("$(case x in a) ", 20) + strings.Repeat(";; esac)", 20), LimitDepth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse(context.Background(), tc.cmd)
			if tc.limit == "" {
				if !f.Parsed {
					t.Fatalf("not parsed: %s", f.Error)
				}
				return
			}
			if f.Parsed || f.Limit != tc.limit || f.Error == "" || len(f.Commands) > 0 {
				t.Fatalf("got parsed=%v limit=%q error=%q, want the %q limit", f.Parsed, f.Limit, f.Error, tc.limit)
			}
		})
	}
}

// TestHugeShapesReturn: the shapes that used to overflow the stack or
// take seconds are refused, before any walk of their tree.
func TestHugeShapesReturn(t *testing.T) {
	cases := map[string]string{
		"450,000-stage pipeline (900 KB)": pipeline(450000),
		"100,000 nested substitutions":    substitutions(100000),
		"20,000 nested substitutions":     substitutions(20000),
		"60 KiB of nested subshells":      strings.Repeat("(", 30000) + "a" + strings.Repeat(")", 30000),
		"60 KiB pipeline":                 pipeline(30000),
		"60 KiB of nested ${":             "echo " + strings.Repeat("${a:-", 10000) + strings.Repeat("}", 10000),
		"60 KiB of unary minus":           "echo $((" + strings.Repeat("- ", 30000) + "1))",
		"60 KiB of elif":                  "if a; then b; " + strings.Repeat("elif a; then b; ", 4000) + "fi",
	}
	for name, cmd := range cases {
		t.Run(name, func(t *testing.T) {
			f := Parse(context.Background(), cmd)
			if f.Parsed || f.Limit == "" {
				t.Fatalf("got parsed=%v limit=%q error=%q", f.Parsed, f.Limit, f.Error)
			}
			if _, err := Canonical(cmd); err == nil {
				t.Fatal("Canonical printed a command over the limits")
			}
		})
	}
}

// TestShellOptionRepetition: `sh -o sh -o sh … -c BODY` parses BODY once,
// however many words look like a shell, and the nested variant costs
// the budget of its size, not a power of it.
func TestShellOptionRepetition(t *testing.T) {
	t.Run("7 KB: one body", func(t *testing.T) {
		f := Parse(context.Background(), shellOptions(1400, "rm -rf ~"))
		if !f.Parsed {
			t.Fatalf("not parsed: %s", f.Error)
		}
		if got := programs(f); strings.Join(got, " ") != "sh rm" {
			t.Fatalf("programs %q", got)
		}
	})
	t.Run("20,000 words", func(t *testing.T) {
		f := Parse(context.Background(), shellOptions(10000, "rm -rf ~"))
		if !f.Parsed || strings.Join(programs(f), " ") != "sh rm" {
			t.Fatalf("got parsed=%v error=%q programs %q", f.Parsed, f.Error, programs(f))
		}
	})
	t.Run("nested four levels", func(t *testing.T) {
		body := "rm -rf ~"
		for range 4 {
			body = shellOptions(20, body)
		}
		f := Parse(context.Background(), body)
		if !f.Parsed {
			t.Fatalf("not parsed: %s", f.Error)
		}
		want := "sh sh sh sh rm"
		if got := strings.Join(programs(f), " "); got != want {
			t.Fatalf("programs %q, want %q", got, want)
		}
		if f.budget.bodies != 4 {
			t.Fatalf("%d bodies parsed, want 4", f.budget.bodies)
		}
	})
	t.Run("nested under 1 KB with a body at each level", func(t *testing.T) {
		body := "rm -rf ~"
		for range 4 {
			body = shellOptions(40, body) + " " + strings.Repeat("-c x ", 10)
		}
		f := Parse(context.Background(), body)
		if f.Parsed && f.budget.bodies > DefaultLimits.MaxBodies {
			t.Fatalf("%d bodies parsed", f.budget.bodies)
		}
	})
}

func TestControlCharacters(t *testing.T) {
	for _, cmd := range []string{
		"npm install\rrm -rf /",
		"git status\r\n",
		"echo 'a\r\nb'", // the parser drops the \r even inside quotes
		"a\x00b",
		"git\x1bstatus",
		"git status\x7f",
		"git\vstatus",
		"git\fstatus",
	} {
		t.Run(strings.ToValidUTF8(cmd, "?"), func(t *testing.T) {
			f := Parse(context.Background(), cmd)
			if f.Parsed || f.Limit != LimitControl || !strings.Contains(f.Error, "control character") {
				t.Fatalf("got parsed=%v limit=%q error=%q", f.Parsed, f.Limit, f.Error)
			}
		})
	}
	for _, cmd := range []string{"git status\n", "printf 'a\\tb'\t x", "printf '\\r'"} {
		if f := Parse(context.Background(), cmd); !f.Parsed {
			t.Errorf("%q not parsed: %s", cmd, f.Error)
		}
	}
}

func TestParseStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := Parse(ctx, "git status")
	if f.Parsed || f.Limit != LimitCancelled {
		t.Fatalf("got parsed=%v limit=%q error=%q", f.Parsed, f.Limit, f.Error)
	}
}

func TestCustomLimits(t *testing.T) {
	lim := Limits{MaxBytes: 10}
	if f := lim.Parse(context.Background(), "git status"); !f.Parsed {
		t.Fatalf("10 bytes not parsed: %s", f.Error)
	}
	if f := lim.Parse(context.Background(), "git status "); f.Parsed || f.Limit != LimitBytes {
		t.Fatalf("11 bytes: got parsed=%v limit=%q", f.Parsed, f.Limit)
	}
}

func programs(f Facts) []string {
	var out []string
	for _, c := range f.Commands {
		out = append(out, c.Argv[0])
	}
	return out
}

// TestRepeatedReadersCostOnce: a precommand followed by thousands of words
// that each read the words after them (eval, gdb, alias) is read once,
// not once per word.
func TestRepeatedReadersCostOnce(t *testing.T) {
	for _, word := range []string{"eval ", "gdb ", "alias ", "trap "} {
		cmd := "sudo " + strings.Repeat(word, 12000) + "x"
		f := Parse(context.Background(), cmd)
		if f.budget != nil && f.budget.bodies > 2 {
			t.Errorf("%q×12000: %d bodies parsed", word, f.budget.bodies)
		}
	}
}
