package evalcache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

const funcsPolicy = `package p

double(x) := 2 * x                                      # its arguments alone: kept
rule_of(c) := input.session.rules[c]                    # a session fact's part: kept per projection
through(x) := double(x) + count(input.session.rules)    # facts through another function: kept per projection
arg_of(k) := input.args[k]                              # beyond the facts: never kept
later(x) := [x, input.danger.verdict]                   # what a later round adds: never kept
now_plus(x) := time.now_ns() + x                        # nondeterministic: never kept
with_data(x) := y if { y := double(x) with data.q as 1 } # with: never kept
conflict(x) := 1 if x == "a"
conflict(x) := 2 if x == "a"                            # a conflict: an error every time
default conflict(_) := 0

answer := [double(input.n), rule_of(input.tool), through(input.n), arg_of("k")]
bad := conflict(input.s)
`

// A function whose value depends on its arguments, the data and the
// session-fact parts of the input keeps its results across evaluations;
// every other function is evaluated as OPA does, and every answer is
// OPA's, whatever was kept before.
func TestFunctionResultsAreKeptOnlyWhereTheyCannotChange(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": funcsPolicy}, map[string]any{})
	var kept []string
	for _, list := range c.funcs {
		for _, f := range list {
			kept = append(kept, fmt.Sprintf("%v:%v", f.ref, f.readsInput))
		}
	}
	slices.Sort(kept)
	want := []string{"data.p.conflict:false", "data.p.double:false", "data.p.rule_of:true", "data.p.through:true"}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept functions = %v, want %v", kept, want)
	}
	inputs := []string{
		`{"n": 1, "tool": "read", "session": {"rules": {"read": "allow"}}, "args": {"k": "x"}, "s": "b"}`,
		`{"n": 1, "tool": "read", "session": {"rules": {"read": "deny"}}, "args": {"k": "y"}, "s": "a"}`,
		`{"n": 2, "tool": "read", "session": {"rules": {"read": "deny", "w": "ask"}}, "args": {"k": "y"}, "s": "a"}`,
		`{"n": 1, "tool": "read", "session": {"rules": {"read": "allow"}}, "args": {"k": "z"}, "s": "b"}`,
		`{"n": 1, "tool": "write", "session": {"rules": {"read": "allow"}}, "args": {}, "s": "b"}`,
	}
	// Twice over, in both orders: what the first pass keeps serves the
	// second, and must answer as OPA does.
	for pass := range 2 {
		order := slices.Clone(inputs)
		if pass == 1 {
			slices.Reverse(order)
		}
		for _, s := range order {
			in := ast.MustParseTerm(s).Value
			for _, q := range []string{"data.p.answer", "data.p.bad", "data.p.with_data(3)", "data.p.now_plus(0) > 0", "data.p.later(1)"} {
				if plain, reused := c.eval(t, q, in, false), c.eval(t, q, in, true); plain != reused {
					t.Errorf("pass %d, %s on %s: OPA %s, the engine %s", pass, q, s, plain, reused)
				}
			}
		}
	}
	held := 0
	for i := range c.fmemo.shards {
		for _, list := range c.fmemo.shards[i].current {
			held += len(list)
		}
	}
	if held == 0 {
		t.Fatal("no function result was kept across evaluations")
	}
}

// A conflict is found after topdown has cached a function's first
// result: that result is never kept, so the next evaluation meets the
// conflict again.
func TestAFunctionConflictIsNeverKept(t *testing.T) {
	c := compileForTest(t, map[string]string{"p.rego": funcsPolicy}, map[string]any{})
	in := ast.MustParseTerm(`{"s": "a"}`).Value
	for range 3 {
		if got := c.eval(t, "data.p.bad", in, true); got[:6] != "error:" {
			t.Fatalf("a conflicting function answered %s", got)
		}
	}
	for i := range c.fmemo.shards {
		for _, list := range c.fmemo.shards[i].current {
			for _, e := range list {
				if e.key[0].String() == "data.p.conflict" {
					t.Fatalf("the conflicting call was kept: %v = %v", e.key, e.value)
				}
			}
		}
	}
}

func TestTheFunctionMemoIsBoundedInBytes(t *testing.T) {
	m := newFuncMemo(64 << 10)
	fn := ast.NewTerm(ast.MustParseRef("data.p.f"))
	for i := range 20000 {
		key := ast.Ref{fn, ast.StringTerm(fmt.Sprintf("arg %d", i))}
		m.put(key.Hash(), funcEntry{key: key, value: ast.StringTerm(fmt.Sprintf("value %d with some length", i))})
	}
	var held int64
	for i := range m.shards {
		for _, gen := range []map[int][]funcEntry{m.shards[i].current, m.shards[i].previous} {
			for _, list := range gen {
				for _, e := range list {
					held += termBytes(e.value) + termBytes(e.key[0]) + termBytes(e.key[1]) + 64
				}
			}
		}
	}
	if held > 64<<10 {
		t.Fatalf("the function memo holds %d bytes, over its 65536-byte budget", held)
	}
}

// Calls whose keys share a hash are kept a few at a time: a lookup never
// compares more than that many keys, whatever arguments a model chose.
func TestCallsSharingAHashAreKeptAFewAtATime(t *testing.T) {
	m := newFuncMemo(0)
	fn := ast.NewTerm(ast.MustParseRef("data.p.f"))
	for i := range 100 {
		key := ast.Ref{fn, ast.StringTerm(fmt.Sprintf("arg %d", i))}
		m.put(42, funcEntry{key: key, value: ast.BooleanTerm(true)}) // one hash for all
	}
	if n := len(m.shard(42).current[42]); n > maxBucket {
		t.Fatalf("%d entries under one hash, want at most %d", n, maxBucket)
	}
	if _, ok := m.get(42, ast.Ref{fn, ast.StringTerm("arg 0")}, ""); !ok {
		t.Fatal("the first call kept is not found")
	}
}
