package evalcache

import (
	"context"
	"fmt"

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
// evaluates them again in every evaluation. They are evaluated
// once, when the policy is compiled, and every evaluation finds them in
// its virtual-document cache (reuseCache, cache.go). The policy's text
// does not change: `opa test` and `opa run` evaluate the same rules the
// usual way.

// findConstants evaluates every constant rule of the compiled policy
// once. A rule whose evaluation fails is left to each evaluation, where
// its error ends in a deny as any other.
func findConstants(ctx context.Context, compiler *ast.Compiler, store storage.Store, paths Paths) (*ruleValues, error) {
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Abort(ctx, txn)
	c := &ruleValues{}
	result := ast.VarTerm("x")
	for _, ref := range constantRefs(compiler, paths) {
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
// rules (docs above).
func constantRefs(compiler *ast.Compiler, paths Paths) []ast.Ref {
	return precomputable(compiler, paths, func(d deps) bool { return !d.varies && !d.readsInput })
}
