package evalcache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

const factsPolicy = `package p

cap := data.caps[input.tool]                          # a session fact: the tool
rule := input.session.rules[cap]                      # and the session's rules
level := data.levels[input.session.permission_level]  # and its level
parsed if input.shell.parsed                          # whether a command parsed
strict if {                                           # through other facts
	rule == "deny"
	level == "low"
}
argv := input.shell.commands[0].argv                   # the command's words: not a fact
whole := count(input.session)                          # the session whole: not a fact
deep := input.session.rules.x.y                        # deeper inside a fact path: a fact
mixed if {                                             # a fact and more: not a fact
	strict
	input.args.force
}
ask(c) := input.session.rules[c]                      # a function: never precomputed
asks := ask(cap)                                       # through a function of facts: a fact
when := time.now_ns()                                  # nondeterministic: never
`

func TestSessionFactsAreRulesOfTheCapabilityAndTheSessionsSettings(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": factsPolicy},
		map[string]any{"caps": map[string]any{"Read": "fs.read"}, "levels": map[string]any{"LOW": "low"}})
	var got []string
	for _, ref := range c.facts.refs {
		got = append(got, ref.String())
	}
	slices.Sort(got)
	want := []string{"data.p.asks", "data.p.cap", "data.p.deep", "data.p.level", "data.p.parsed", "data.p.rule", "data.p.strict"}
	if !slices.Equal(got, want) {
		t.Fatalf("session facts = %v, want %v", got, want)
	}

	input := func(rules, command string) ast.Value {
		return ast.MustParseTerm(fmt.Sprintf(`{"tool": "Read", "args": {"force": true, "path": %q},
			"session": {"permission_level": "LOW", "rules": %s, "workspace": %q},
			"shell": {"parsed": true, "commands": [{"argv": [%q]}]}}`, command, rules, command, command)).Value
	}
	// The first call with a projection evaluates its facts itself; the
	// second computes all of them, apart; the later ones find the same.
	ctx := context.Background()
	if c.facts.of(ctx, input(`{"fs.read": "deny"}`, "ls")) != nil {
		t.Fatal("facts computed apart on the first call with a projection")
	}
	first := c.facts.of(ctx, input(`{"fs.read": "deny"}`, "ls"))
	if first == nil {
		t.Fatal("no facts on the second call")
	}
	for _, name := range want {
		if _, ok := first.get(ast.MustParseRef(name)); !ok {
			t.Errorf("%s is not among the facts computed", name)
		}
	}
	if v, ok := first.get(ast.MustParseRef("data.p.strict")); !ok || v == nil || !v.Equal(ast.BooleanTerm(true)) {
		t.Errorf("strict under a deny rule = %v, %v; want true", v, ok)
	}
	// Another command, path and workspace: the same projection, the same facts.
	if c.facts.of(ctx, input(`{"fs.read": "deny"}`, "cat")) != first {
		t.Error("a call that differs only outside the fact paths has other facts")
	}
	// Other session rules: their own.
	c.facts.of(ctx, input(`{"fs.read": "allow"}`, "ls"))
	other := c.facts.of(ctx, input(`{"fs.read": "allow"}`, "ls"))
	if other == first {
		t.Error("other session rules got the first session's facts")
	}
	if v, ok := other.get(ast.MustParseRef("data.p.strict")); !ok || v != nil {
		t.Errorf("strict under an allow rule = %v, %v; want a known undefined", v, ok)
	}

	// Every rule answers the same with the facts as without.
	for _, in := range []ast.Value{input(`{"fs.read": "deny"}`, "ls"), input(`{"fs.read": "allow"}`, "rm"), input(`{}`, "x"),
		ast.MustParseTerm(`{"tool": "Write"}`).Value, ast.MustParseTerm(`{}`).Value} {
		for _, q := range []string{"data.p.cap", "data.p.rule", "data.p.level", "data.p.parsed", "data.p.strict", "data.p.argv",
			"data.p.whole", "data.p.deep", "data.p.mixed", "data.p.asks", "data.p.ask(\"fs.read\")"} {
			without, first, second := c.eval(t, q, in, false), c.eval(t, q, in, true), c.eval(t, q, in, true)
			if first != without || second != without {
				t.Errorf("%s on %v: with the facts %s, then %s, without %s", q, in, first, second, without)
			}
		}
	}
}

func TestSessionFactsAreBounded(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": factsPolicy}, map[string]any{})
	for i := range sessionFactsEntries + 10 {
		in := ast.MustParseTerm(fmt.Sprintf(`{"tool": "t%d"}`, i)).Value
		c.eval(t, "data.p.cap", in, true)
		c.eval(t, "data.p.cap", in, true) // met again: computed apart
		if n := len(c.facts.known); n > sessionFactsEntries || n == 0 {
			t.Fatalf("%d projections remembered, bound %d", n, sessionFactsEntries)
		}
		if n := len(c.facts.seen); n > sessionFactsEntries {
			t.Fatalf("%d projections met once remembered, bound %d", n, sessionFactsEntries)
		}
	}
	// Projections met once only: their keys, bounded too.
	for i := range sessionFactsEntries + 10 {
		c.eval(t, "data.p.cap", ast.MustParseTerm(fmt.Sprintf(`{"tool": "once%d"}`, i)).Value, true)
		if n := len(c.facts.seen); n > sessionFactsEntries || n == 0 {
			t.Fatalf("%d projections met once remembered, bound %d", n, sessionFactsEntries)
		}
	}
	// A session with a very large rule table is evaluated, its facts
	// with it, and neither computed apart nor remembered.
	clear(c.facts.known)
	clear(c.facts.seen)
	big := `{"tool": "t", "session": {"rules": {"r": "` + strings.Repeat("x", sessionFactsMaxBytes) + `"}}}`
	for range 3 {
		if got := c.eval(t, "data.p.rule", ast.MustParseTerm(big).Value, true); strings.HasPrefix(got, "error") {
			t.Fatalf("a large session: %s", got)
		}
	}
	if len(c.facts.known) != 0 || len(c.facts.seen) != 0 {
		t.Error("a projection over the size bound was remembered")
	}
}
