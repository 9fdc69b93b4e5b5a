package evalcache

import (
	"context"
	"crypto/sha256"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// reuseCache is the virtual-document cache of one evaluation: the
// policy's constants, the call's session facts (sessionfacts.go) and, in
// a later round of one decision, the stable rules of the round before
// (rounds.go), then what the evaluation itself caches. Inside a `with` (a pushed
// frame) neither is used: `with` may replace what they were computed
// from.
type reuseCache struct {
	consts, facts *ruleValues
	// prev is the decision's previous round, when this is a later one
	// (rounds.go).
	prev  *Round
	inner topdown.VirtualCache
	depth int

	// The results of functions kept across evaluations (funcs.go), and
	// what this evaluation adds to them when it ends well.
	funcs   map[int][]pureFunction
	fmemo   *funcMemo
	pending []pendingCall
	// input and the projection of it a function that reads it is keyed
	// by (computed on the first such call).
	input      ast.Value
	factPaths  []ast.Ref
	projection string
	projHash   int
	projDone   bool
}

// pendingCall is a function result this evaluation computed.
type pendingCall struct {
	hash  int
	entry funcEntry
}

func newReuseCache(consts, facts *ruleValues) *reuseCache {
	return &reuseCache{consts: consts, facts: facts, inner: newFlatCache()}
}

func (c *reuseCache) Push() { c.depth++; c.inner.Push() }
func (c *reuseCache) Pop()  { c.depth--; c.inner.Pop() }

func (c *reuseCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if c.depth == 0 {
		for _, known := range [2]*ruleValues{c.consts, c.facts} {
			if known == nil {
				continue
			}
			if value, ok := known.get(ref); ok {
				return value, value == nil
			}
		}
		if value, undefined, ok := c.prev.get(ref); ok {
			return value, undefined
		}
		if h, projection, ok := c.call(ref); ok {
			if value, ok := c.fmemo.get(h, ref, projection); ok {
				return value, false
			}
		}
	}
	return c.inner.Get(ref)
}

func (c *reuseCache) Put(ref ast.Ref, value *ast.Term) {
	c.inner.Put(ref, value)
	if c.depth == 0 && value != nil {
		if h, projection, ok := c.call(ref); ok {
			key := append(ast.Ref(nil), ref...) // topdown reuses its key's slice
			c.pending = append(c.pending, pendingCall{hash: h, entry: funcEntry{key: key, projection: projection, value: value}})
		}
	}
}

// call says whether ref is the key of a call whose result may be kept
// across evaluations, with the hash and the projection it is kept under.
func (c *reuseCache) call(ref ast.Ref) (int, string, bool) {
	if c.fmemo == nil {
		return 0, "", false
	}
	f, ok := lookupPure(c.funcs, ref)
	if !ok || !ref.IsGround() {
		return 0, "", false
	}
	h := ref.Hash()
	if !f.readsInput {
		return h, "", true
	}
	if !c.projDone {
		c.projDone = true
		if obj, ok := c.input.(ast.Object); ok {
			var buf [1024]byte
			if enc, err := appendProjection(buf[:0], c.factPaths, obj); err == nil {
				sum := sha256.Sum256(enc)
				c.projection = string(sum[:])
				c.projHash = ast.String(c.projection).Hash()
			}
		}
	}
	if c.projection == "" {
		return 0, "", false // no projection: never kept
	}
	return h ^ c.projHash, c.projection, true
}
func (c *reuseCache) Keys() []ast.Ref { return c.inner.Keys() }

// Analysis is what one compiled policy lets its evaluations reuse: its
// constants, its session facts per projection of the input, and the rules
// a decision's later round may take from the one before. It is built once
// when the policy is compiled and shared by every evaluation under it.
type Analysis struct {
	consts *ruleValues
	facts  *sessionFacts
	stable *ruleValues
	paths  Paths
	// funcs are the functions whose results are kept across evaluations
	// in fmemo (funcs.go).
	funcs map[int][]pureFunction
	fmemo *funcMemo
}

// Analyse finds the reusable rules of a compiled policy over its data
// store and evaluates its constants. An error means the policy must not
// be activated (its constants could not be evaluated at all).
func Analyse(ctx context.Context, compiler *ast.Compiler, store storage.Store, paths Paths) (*Analysis, error) {
	consts, err := findConstants(ctx, compiler, store, paths)
	if err != nil {
		return nil, err
	}
	facts, err := newSessionFacts(compiler, store, consts, paths)
	if err != nil {
		return nil, err
	}
	return &Analysis{consts: consts, facts: facts, stable: roundStable(compiler, paths), paths: paths,
		funcs: pureFunctions(compiler, paths), fmemo: newFuncMemo(0)}, nil
}

// Eval is the virtual-document cache of one evaluation of an input: the
// policy's constants, the session facts of the input's projection and, in
// a later round, the round before.
type Eval struct {
	stable *ruleValues
	cache  *reuseCache
}

// Start gives one evaluation of input its cache; prev is the previous
// round of the same decision (nil for a first evaluation).
func (a *Analysis) Start(ctx context.Context, input ast.Value, prev *Round) Eval {
	cache := newReuseCache(a.consts, a.facts.of(ctx, input))
	cache.prev = prev
	if len(a.funcs) > 0 {
		cache.funcs, cache.fmemo, cache.input, cache.factPaths = a.funcs, a.fmemo, input, a.paths.Facts
	}
	return Eval{stable: a.stable, cache: cache}
}

// Forget drops what evaluations kept under this policy — the function
// results and the session facts — as if it had just been compiled; its
// constants stay. Measurements use it to start every round cold.
func (a *Analysis) Forget() {
	a.fmemo.forget()
	a.facts.forget()
}

// SetFuncMemoBytes bounds the memory the results of functions kept
// across evaluations may hold (0: DefaultFuncMemoBytes).
func (a *Analysis) SetFuncMemoBytes(limit int64) { a.fmemo.setLimit(limit) }

// Commit keeps what this evaluation computed that later evaluations may
// reuse. Call it only when the evaluation ended without an error.
func (e Eval) Commit() {
	c := e.cache
	for _, p := range c.pending {
		c.fmemo.put(p.hash, p.entry)
	}
	c.pending = nil
}

// Next is what a later round of the same decision may take from this one.
func (e Eval) Next() *Round {
	return &Round{stable: e.stable, cache: e.cache.inner}
}

// VirtualCache is the cache for a topdown query.
func (e Eval) VirtualCache() topdown.VirtualCache { return e.cache }

// Option hands the cache to OPA's evaluation.
func (e Eval) Option() rego.EvalOption { return rego.EvalVirtualCache(e.cache) }
