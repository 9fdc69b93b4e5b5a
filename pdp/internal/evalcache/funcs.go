package evalcache

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Calls that repeat inside calls that never do. A policy's functions are
// called with parts of the input as arguments — a session's command rules,
// one part of a compound command, one path — and those parts repeat
// across calls whose documents as a whole never do: the same session's
// rules for thousands of calls, `go test ./...` inside many compound
// commands. Topdown caches a function's result per evaluation, keyed by
// the function and its arguments; a function whose value depends only on
// its arguments, the policy's data and the session-fact parts of the
// input (Paths.Facts) has the same value in every evaluation under one
// policy with the same arguments and the same projection of the input, so
// its results are kept across evaluations too (funcMemo), bounded in
// bytes. A function that reads any other part of the input, a
// nondeterministic builtin, `with`, or a document topdown may cache
// part-built (deps.general) is never kept.
//
// What one evaluation computed is kept only when that evaluation ends
// without an error (Eval.Commit): topdown records a function's first
// result before it has checked every definition, and a conflict found
// later aborts the evaluation.

// pureFunction is a function whose results may be kept across
// evaluations.
type pureFunction struct {
	ref ast.Ref
	// readsInput: its value also depends on the session-fact parts of the
	// input, so the projection is part of the key.
	readsInput bool
}

// pureFunctions finds the functions of a compiled policy whose results
// may be kept, indexed by the hash of their reference.
func pureFunctions(compiler *ast.Compiler, paths Paths) map[int][]pureFunction {
	seen := map[string]bool{}
	var refs []ast.Ref
	for _, name := range slices.Sorted(maps.Keys(compiler.Modules)) {
		ast.WalkRules(compiler.Modules[name], func(r *ast.Rule) bool {
			if ref := r.Ref(); len(r.Head.Args) > 0 && ref.IsGround() && !seen[ref.String()] {
				seen[ref.String()] = true
				refs = append(refs, ref)
			}
			return false
		})
	}
	depsOf := newDepsOf(compiler, paths)
	out := map[int][]pureFunction{}
	for _, ref := range refs {
		var all deps
		for _, r := range compiler.GetRulesDynamicWithOpts(ref, ast.RulesOptions{IncludeHiddenModules: true}) {
			if !r.Ref().Equal(ref) || len(r.Head.Args) == 0 {
				all.general = true // a function and a document share the reference
			}
			all = all.with(depsOf(r))
		}
		if all.varies || all.beyondFacts || all.readsLateFacts || all.general {
			continue
		}
		h := ref.Hash()
		out[h] = append(out[h], pureFunction{ref: ref, readsInput: all.readsInput})
	}
	return out
}

// lookup returns the function a call's key (its reference, then its
// arguments) names, when its results may be kept.
func lookupPure(index map[int][]pureFunction, key ast.Ref) (pureFunction, bool) {
	if len(key) < 2 {
		return pureFunction{}, false
	}
	fn, ok := key[0].Value.(ast.Ref)
	if !ok {
		return pureFunction{}, false // a rule's document, not a call
	}
	for _, f := range index[fn.Hash()] {
		if f.ref.Equal(fn) {
			return f, true
		}
	}
	return pureFunction{}, false
}

// funcMemo keeps function results across the evaluations of one policy.
// Like the memo of whole answers it holds two generations per shard and
// drops the older when the newer is over its share of the budget.
type funcMemo struct {
	limit  atomic.Int64
	shards [memoShards]funcShard
}

type funcShard struct {
	mu                sync.Mutex
	current, previous map[int][]funcEntry
	currentBytes      int64
}

// funcEntry is one call's result: the call's key (the function and its
// arguments), the projection of the input it was computed under ("" for a
// function that does not read the input) and its value.
type funcEntry struct {
	key        ast.Ref
	projection string
	value      *ast.Term
}

// maxBucket bounds the entries of one generation that share a hash, so
// arguments made to collide cost a few comparisons per call, never a scan
// of many.
const maxBucket = 4

// DefaultFuncMemoBytes is the function memo's budget when none is set.
const DefaultFuncMemoBytes = 32 << 20

func newFuncMemo(limit int64) *funcMemo {
	m := &funcMemo{}
	m.setLimit(limit)
	for i := range m.shards {
		m.shards[i].current = map[int][]funcEntry{}
	}
	return m
}

func (m *funcMemo) setLimit(limit int64) {
	if limit <= 0 {
		limit = DefaultFuncMemoBytes
	}
	m.limit.Store(limit)
}

func (m *funcMemo) forget() {
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		s.current, s.previous, s.currentBytes = map[int][]funcEntry{}, nil, 0
		s.mu.Unlock()
	}
}

func (m *funcMemo) shard(h int) *funcShard { return &m.shards[uint(h)%memoShards] }

func (m *funcMemo) get(h int, key ast.Ref, projection string) (*ast.Term, bool) {
	s := m.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, gen := range [2]map[int][]funcEntry{s.current, s.previous} {
		for _, e := range gen[h] {
			if e.projection == projection && e.key.Equal(key) {
				return e.value, true
			}
		}
	}
	return nil, false
}

func (m *funcMemo) put(h int, e funcEntry) {
	size := int64(len(e.projection)) + termBytes(e.value) + 64
	for _, t := range e.key {
		size += termBytes(t)
	}
	budget := max(m.limit.Load()/(2*memoShards), 1)
	if size > budget {
		return
	}
	s := m.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.current[h]) >= maxBucket {
		return // calls whose keys share a hash are compared one by one: a few at most
	}
	for _, old := range s.current[h] {
		if old.projection == e.projection && old.key.Equal(e.key) {
			return
		}
	}
	if s.currentBytes+size > budget {
		s.previous, s.current, s.currentBytes = s.current, map[int][]funcEntry{}, 0
	}
	s.current[h] = append(s.current[h], e)
	s.currentBytes += size
}

// termBytes estimates what a term keeps alive: its strings and a fixed
// cost per node.
func termBytes(t *ast.Term) int64 {
	s := sizers.Get().(*sizer)
	s.n = 0
	s.term(t)
	n := s.n
	sizers.Put(s)
	return n
}

// sizer sums termBytes over a term's nodes; visit and visitSet are its
// methods as values, made once per sizer (sizers keeps them), so walking
// an object or a set allocates nothing.
type sizer struct {
	n        int64
	visit    func(k, x *ast.Term)
	visitSet func(x *ast.Term)
}

var sizers = sync.Pool{New: func() any {
	s := &sizer{}
	s.visit, s.visitSet = s.add, s.term
	return s
}}

func (s *sizer) add(k, x *ast.Term) { s.term(k); s.term(x) }

func (s *sizer) term(t *ast.Term) {
	if t == nil {
		return
	}
	s.n += 48
	switch v := t.Value.(type) {
	case ast.String:
		s.n += int64(len(v))
	case ast.Number:
		s.n += int64(len(v))
	case ast.Ref:
		for _, e := range v {
			s.term(e)
		}
	case *ast.Array:
		for i := 0; i < v.Len(); i++ {
			s.term(v.Elem(i))
		}
	case ast.Object:
		v.Foreach(s.visit)
	case ast.Set:
		v.Foreach(s.visitSet)
	default:
		s.n += 64
	}
}
