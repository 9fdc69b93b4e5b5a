// Package rulecost measures what one rule of the policy costs to
// evaluate, the way the engine evaluates it (the query prepared once, the
// input as an AST value), for a few input documents: the profile that
// guides policy performance work. Allocations per evaluation do not move
// with the machine's load, so they compare across runs.
//
//	go test ./bench/rulecost -bench . -benchtime 200x                 # data.toolperm.answer
//	RULE=data.toolperm.resolved go test ./bench/rulecost -bench . -benchtime 200x
//	POLICY_DIR=/some/other/policies AST_STORE=1 go test ./bench/rulecost -bench .
//
// testdata/*.json are `pdp decide --print-input` documents: a read, an MCP
// call, a compound command, a plain command, a sub-agent's command and a
// SMART session's command. AST_STORE=1 keeps the data as AST values in
// the store, so reads do not convert it.
package rulecost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

func BenchmarkRule(b *testing.B) {
	ctx := context.Background()
	query := envOr("RULE", "data.toolperm.answer")
	prepared, err := prepare(ctx, envOr("POLICY_DIR", "../../policies"), query, os.Getenv("AST_STORE") != "")
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"read", "mcp", "compound", "shell", "child", "smart"} {
		input := readInput(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				value, err := ast.InterfaceToValue(input)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := prepared.Eval(ctx, rego.EvalParsedInput(value)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// prepare compiles the .rego files and data.json of dir for query.
func prepare(ctx context.Context, dir, query string, astStore bool) (rego.PreparedEvalQuery, error) {
	opts := []func(*rego.Rego){rego.Query(query)}
	files, err := filepath.Glob(filepath.Join(dir, "*.rego"))
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return rego.PreparedEvalQuery{}, err
		}
		opts = append(opts, rego.Module(f, string(src)))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "data.json"))
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	var store storage.Store = inmem.NewFromObject(data)
	if astStore {
		store = inmem.NewFromObjectWithOpts(data, inmem.OptReturnASTValuesOnRead(true))
	}
	return rego.New(append(opts, rego.Store(store))...).PrepareForEval(ctx)
}

func readInput(b *testing.B, name string) any {
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		b.Fatal(err)
	}
	var input any
	if err := json.Unmarshal(raw, &input); err != nil {
		b.Fatal(err)
	}
	return input
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
