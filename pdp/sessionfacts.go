package pdp

import (
	"crypto/sha256"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Session facts are the rules whose value depends, besides the policy's
// data, only on the call's capability and its session's settings: the
// parts of the input named by sessionFactPaths. Which capability a tool
// maps to, each rule layer's most specific pattern, the strictest of
// them, whether the capability is dangerous, on the ask-always list or
// in a sub-agent's scope: the same for every call of one tool in one
// kind of session, whatever its arguments, command or paths. The engine
// remembers them per such projection of the input, and every evaluation
// whose input has the same projection finds them in its
// virtual-document cache, as it finds the constants (constants.go).
//
// A rule is a session fact only when every input reference it (and every
// rule and function it reaches) makes starts with one of these paths: a
// rule that reads input.session whole, or any other part of the input,
// is evaluated in every evaluation as before.
var sessionFactPaths = []ast.Ref{
	ast.MustParseRef("input.tool"),
	ast.MustParseRef("input.action"),
	ast.MustParseRef("input.capability"),
	ast.MustParseRef("input.shell.parsed"),
	ast.MustParseRef("input.session.rules"),
	ast.MustParseRef("input.session.permission_level"),
	ast.MustParseRef("input.session.execution_mode"),
	ast.MustParseRef("input.session.mode"),
	ast.MustParseRef("input.session.scope"),
	ast.MustParseRef("input.session.has_parent"),
}

func withinFacts(ref ast.Ref) bool {
	for _, p := range sessionFactPaths {
		if ref.HasPrefix(p) {
			return true
		}
	}
	return false
}

// sessionFactsEntries bounds how many projections are remembered; past it
// the cache starts again. A projection whose encoding is larger than
// sessionFactsMaxBytes (a session with very many rules) is evaluated but
// not remembered, so the cache holds at most about entries × that.
const (
	sessionFactsEntries  = 1024
	sessionFactsMaxBytes = 16 << 10
)

// sessionFacts remembers a policy's session facts per projection. They
// are learnt, not computed apart: an evaluation that finds none for its
// projection evaluates them as it would anyway, and what it computed is
// read from its virtual-document cache afterwards. The first call of a
// tool in a new kind of session costs what it always did; the calls
// after it find the facts it computed.
type sessionFacts struct {
	refs []ast.Ref

	mu    sync.Mutex
	known map[factsKey]*ruleValues
}

// factsKey identifies a projection: the SHA-256 of its encoding.
type factsKey struct {
	sum      [sha256.Size]byte
	remember bool // false for a projection over sessionFactsMaxBytes
}

func newSessionFacts(compiler *ast.Compiler) *sessionFacts {
	return &sessionFacts{
		refs:  precomputable(compiler, func(d deps) bool { return !d.varies && d.readsInput && !d.beyondFacts && !d.general }),
		known: map[factsKey]*ruleValues{},
	}
}

// lookup returns the facts known for input's projection (nil when none
// are) and the projection's key, for learn; ok is false when the input
// cannot be projected (the evaluation then goes without facts).
func (f *sessionFacts) lookup(input ast.Value) (*ruleValues, factsKey, bool) {
	if f == nil || len(f.refs) == 0 {
		return nil, factsKey{}, false
	}
	obj, ok := input.(ast.Object)
	if !ok {
		return nil, factsKey{}, false
	}
	var buf [1024]byte
	enc, err := appendProjection(buf[:0], obj)
	if err != nil {
		return nil, factsKey{}, false
	}
	key := factsKey{sum: sha256.Sum256(enc), remember: len(enc) <= sessionFactsMaxBytes}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[key], key, true
}

// learn records the session facts a successful evaluation computed (in
// cache) for the projection key, beside those already known.
func (f *sessionFacts) learn(key factsKey, cache *reuseCache) {
	if !key.remember {
		return
	}
	var computed []ast.Ref
	var values []*ast.Term
	for _, ref := range f.refs {
		if cache.facts != nil {
			if _, known := cache.facts.get(ref); known {
				continue
			}
		}
		value, undefined := cache.inner.Get(ref)
		if value == nil && !undefined {
			continue // not evaluated this time
		}
		computed, values = append(computed, ref), append(values, value)
	}
	if len(computed) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	facts := &ruleValues{}
	if old := f.known[key]; old != nil {
		facts = old.clone()
	} else if len(f.known) >= sessionFactsEntries {
		clear(f.known)
	}
	for i, ref := range computed {
		if _, known := facts.get(ref); !known && facts.put(ref, values[i]) {
			facts.rules++
		}
	}
	f.known[key] = facts
}

// appendProjection encodes the parts of input named by sessionFactPaths:
// each present path's index, then its value's encoding (appendKey), so
// two inputs encode the same exactly when they agree on every path.
func appendProjection(b []byte, input ast.Object) ([]byte, error) {
	for i, path := range sessionFactPaths {
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
