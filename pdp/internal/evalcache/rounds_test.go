package evalcache

import (
	"os"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestLaterRoundsTakeOnlyWhatCannotHaveChanged(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": `package p

tool := input.tool                                   # stable
parent := input.parent_decision.decision             # reads what a later round adds
capped if parent == "deny"                           # through it
verdict := input.danger.verdict                      # the other late fact
keys := count(object.keys(input))                    # the input whole
both := [tool, keys]                                 # through the input whole
doubled := [tool, tool]                              # stable, through a stable rule
`}, map[string]any{})
	if got, want := refNames(c.stable), []string{"data.p.doubled", "data.p.tool"}; !slices.Equal(got, want) {
		t.Fatalf("stable rules = %v, want %v", got, want)
	}

	first := ast.MustParseTerm(`{"tool": "shell"}`).Value
	later := ast.MustParseTerm(`{"tool": "shell", "parent_decision": {"decision": "deny"}, "danger": {"verdict": "SAFE"}}`).Value
	for _, q := range []string{"data.p.tool", "data.p.parent", "data.p.capped", "data.p.verdict", "data.p.keys", "data.p.both", "data.p.doubled", "data.p"} {
		if got, want := c.laterRound(t, q, first, later); got != want {
			t.Errorf("%s in a later round: %s, want %s", q, got, want)
		}
	}
}

// The built-in policy's later rounds (the parent's decision, the danger
// verdict added) answer as a first evaluation of the same input does.
func TestLaterRoundsOfTheBuiltInPolicy(t *testing.T) {
	c := builtinCompiled(t)
	read := func(name string) ast.Value {
		raw, err := os.ReadFile("../../testdata/inputs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return ast.MustParseTerm(string(raw)).Value
	}
	without := func(v ast.Value, key string) ast.Value {
		obj := v.(ast.Object).Copy()
		return obj.Diff(ast.NewObject(ast.Item(ast.StringTerm(key), ast.NullTerm())))
	}
	for _, pair := range []struct{ first, later ast.Value }{
		{read("child-shell.json"), read("child-shell-parent-allows.json")},
		{without(read("smart-shell-safe.json"), "danger"), read("smart-shell-safe.json")},
	} {
		for _, q := range []string{EntryPoint, AnswerPoint} {
			if got, want := c.laterRound(t, q, pair.first, pair.later); got != want {
				t.Errorf("%s in a later round:\n%s\nwant\n%s", q, got, want)
			}
		}
	}
}
