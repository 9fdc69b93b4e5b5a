package evalcache

import (
	"context"

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
	}
	return c.inner.Get(ref)
}

func (c *reuseCache) Put(ref ast.Ref, value *ast.Term) { c.inner.Put(ref, value) }
func (c *reuseCache) Keys() []ast.Ref                  { return c.inner.Keys() }

// Analysis is what one compiled policy lets its evaluations reuse: its
// constants, its session facts per projection of the input, and the rules
// a decision's later round may take from the one before. It is built once
// when the policy is compiled and shared by every evaluation under it.
type Analysis struct {
	consts *ruleValues
	facts  *sessionFacts
	stable *ruleValues
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
	return &Analysis{consts: consts, facts: facts, stable: roundStable(compiler, paths)}, nil
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
	return Eval{stable: a.stable, cache: cache}
}

// Next is what a later round of the same decision may take from this one.
func (e Eval) Next() *Round {
	return &Round{stable: e.stable, cache: e.cache.inner}
}

// Option hands the cache to OPA's evaluation.
func (e Eval) Option() rego.EvalOption { return rego.EvalVirtualCache(e.cache) }
