package evalcache

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// An answer may take more than one evaluation: when the policy says it
// needs the parent's decision or the danger verdict, the engine adds it
// to the input and evaluates again. Every rule that cannot
// read what was added has the same value in the next evaluation: the
// next round reads it from the previous round's virtual-document cache
// instead of evaluating it again. A rule that reads the input whole (a
// reference to `input` itself, or one the analysis cannot pin down) is
// evaluated again. Paths.Late names what is added.

// roundStable lists the rules a later round may take from an earlier
// one's cache (a set: every entry known, no value).
func roundStable(compiler *ast.Compiler, paths Paths) *ruleValues {
	set := &ruleValues{}
	for _, ref := range precomputable(compiler, paths, func(d deps) bool { return !d.varies && !d.readsLateFacts && !d.general }) {
		if set.put(ref, nil) {
			set.rules++
		}
	}
	return set
}

// Round is the previous round's cache of one decision's evaluation,
// with the rules it may answer.
type Round struct {
	stable *ruleValues
	cache  topdown.VirtualCache
}

// get answers ref from the previous round when ref is a stable rule that
// round evaluated.
func (e *Round) get(ref ast.Ref) (*ast.Term, bool, bool) {
	if e == nil || e.cache == nil {
		return nil, false, false
	}
	if _, ok := e.stable.get(ref); !ok {
		return nil, false, false
	}
	value, undefined := e.cache.Get(ref)
	return value, undefined, value != nil || undefined
}
