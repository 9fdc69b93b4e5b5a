package evalcache

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// BenchmarkEvaluation evaluates the answer entry point of the built-in
// policy on recorded input documents (pdp/testdata/inputs), side by side:
// "opa" as OPA evaluates it (the prepared query alone), "pdp" with what
// the engine reuses between evaluations (the constants, and the session
// facts of the same tool and session settings, computed once). Allocations per evaluation do not move with the machine's
// load, so they compare across runs and machines.
//
//	go test ./pdp/internal/evalcache -run '^$' -bench Evaluation -benchtime 500x
func BenchmarkEvaluation(b *testing.B) {
	c := builtinCompiled(&testing.T{})
	ctx := context.Background()
	pq, err := rego.New(rego.Query(AnswerPoint), rego.Compiler(c.compiler), rego.Store(c.store)).PrepareForEval(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range strings.Fields("read mcp-ask shell shell-granted shell-compound child-grep child-shell-parent-allows") {
		raw, err := os.ReadFile("../../testdata/inputs/" + name + ".json")
		if err != nil {
			b.Fatal(err)
		}
		input := ast.MustParseTerm(string(raw)).Value
		b.Run(name+"/opa", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pq.Eval(ctx, rego.EvalParsedInput(input)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/pdp", func(b *testing.B) {
			for range 2 { // the second computes the session facts
				if _, err := pq.Eval(ctx, rego.EvalParsedInput(input), c.Start(ctx, input, nil).Option()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := pq.Eval(ctx, rego.EvalParsedInput(input), c.Start(ctx, input, nil).Option()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
