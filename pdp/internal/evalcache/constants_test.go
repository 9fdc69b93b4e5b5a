package evalcache

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/toolperm/pdp/policies"
)

// The entry points of the built-in policy (pdp.EntryPoint, pdp.AnswerPoint).
const (
	EntryPoint  = "data.toolperm.decision"
	AnswerPoint = "data.toolperm.answer"
)

// testPaths are the input paths the tests judge rules by: the parts the
// small policies below read as session facts, and the two a later round
// adds. The engine passes its own, longer list (pdp/input.go,
// reusePaths); an evaluation answers as OPA does whatever the list, which
// the built-in policy's tests below show with this one.
var testPaths = Paths{
	Facts: []ast.Ref{
		ast.MustParseRef("input.tool"),
		ast.MustParseRef("input.shell.parsed"),
		ast.MustParseRef("input.session.rules"),
		ast.MustParseRef("input.session.permission_level"),
		ast.MustParseRef("input.session.scope"),
	},
	Late: []ast.Ref{ast.MustParseRef("input.parent_decision"), ast.MustParseRef("input.danger")},
}

// compiled is a policy's compiler and store, as pdp.Compile builds them,
// with its analysis.
type compiled struct {
	compiler *ast.Compiler
	store    storage.Store
	*Analysis
}

func compileForTest(t *testing.T, modules map[string]string, data map[string]any) compiled {
	t.Helper()
	parsed := map[string]*ast.Module{}
	for name, src := range modules {
		parsed[name] = ast.MustParseModule(src)
	}
	compiler := ast.NewCompiler()
	if compiler.Compile(parsed); compiler.Failed() {
		t.Fatal(compiler.Errors)
	}
	store := inmem.NewFromObjectWithOpts(data, inmem.OptReturnASTValuesOnRead(true))
	a, err := Analyse(context.Background(), compiler, store, testPaths)
	if err != nil {
		t.Fatal(err)
	}
	return compiled{compiler, store, a}
}

// eval evaluates query on input, with the constants and the input's
// session facts in the cache or without.
func (c compiled) eval(t *testing.T, query string, input ast.Value, withConstants bool) string {
	t.Helper()
	out, _ := c.evalRound(t, query, input, nil, withConstants)
	return out
}

// evalRound evaluates query on input as a round after prev (nil for a
// first round), and returns what a next round may take from it.
func (c compiled) evalRound(t *testing.T, query string, input ast.Value, prev *Round, withConstants bool) (string, *Round) {
	t.Helper()
	ctx := context.Background()
	pq, err := rego.New(rego.Query(query), rego.Compiler(c.compiler), rego.Store(c.store)).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opts := []rego.EvalOption{rego.EvalParsedInput(input)}
	cache := c.Start(ctx, input, prev)
	if withConstants {
		opts = append(opts, cache.Option())
	}
	rs, err := pq.Eval(ctx, opts...)
	if err != nil {
		return "error: " + err.Error(), nil
	}
	if withConstants {
		cache.Commit() // as the engine does after an evaluation without an error
	}
	out, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), cache.Next()
}

// laterRound evaluates query on first, then on later as the next round
// of the same decision (taking first's stable rules), and returns that
// answer beside OPA's plain evaluation of later.
func (c compiled) laterRound(t *testing.T, query string, first, later ast.Value) (reused, plain string) {
	t.Helper()
	_, prev := c.evalRound(t, query, first, nil, true)
	reused, _ = c.evalRound(t, query, later, prev, true)
	return reused, c.eval(t, query, later, false)
}

// refNames lists the references a tree of rule values knows.
func refNames(c *ruleValues) []string {
	var names []string
	var walk func(prefix string, n *valueNode)
	walk = func(prefix string, n *valueNode) {
		if n.known {
			names = append(names, prefix)
		}
		for k, child := range n.children {
			walk(strings.TrimPrefix(prefix+"."+k, "."), child)
		}
	}
	walk("", &c.root)
	slices.Sort(names)
	return names
}

func TestConstantsAreTheRulesOfDataAlone(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": `package p

words := {lower(w) | some w in data.words}         # data alone
size := count(words) + 1                            # through another constant
gone := x if { x := data.missing }                  # undefined, still a constant
listed contains w if some w in data.words           # a partial set of data alone
called := double(2)                                 # a function of constants
double(x) := 2 * x                                  # a function: never cached whole
echo := input.x                                     # reads the input
mixed := {w | some w in words; w != input.y}        # through the input
now := time.now_ns()                                # nondeterministic
uses_now := now + 1                                 # through a nondeterministic rule
dynamic := data.q[input.k]                          # a reference it cannot pin down
replaced := x if { x := words with data.words as ["Z"] } # with
default flag := false
flag if input.w                                     # one definition reads the input
`, "q.rego": `package q

words := data.p.words
`}, map[string]any{"words": []any{"A", "b"}})

	want := []string{"data.p.called", "data.p.gone", "data.p.listed", "data.p.size", "data.p.words", "data.q.words"}
	if got := refNames(c.consts); !slices.Equal(got, want) {
		t.Fatalf("constants = %v, want %v", got, want)
	}
	if v, ok := c.consts.get(ast.MustParseRef("data.p.gone")); !ok || v != nil {
		t.Errorf("data.p.gone = %v, %v; want known and undefined", v, ok)
	}
	// Each rule answers the same with the constants as without, `with`
	// replacing what a constant was computed from included.
	input := ast.MustParseTerm(`{"x": 1, "y": "a", "k": "words", "w": true}`).Value
	for _, q := range []string{"data.p.words", "data.p.size", "data.p.gone", "data.p.listed", "data.p.called",
		"data.p.echo", "data.p.mixed", "data.p.dynamic", "data.p.replaced", "data.p.flag", "data.q"} {
		without, with := c.eval(t, q, input, false), c.eval(t, q, input, true)
		if with != without {
			t.Errorf("%s: with the constants %s, without %s", q, with, without)
		}
	}
	if got := c.eval(t, "data.p.replaced", input, true); !strings.Contains(got, `["z"]`) {
		t.Errorf("a with inside a rule must replace what the constant was computed from: %s", got)
	}
}

// builtinCompiled compiles the built-in policy as Compile does.
func builtinCompiled(t *testing.T) compiled {
	t.Helper()
	modules := map[string]string{}
	var data map[string]any
	entries, err := fs.ReadDir(policies.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := fs.ReadFile(policies.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(e.Name(), ".rego"):
			modules[e.Name()] = string(raw)
		case e.Name() == "data.json":
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
		}
	}
	return compileForTest(t, modules, data)
}

// The built-in policy answers every recorded input the same with its
// constants and session facts as OPA does without them (explain entry
// point: every field and the trace).
func TestConstantsDoNotChangeTheBuiltInPolicysAnswers(t *testing.T) {
	c := builtinCompiled(t)
	if c.consts.rules < 10 {
		t.Fatalf("only %d constants in the built-in policy: %v", c.consts.rules, refNames(c.consts))
	}
	for _, name := range []string{"data.toolperm.shell_wrappers", "data.toolperm.action_rank"} {
		if !slices.Contains(refNames(c.consts), name) {
			t.Errorf("%s is not a constant: %v", name, refNames(c.consts))
		}
	}
	files, _ := filepath.Glob("../../testdata/inputs/*.json")
	if len(files) < 12 {
		t.Fatalf("%d recorded inputs", len(files))
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		input := ast.MustParseTerm(string(raw)).Value
		// The first evaluation with them computes the session facts, the
		// second finds them.
		without, first, second := c.eval(t, EntryPoint, input, false), c.eval(t, EntryPoint, input, true), c.eval(t, EntryPoint, input, true)
		if first != without || second != without {
			t.Errorf("%s: with the constants\n%s\nand the facts remembered\n%s\nwithout\n%s", file, first, second, without)
		}
		if strings.HasPrefix(second, "error") || !strings.Contains(second, `"decision"`) {
			t.Errorf("%s: no decision: %s", file, second)
		}
	}
}

// A document is judged with every rule that may give it a value: a rule
// with a general head (a[x]) may produce its key from the input, and
// topdown caches the document built from all of them.
func TestDocumentsAreJudgedWithEveryRuleThatMayProduceThem(t *testing.T) {
	for _, tc := range []struct {
		name, policy string
		inputs       []string
	}{
		{"a general partial set adds to a constant's key",
			"a.b contains 1\na[x] contains y if { x := input.k; y := input.v }",
			[]string{`{"k": "b", "v": 2}`}},
		{"a general rule conflicts with a constant: an error, never a value",
			"a.b := 1\na[x] := 2 if { x := input.k }",
			[]string{`{"k": "b"}`}},
		{"a general rule reads beyond the session facts",
			"a.b contains input.tool\na[x] contains y if { x := input.args.k; y := input.args.v }",
			[]string{`{"tool": "t", "args": {"k": "b", "v": "EVIL"}}`, `{"tool": "t", "args": {}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compileForTest(t, map[string]string{"p.rego": "package p\n" + tc.policy + "\nanswer := data.p.a.b\n"}, map[string]any{})
			for _, s := range tc.inputs {
				in := ast.MustParseTerm(s).Value
				if plain, reused := c.eval(t, "data.p.answer", in, false), c.eval(t, "data.p.answer", in, true); plain != reused {
					t.Errorf("on %s: OPA %s, the engine %s", s, plain, reused)
				}
			}
		})
	}
	t.Run("a general rule reads what a later round adds", func(t *testing.T) {
		c := compileForTest(t, map[string]string{"p.rego": `package p
a.b contains input.tool
a[x] contains y if { x := "b"; y := input.danger.verdict }
answer := data.p.a.b
`}, map[string]any{})
		later := ast.MustParseTerm(`{"tool": "shell", "danger": {"verdict": "DANGEROUS"}}`).Value
		if reused, plain := c.laterRound(t, "data.p.answer", ast.MustParseTerm(`{"tool": "shell"}`).Value, later); plain != reused {
			t.Errorf("later round: OPA %s, the engine %s", plain, reused)
		}
	})
}

// Builtins that verify certificates read the clock although OPA does not
// mark them nondeterministic: a rule using them is never a constant.
func TestCertificateVerificationIsNeverAConstant(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": `package p
trusted if {
	[ok, _] := crypto.x509.parse_and_verify_certificates(data.chain)
	ok
}
trusted_with if {
	[ok, _] := crypto.x509.parse_and_verify_certificates_with_options(data.chain, {})
	ok
}
chain_length := count(data.chain)
`}, map[string]any{"chain": "x"})
	if got := refNames(c.consts); !slices.Equal(got, []string{"data.p.chain_length"}) {
		t.Errorf("constants = %v, want only data.p.chain_length", got)
	}
}

// Topdown may cache a document that rules of another reference build
// part-built under its own reference: a lookup a.b[x][x] into a[k][m][n]
// stores the diagonal it found at data.p.a.b. Nothing read from an
// evaluation's cache (session facts, later rounds) may rest on such a
// document.
const partBuiltPolicy = `package p
a.b := {} if false
a[k][m][n] := true if { k := "b"; some m in input.session.scope; some n in input.session.scope }
diagonal := [x | some x; a.b[x][x]]
deny if a.b["fs.read"]["shell.exec"]
`

// sameAsOPAInEitherOrder evaluates query on the inputs in each order,
// learning from each, and compares every answer with OPA's.
func sameAsOPAInEitherOrder(t *testing.T, policy, query string, inputs ...string) {
	t.Helper()
	for _, order := range [][]string{inputs, {inputs[1], inputs[0]}} {
		c := compileForTest(t, map[string]string{"p.rego": policy}, map[string]any{})
		for _, s := range order {
			in := ast.MustParseTerm(s).Value
			if plain, reused := c.eval(t, query, in, false), c.eval(t, query, in, true); plain != reused {
				t.Errorf("on %s: OPA %s, the engine %s", s, plain, reused)
			}
		}
	}
}

// The same diagonal, reached through a rule with one variable key: a
// set element or a ground path below the key adds the steps.
const diagonalTail = `
n := count(data.p.a.x.c) if input.tool == "t"
touch if not input.args.probe
touch if {
	input.args.probe
	some y
	data.p.a.x[y][y]
}
allow if {
	touch
	n == 1
}
`

func TestNothingReusedRestsOnADiagonalBelowOneKey(t *testing.T) {
	for name, rules := range map[string]string{
		"a set element":          "a[k].c contains v if {\n\tsome k in [\"x\"]\n\tsome v in [\"c\", \"d\"]\n}\n",
		"a ground path below it": "a[k].c.c := 1 if k := \"x\"\na[k].c.d := 2 if k := \"x\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			sameAsOPAInEitherOrder(t, "package p\n"+rules+diagonalTail, "data.p.allow",
				`{"tool": "t", "args": {"probe": true}}`, `{"tool": "t", "args": {}}`)
		})
	}
	t.Run("later rounds", func(t *testing.T) {
		c := compileForTest(t, map[string]string{"p.rego": `package p
a[k].c contains v if {
	some k in ["x"]
	some v in ["c", "d"]
}
n := count(data.p.a.x.c) if input.tool == "t"
touch if input.danger
touch if {
	not input.danger
	some y
	data.p.a.x[y][y]
}
allow if {
	touch
	n == 1
}
`}, map[string]any{})
		later := ast.MustParseTerm(`{"tool": "t", "danger": {"verdict": "SAFE"}}`).Value
		if reused, plain := c.laterRound(t, "data.p.allow", ast.MustParseTerm(`{"tool": "t"}`).Value, later); plain != reused {
			t.Errorf("later round: OPA %s, the engine %s", plain, reused)
		}
	})
}

func TestNothingReusedRestsOnAPartBuiltDocument(t *testing.T) {
	t.Run("session facts", func(t *testing.T) {
		c := compileForTest(t, map[string]string{"p.rego": partBuiltPolicy + `
decision := "deny" if deny
else := "allow"
answer := [count(diagonal), decision] if input.workspace.outside[0] == "/a"
answer := decision if input.workspace.outside[0] == "/b"
`}, map[string]any{})
		for _, s := range []string{
			`{"session": {"scope": ["fs.read", "shell.exec"]}, "workspace": {"outside": ["/a"]}}`,
			`{"session": {"scope": ["fs.read", "shell.exec"]}, "workspace": {"outside": ["/b"]}}`,
		} {
			in := ast.MustParseTerm(s).Value
			if plain, reused := c.eval(t, "data.p.answer", in, false), c.eval(t, "data.p.answer", in, true); plain != reused {
				t.Errorf("on %s: OPA %s, the engine %s", s, plain, reused)
			}
		}
	})
	t.Run("later rounds", func(t *testing.T) {
		c := compileForTest(t, map[string]string{"p.rego": partBuiltPolicy + `
answer := "needs danger" if { not input.danger; count(diagonal) >= 0 }
answer := "deny" if { input.danger; deny }
answer := "allow" if { input.danger; not deny }
`}, map[string]any{})
		first := ast.MustParseTerm(`{"session": {"scope": ["fs.read", "shell.exec"]}}`).Value
		later := ast.MustParseTerm(`{"session": {"scope": ["fs.read", "shell.exec"]}, "danger": {"verdict": "SAFE"}}`).Value
		if reused, plain := c.laterRound(t, "data.p.answer", first, later); plain != reused {
			t.Errorf("later round: OPA %s, the engine %s", plain, reused)
		}
	})
}
