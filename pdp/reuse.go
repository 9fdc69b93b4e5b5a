package pdp

import (
	"context"
	"maps"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// What the engine reuses between evaluations — the constants
// (constants.go), the session facts (sessionfacts.go), a decision's
// earlier round (rounds.go) — rests on three pieces kept here: the
// analysis that finds which rules may be reused (precomputable), the
// tree their values are kept in (ruleValues), and the virtual-document
// cache that serves them to an evaluation (reuseCache).

// precomputable lists the references of the rules whose dependencies
// keep: a document is judged by every rule that may give it a value
// (its definitions with their else branches and default, rules with a
// general head that may produce its key, rules below it) and by every
// rule their bodies may reach.
// Functions (their value depends on their arguments) and partial rules'
// keys are never listed.
func precomputable(compiler *ast.Compiler, keep func(deps) bool) []ast.Ref {
	seen := map[string]bool{}
	var order []ast.Ref
	for _, name := range slices.Sorted(maps.Keys(compiler.Modules)) {
		ast.WalkRules(compiler.Modules[name], func(r *ast.Rule) bool {
			if ref := r.Ref(); !seen[ref.String()] {
				seen[ref.String()] = true
				order = append(order, ref)
			}
			return false
		})
	}
	known := map[*ast.Rule]deps{}
	var depsOf func(r *ast.Rule, visiting map[*ast.Rule]bool) deps
	depsOf = func(r *ast.Rule, visiting map[*ast.Rule]bool) deps {
		if d, ok := known[r]; ok {
			return d
		}
		if visiting[r] {
			return deps{varies: true} // recursion is a compile error; never precomputed
		}
		visiting[r] = true
		d := ruleDeps(compiler, r, func(dep *ast.Rule) deps { return depsOf(dep, visiting) })
		delete(visiting, r)
		known[r] = d
		return d
	}
	var refs []ast.Ref
	for _, ref := range order {
		if !ref.IsGround() {
			continue // a head with a variable key: a partial rule's key, not a document
		}
		// Every rule that may give the document at ref a value: its own
		// definitions, a rule with a general head (a[x]) that may produce
		// the key, and any rule below it. Topdown builds and caches the
		// document from all of them.
		var all deps
		for _, r := range compiler.GetRulesDynamicWithOpts(ref, ast.RulesOptions{IncludeHiddenModules: true}) {
			if !r.Ref().Equal(ref) {
				all.general = true
			}
			if len(r.Head.Args) > 0 {
				all.varies = true
				break
			}
			all = all.with(depsOf(r, map[*ast.Rule]bool{}))
		}
		if keep(all) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// deps summarises what a rule's value may depend on besides the
// policy's data.
type deps struct {
	// varies: it uses `with` or a nondeterministic builtin (time,
	// random, HTTP), so its value is never precomputed.
	varies bool
	// readsInput: it reads the input document.
	readsInput bool
	// beyondFacts: it reads the input outside sessionFactPaths.
	beyondFacts bool
	// readsLateFacts: it may read what the engine adds to the input
	// between rounds (latePaths).
	readsLateFacts bool
	// general: it is a document that rules of another reference build
	// (a general head, a rule below it), or it reads a rule with two or
	// more steps from its first variable key on (keysFromFirstVariable:
	// a[k][m][n], a[k].c contains v). Topdown may cache such a document
	// part-built under a ground reference — a lookup a.b[x][x] stores the
	// diagonal it found at a.b — so a value read from an evaluation's
	// cache (session facts, later rounds) is trusted only for rules that
	// reach no such rule. With one step (part_stops[i]) a lookup is
	// either that key or the whole document. Constants are safe: each
	// comes from a query of its own.
	general bool
}

func (d deps) with(o deps) deps {
	return deps{
		varies:         d.varies || o.varies,
		readsInput:     d.readsInput || o.readsInput,
		beyondFacts:    d.beyondFacts || o.beyondFacts,
		readsLateFacts: d.readsLateFacts || o.readsLateFacts,
		general:        d.general || o.general,
	}
}

// ruleDeps summarises r (with its else branches) and every rule its
// references may reach (depsOf).
func ruleDeps(compiler *ast.Compiler, r *ast.Rule, depsOf func(*ast.Rule) deps) deps {
	var d deps
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		if len(e.With) > 0 {
			d.varies = true
		}
		if e.IsCall() && variesByItself(e.Operator().String()) {
			d.varies = true
		}
		return d.varies
	})
	if d.varies {
		return d
	}
	ast.WalkRefs(r, func(ref ast.Ref) bool {
		switch {
		case ref.HasPrefix(ast.InputRootRef):
			d.readsInput = true
			ground := ref.GroundPrefix()
			if !withinFacts(ground) {
				d.beyondFacts = true
			}
			if mayReadLate(ground) {
				d.readsLateFacts = true
			}
		case ref.HasPrefix(ast.DefaultRootRef):
			for _, dep := range compiler.GetRulesDynamicWithOpts(ref, ast.RulesOptions{IncludeHiddenModules: true}) {
				if dep == r {
					d.varies = true
					continue
				}
				if keysFromFirstVariable(dep) >= 2 {
					d.general = true
				}
				d = d.with(depsOf(dep))
			}
		default:
			// A builtin's name in call position: nondeterministic ones
			// are caught above, also where they are referred to as values.
			if variesByItself(ref.String()) {
				d.varies = true
			}
		}
		return d.varies
	})
	return d
}

// keysFromFirstVariable counts the steps of a rule's document from its
// first variable key on, a multi-value rule's element counting as one:
// a[k] 1, a[k].c 2, a[k][m] 2, a[k].c contains v 3; 0 for a ground
// reference, 1 for a ground multi-value rule. From two on, a lookup may
// fix the first and repeat a variable over the rest (a.x[y][y]), and
// topdown caches what that finds as the whole of a.x.
func keysFromFirstVariable(r *ast.Rule) int {
	ref := r.Ref()
	n := len(ref) - len(ref.GroundPrefix())
	if r.Head.RuleKind() == ast.MultiValue {
		n++
	}
	return n
}

// timeDependent are builtins whose answer depends on the time of the
// call although OPA does not mark them nondeterministic: they verify
// certificates against the current time.
var timeDependent = map[string]bool{
	"crypto.x509.parse_and_verify_certificates":              true,
	"crypto.x509.parse_and_verify_certificates_with_options": true,
}

// variesByItself says whether the builtin name may answer differently
// for the same arguments: OPA's nondeterministic ones and timeDependent.
func variesByItself(name string) bool {
	if timeDependent[name] {
		return true
	}
	b, ok := ast.BuiltinMap[name]
	return ok && b.Nondeterministic
}

// ruleValues holds values of rules by reference: the constants of a
// policy, the session facts of a projection, or (values unused) a set
// of rules.
type ruleValues struct {
	root valueNode
	// rules counts the references known, for the tests and docs.
	rules int
}

// valueNode is one step of a reference (data, then string keys).
type valueNode struct {
	children map[string]*valueNode
	// known: this reference is a rule whose value is known; value is
	// nil when that value is undefined.
	known bool
	value *ast.Term
}

// put records the value of the rule at ref; false when ref cannot be a
// key (a step that is not a string).
func (c *ruleValues) put(ref ast.Ref, value *ast.Term) bool {
	node := &c.root
	for i, t := range ref {
		k, ok := refKey(i, t)
		if !ok {
			return false
		}
		if node.children == nil {
			node.children = map[string]*valueNode{}
		}
		next := node.children[k]
		if next == nil {
			next = &valueNode{}
			node.children[k] = next
		}
		node = next
	}
	node.known, node.value = true, value
	return true
}

// get returns the value at ref (nil when undefined) and whether ref is
// known at all.
func (c *ruleValues) get(ref ast.Ref) (*ast.Term, bool) {
	node := &c.root
	for i, t := range ref {
		k, ok := refKey(i, t)
		if !ok {
			return nil, false
		}
		if node = node.children[k]; node == nil {
			return nil, false
		}
	}
	return node.value, node.known
}

// refKey is a reference step as a map key: the root variable first, then
// strings; anything else is no rule's.
func refKey(i int, t *ast.Term) (string, bool) {
	switch v := t.Value.(type) {
	case ast.Var:
		return string(v), i == 0
	case ast.String:
		return string(v), i > 0
	}
	return "", false
}

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
	prev  *earlier
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

// evalCache is the virtual-document cache of one evaluation of input:
// the policy's constants, the session facts of input's projection and,
// in a later round, the round before (constants.go, sessionfacts.go,
// rounds.go).
type evalCache struct {
	stable *ruleValues
	cache  *reuseCache
}

func (p *Policy) newEvalCache(ctx context.Context, input ast.Value, prev *earlier) evalCache {
	cache := newReuseCache(p.consts, p.facts.of(ctx, input))
	cache.prev = prev
	return evalCache{stable: p.stable, cache: cache}
}

// next is what a later round of the same decision may take from this one.
func (c evalCache) next() *earlier {
	return &earlier{stable: c.stable, cache: c.cache.inner}
}

func (c evalCache) option() rego.EvalOption { return rego.EvalVirtualCache(c.cache) }
