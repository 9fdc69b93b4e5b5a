package evalcache

import (
	"maps"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// What an evaluation reuses — the constants (constants.go), the session
// facts (sessionfacts.go), a decision's earlier round (rounds.go) — rests
// on three pieces kept here: the analysis that finds which rules may be
// reused (precomputable), the tree their values are kept in (ruleValues),
// and the virtual-document cache that serves them to an evaluation
// (reuseCache, cache.go).

// Paths names the parts of the input document the analysis judges rules
// by; the engine that builds the document passes them.
type Paths struct {
	// Facts are the parts that depend only on the call's capability and
	// its session's settings: a rule that reads nothing else of the input
	// is a session fact (sessionfacts.go).
	Facts []ast.Ref
	// Late are the parts added to the input between rounds of one
	// decision (rounds.go).
	Late []ast.Ref
}

// withinFacts says whether a reference with this ground prefix reads
// only the session facts' part of the input.
func (p Paths) withinFacts(ground ast.Ref) bool {
	for _, f := range p.Facts {
		if ground.HasPrefix(f) {
			return true
		}
	}
	return false
}

// mayReadLate says whether a reference with this ground prefix may read
// something Late names: it starts with one, or is a prefix of one (input
// whole).
func (p Paths) mayReadLate(ground ast.Ref) bool {
	for _, l := range p.Late {
		if ground.HasPrefix(l) || l.HasPrefix(ground) {
			return true
		}
	}
	return false
}

// precomputable lists the references of the rules whose dependencies
// keep: a document is judged by every rule that may give it a value
// (its definitions with their else branches and default, rules with a
// general head that may produce its key, rules below it) and by every
// rule their bodies may reach.
// Functions (their value depends on their arguments) and partial rules'
// keys are never listed.
func precomputable(compiler *ast.Compiler, paths Paths, keep func(deps) bool) []ast.Ref {
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
	depsOf := newDepsOf(compiler, paths)
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
			all = all.with(depsOf(r))
		}
		if keep(all) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// newDepsOf returns what a rule (with every rule its body may reach)
// depends on, each rule analysed once.
func newDepsOf(compiler *ast.Compiler, paths Paths) func(*ast.Rule) deps {
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
		d := ruleDeps(compiler, paths, r, func(dep *ast.Rule) deps { return depsOf(dep, visiting) })
		delete(visiting, r)
		known[r] = d
		return d
	}
	return func(r *ast.Rule) deps { return depsOf(r, map[*ast.Rule]bool{}) }
}

// deps summarises what a rule's value may depend on besides the
// policy's data.
type deps struct {
	// varies: it uses `with` or a nondeterministic builtin (time,
	// random, HTTP), so its value is never precomputed.
	varies bool
	// readsInput: it reads the input document.
	readsInput bool
	// beyondFacts: it reads the input outside Paths.Facts.
	beyondFacts bool
	// readsLateFacts: it may read what the engine adds to the input
	// between rounds (Paths.Late).
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
func ruleDeps(compiler *ast.Compiler, paths Paths, r *ast.Rule, depsOf func(*ast.Rule) deps) deps {
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
			if !paths.withinFacts(ground) {
				d.beyondFacts = true
			}
			if paths.mayReadLate(ground) {
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
