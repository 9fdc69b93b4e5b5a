package pdp

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// A policy's constants are its rules whose value depends on its data
// alone: no reference to the input, no function (a function's value
// depends on its arguments), no nondeterministic builtin (time, random,
// HTTP), no `with`, and nothing they depend on has any of these. The
// lower-cased program lists of data.shell or the policy's command table
// are such rules: the same for every call under one policy, yet topdown
// evaluates them again in every evaluation. The engine evaluates them
// once, when the policy is compiled, and every evaluation finds them in
// its virtual-document cache (constantCache). The policy's text does not
// change: `opa test` and `opa run` evaluate the same rules the usual way.

// constants holds the values of a policy's constant rules by reference.
type constants struct {
	root constNode
	// rules counts the rules found constant, for the tests and docs.
	rules int
}

// constNode is one step of a reference (data, then string keys).
type constNode struct {
	children map[string]*constNode
	// known: this reference is a constant rule; value is nil when its
	// value is undefined.
	known bool
	value *ast.Term
}

// findConstants evaluates every constant rule of the compiled policy
// once. A rule whose evaluation fails is left to each evaluation, where
// its error ends in a deny as any other.
func findConstants(ctx context.Context, compiler *ast.Compiler, store storage.Store) (*constants, error) {
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Abort(ctx, txn)
	c := &constants{}
	result := ast.VarTerm("x")
	for _, ref := range constantRefs(compiler) {
		// The value as topdown holds it (a set stays a set), not as JSON.
		query, err := compiler.QueryCompiler().Compile(ast.NewBody(ast.Equality.Expr(result, ast.NewTerm(ref))))
		if err != nil {
			return nil, fmt.Errorf("the constant %v: %w", ref, err)
		}
		rs, err := topdown.NewQuery(query).WithCompiler(compiler).WithStore(store).WithTransaction(txn).Run(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("evaluating the constant %v: %w", ref, err)
			}
			continue
		}
		var value *ast.Term
		if len(rs) > 0 {
			value = rs[0][result.Value.(ast.Var)]
		}
		if c.put(ref, value) {
			c.rules++
		}
	}
	return c, nil
}

// constantRefs lists the references of the compiled policy's constant
// rules (docs above). A rule is judged by all its definitions together
// (partial rules, else branches, the default), and by every rule its
// bodies may reach.
func constantRefs(compiler *ast.Compiler) []ast.Ref {
	byRef := map[string][]*ast.Rule{}
	var order []ast.Ref
	for _, name := range slices.Sorted(maps.Keys(compiler.Modules)) {
		ast.WalkRules(compiler.Modules[name], func(r *ast.Rule) bool {
			ref := r.Ref()
			key := ref.String()
			if _, seen := byRef[key]; !seen {
				order = append(order, ref)
			}
			byRef[key] = append(byRef[key], r)
			return false
		})
	}
	varying := map[*ast.Rule]bool{}
	var isVarying func(r *ast.Rule, visiting map[*ast.Rule]bool) bool
	isVarying = func(r *ast.Rule, visiting map[*ast.Rule]bool) bool {
		if v, ok := varying[r]; ok {
			return v
		}
		if visiting[r] {
			return true // recursion is a compile error; never a constant
		}
		visiting[r] = true
		v := ruleVaries(compiler, r, func(dep *ast.Rule) bool { return isVarying(dep, visiting) })
		delete(visiting, r)
		varying[r] = v
		return v
	}
	var refs []ast.Ref
	for _, ref := range order {
		if !ref.IsGround() {
			continue // a head with a variable key: a partial rule's key, not a document
		}
		constant := true
		for _, r := range byRef[ref.String()] {
			if len(r.Head.Args) > 0 || isVarying(r, map[*ast.Rule]bool{}) {
				constant = false
				break
			}
		}
		if constant {
			refs = append(refs, ref)
		}
	}
	return refs
}

// ruleVaries says whether r (with its else branches) may take a value
// other than its data alone gives it: it reads the input, uses `with`,
// calls a nondeterministic builtin, reads a document through a reference
// it cannot pin down, or depends on a rule that varies.
func ruleVaries(compiler *ast.Compiler, r *ast.Rule, depVaries func(*ast.Rule) bool) bool {
	varies := false
	ast.WalkExprs(r, func(e *ast.Expr) bool {
		if len(e.With) > 0 {
			varies = true
		}
		if e.IsCall() {
			if b, ok := ast.BuiltinMap[e.Operator().String()]; ok && b.Nondeterministic {
				varies = true
			}
		}
		return varies
	})
	if varies {
		return true
	}
	ast.WalkRefs(r, func(ref ast.Ref) bool {
		if varies {
			return true
		}
		switch {
		case ref.HasPrefix(ast.InputRootRef):
			varies = true
		case ref.HasPrefix(ast.DefaultRootRef):
			for _, dep := range compiler.GetRulesDynamicWithOpts(ref, ast.RulesOptions{IncludeHiddenModules: true}) {
				if dep == r || depVaries(dep) {
					varies = true
					break
				}
			}
		default:
			// A builtin's name in call position: nondeterministic ones
			// are caught above, also where they are referred to as values.
			if b, ok := ast.BuiltinMap[ref.String()]; ok && b.Nondeterministic {
				varies = true
			}
		}
		return false
	})
	return varies
}

// put records the value of the rule at ref; false when ref cannot be a
// key (a step that is not a string).
func (c *constants) put(ref ast.Ref, value *ast.Term) bool {
	node := &c.root
	for i, t := range ref {
		k, ok := refKey(i, t)
		if !ok {
			return false
		}
		if node.children == nil {
			node.children = map[string]*constNode{}
		}
		next := node.children[k]
		if next == nil {
			next = &constNode{}
			node.children[k] = next
		}
		node = next
	}
	node.known, node.value = true, value
	return true
}

// get returns the constant at ref: its value (nil when undefined) and
// whether ref is a constant at all.
func (c *constants) get(ref ast.Ref) (*ast.Term, bool) {
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
// strings; anything else is no constant's.
func refKey(i int, t *ast.Term) (string, bool) {
	switch v := t.Value.(type) {
	case ast.Var:
		return string(v), i == 0
	case ast.String:
		return string(v), i > 0
	}
	return "", false
}

// constantCache is the virtual-document cache of one evaluation: the
// policy's constants, then what the evaluation itself caches. Inside a
// `with` (a pushed frame) the constants are not used: `with` may replace
// what they were computed from.
type constantCache struct {
	consts *constants
	inner  topdown.VirtualCache
	depth  int
}

func newConstantCache(c *constants) *constantCache {
	return &constantCache{consts: c, inner: topdown.NewVirtualCache()}
}

func (c *constantCache) Push() { c.depth++; c.inner.Push() }
func (c *constantCache) Pop()  { c.depth--; c.inner.Pop() }

func (c *constantCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if c.depth == 0 && c.consts != nil {
		if value, ok := c.consts.get(ref); ok {
			return value, value == nil
		}
	}
	return c.inner.Get(ref)
}

func (c *constantCache) Put(ref ast.Ref, value *ast.Term) { c.inner.Put(ref, value) }
func (c *constantCache) Keys() []ast.Ref                  { return c.inner.Keys() }
