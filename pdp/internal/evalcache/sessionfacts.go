package evalcache

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Session facts are the rules whose value depends, besides the policy's
// data, only on the call's capability and its session's settings: the
// parts of the input named by Paths.Facts. Which capability a tool
// maps to, each rule layer's most specific pattern, the strictest of
// them, whether the capability is dangerous, on the ask-always list or
// in a sub-agent's scope: the same for every call of one tool in one
// kind of session, whatever its arguments, command or paths. The engine
// evaluates them once per such projection of the input, and every
// evaluation whose input has the same projection finds them in its
// virtual-document cache, as it finds the constants (constants.go).
//
// A rule is a session fact only when every input reference it (and every
// rule and function it reaches) makes starts with one of these paths: a
// rule that reads input.session whole, or any other part of the input,
// is evaluated in every evaluation as before.

// sessionFactsEntries bounds how many projections are remembered, and how
// many met once are (their keys alone); past it each set starts again. A
// projection whose encoding is larger than sessionFactsMaxBytes (a
// session with very many rules) is never computed apart: every call with
// it evaluates its facts itself. The cache holds at most about
// entries × that.
const (
	sessionFactsEntries  = 1024
	sessionFactsMaxBytes = 16 << 10
)

// sessionFacts remembers a policy's session facts per projection. They
// are computed apart: the second call with a projection evaluates all of
// them in a query of their own whose input is the projection alone, so
// no other rule of any call can touch what is remembered (an
// evaluation's own cache can hold documents part-built by rules a fact
// never reads; analysis.go). That call then finds them as every later one
// does; the first evaluates them itself, as OPA would.
type sessionFacts struct {
	refs     []ast.Ref
	vars     []ast.Var
	query    ast.Body
	compiler *ast.Compiler
	store    storage.Store
	consts   *ruleValues
	paths    []ast.Ref

	mu    sync.Mutex
	known map[[sha256.Size]byte]*ruleValues
	// seen are projections met once: their facts are computed apart the
	// second time (of).
	seen map[[sha256.Size]byte]struct{}
}

func newSessionFacts(compiler *ast.Compiler, store storage.Store, consts *ruleValues, paths Paths) (*sessionFacts, error) {
	f := &sessionFacts{compiler: compiler, store: store, consts: consts, paths: paths.Facts, known: map[[sha256.Size]byte]*ruleValues{},
		seen: map[[sha256.Size]byte]struct{}{}}
	f.refs = precomputable(compiler, paths, func(d deps) bool { return !d.varies && d.readsInput && !d.beyondFacts && !d.general })
	if len(f.refs) == 0 {
		return f, nil
	}
	body := ast.NewBody()
	for i, ref := range f.refs {
		// __factN = [x | x = ref]: one element, or none when undefined.
		v, x := ast.Var("__fact"+strconv.Itoa(i)), ast.VarTerm("__x"+strconv.Itoa(i))
		f.vars = append(f.vars, v)
		compr := ast.ArrayComprehensionTerm(x, ast.NewBody(ast.Equality.Expr(x, ast.NewTerm(ref))))
		body.Append(ast.Equality.Expr(ast.NewTerm(v), compr))
	}
	query, err := compiler.QueryCompiler().Compile(body)
	if err != nil {
		return nil, fmt.Errorf("the session facts: %w", err)
	}
	f.query = query
	return f, nil
}

func (f *sessionFacts) forget() {
	if f == nil {
		return
	}
	f.mu.Lock()
	clear(f.known)
	clear(f.seen)
	f.mu.Unlock()
}

// of returns the session facts of input's projection, remembered or
// evaluated now. Nil when there are none, when the input cannot be
// projected or when they cannot be evaluated apart: the evaluation then
// evaluates them itself, and any error it meets ends in a deny.
func (f *sessionFacts) of(ctx context.Context, input ast.Value) *ruleValues {
	if f == nil || f.query == nil {
		return nil
	}
	obj, ok := input.(ast.Object)
	if !ok {
		return nil
	}
	var buf [1024]byte
	enc, err := appendProjection(buf[:0], f.paths, obj)
	if err != nil {
		return nil
	}
	key := sha256.Sum256(enc)
	if len(enc) > sessionFactsMaxBytes {
		return nil // never remembered, so never worth computing apart
	}
	f.mu.Lock()
	facts := f.known[key]
	firstSight := false
	if facts == nil {
		if _, seen := f.seen[key]; !seen {
			if len(f.seen) >= sessionFactsEntries {
				clear(f.seen)
			}
			f.seen[key] = struct{}{}
			firstSight = true
		}
	}
	f.mu.Unlock()
	if facts != nil || firstSight {
		// The first call with a projection evaluates its facts itself, as
		// OPA would: computing them apart pays only when they are found
		// again, and a stream in which no session's settings repeat would
		// pay for it on every call.
		return facts
	}
	if facts = f.evaluate(ctx, project(f.paths, obj)); facts != nil {
		f.mu.Lock()
		if len(f.known) >= sessionFactsEntries {
			clear(f.known)
		}
		f.known[key] = facts
		delete(f.seen, key)
		f.mu.Unlock()
	}
	return facts
}

// evaluate computes every session fact on the projection alone.
func (f *sessionFacts) evaluate(ctx context.Context, projection ast.Object) *ruleValues {
	txn, err := f.store.NewTransaction(ctx)
	if err != nil {
		return nil
	}
	defer f.store.Abort(ctx, txn)
	rs, err := topdown.NewQuery(f.query).WithCompiler(f.compiler).WithStore(f.store).WithTransaction(txn).
		WithInput(ast.NewTerm(projection)).WithVirtualCache(newReuseCache(f.consts, nil)).Run(ctx)
	if err != nil || len(rs) != 1 {
		return nil
	}
	facts := &ruleValues{}
	for i, ref := range f.refs {
		arr, ok := rs[0][f.vars[i]].Value.(*ast.Array)
		if !ok || arr.Len() > 1 {
			return nil
		}
		var value *ast.Term
		if arr.Len() == 1 {
			value = arr.Elem(0)
		}
		if facts.put(ref, value) {
			facts.rules++
		}
	}
	return facts
}

// project copies the parts of input named by paths.
func project(paths []ast.Ref, input ast.Object) ast.Object {
	out := ast.NewObject()
	for _, path := range paths {
		v, err := input.Find(path[1:])
		if err != nil {
			continue
		}
		node := out
		for i, step := range path[1:] {
			if i == len(path)-2 {
				node.Insert(step, ast.NewTerm(v))
				break
			}
			var child ast.Object
			if next := node.Get(step); next != nil {
				child, _ = next.Value.(ast.Object)
			}
			if child == nil {
				child = ast.NewObject()
				node.Insert(step, ast.NewTerm(child))
			}
			node = child
		}
	}
	return out
}

// appendProjection encodes the parts of input named by paths:
// each present path's index, then its value's encoding (appendKey), so
// two inputs encode the same exactly when they agree on every path.
func appendProjection(b []byte, paths []ast.Ref, input ast.Object) ([]byte, error) {
	for i, path := range paths {
		v, err := input.Find(path[1:])
		if err != nil {
			continue // not there
		}
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '=')
		if b, err = appendKey(b, v); err != nil {
			return b, err
		}
	}
	return b, nil
}
