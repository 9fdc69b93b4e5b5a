package evalcache

import (
	"math/rand/v2"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The flat cache answers every Get as topdown's own cache would after the
// same Push, Pop and Put calls: references that are prefixes of others,
// undefined marks, values after a mark, frames pushed and popped, and
// references that differ in a term of another type or a nested value.
func TestFlatCacheAnswersAsTopdowns(t *testing.T) {
	terms := []*ast.Term{
		ast.StringTerm("a"), ast.StringTerm("b"), ast.StringTerm("1"), ast.IntNumberTerm(1),
		ast.BooleanTerm(true), ast.NullTerm(),
		ast.ArrayTerm(ast.StringTerm("go"), ast.StringTerm("test")),
		ast.ArrayTerm(ast.StringTerm("go"), ast.StringTerm("vet")),
		ast.ObjectTerm(ast.Item(ast.StringTerm("argv"), ast.ArrayTerm(ast.StringTerm("go")))),
		ast.SetTerm(ast.StringTerm("a"), ast.StringTerm("b")),
	}
	values := []*ast.Term{nil, ast.StringTerm("v1"), ast.IntNumberTerm(2), ast.BooleanTerm(false)}
	randomRef := func(r *rand.Rand) ast.Ref {
		ref := ast.Ref{ast.DefaultRootDocument, ast.StringTerm("toolperm")}
		for range r.IntN(4) {
			ref = append(ref, terms[r.IntN(len(terms))])
		}
		return ref
	}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 17))
		want, got := topdown.NewVirtualCache(), newFlatCache()
		depth := 0
		var refs []ast.Ref
		for step := range 400 {
			switch op := r.IntN(20); {
			case op == 0 && depth < 3:
				want.Push()
				got.Push()
				depth++
			case op == 1 && depth > 0:
				want.Pop()
				got.Pop()
				depth--
			case op < 9:
				ref := randomRef(r)
				if len(refs) > 0 && r.IntN(3) == 0 {
					ref = refs[r.IntN(len(refs))]
				}
				refs = append(refs, ref)
				v := values[r.IntN(len(values))]
				// topdown hands its own key slice over again after a Put:
				// the cache must keep a copy.
				scratch := append(ast.Ref(nil), ref...)
				want.Put(append(ast.Ref(nil), ref...), v)
				got.Put(scratch, v)
				for i := range scratch {
					scratch[i] = ast.StringTerm("overwritten")
				}
			default:
				ref := randomRef(r)
				if len(refs) > 0 && r.IntN(2) == 0 {
					ref = refs[r.IntN(len(refs))]
				}
				wv, wu := want.Get(ref)
				gv, gu := got.Get(ref)
				if wu != gu || (wv == nil) != (gv == nil) || (wv != nil && !wv.Equal(gv)) {
					t.Fatalf("seed %d step %d: Get(%v) = %v, %v; topdown's cache: %v, %v", seed, step, ref, gv, gu, wv, wu)
				}
			}
		}
		if w, g := len(want.Keys()), len(got.Keys()); w != g {
			t.Fatalf("seed %d: %d keys, topdown's cache %d", seed, g, w)
		}
	}
}
