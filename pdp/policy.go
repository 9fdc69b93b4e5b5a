package pdp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/toolperm/pdp/pdp/internal/evalcache"
)

// EntryPoint is the rule that returns the whole decision object with its
// trace; AnswerPoint is the same decision without the explanation, which
// is cheaper to evaluate when no one asked for it.
const (
	EntryPoint  = "data.toolperm.decision"
	AnswerPoint = "data.toolperm.answer"
)

// Policy is a compiled policy ready to evaluate: the prepared query of the
// entry point over the policy's modules and data.
type Policy struct {
	// Revision identifies the policy's content; it is on every decision.
	Revision string
	// Source says where the policy came from (a directory, "builtin").
	Source string
	// explain evaluates EntryPoint, answer AnswerPoint, as OPA's rego
	// package does (Check, and the plain evaluation of the tests).
	explain rego.PreparedEvalQuery
	answer  rego.PreparedEvalQuery
	// explainQuery and answerQuery are the same queries compiled for
	// topdown, which evaluates them for decisions without the rego
	// package's per-evaluation set-up (a goroutine and metrics each).
	explainQuery, answerQuery ast.Body
	compiler                  *ast.Compiler
	store                     storage.Store
	// catalogue says which arguments of each tool name files (data.tools).
	catalogue Catalogue
	// paths is the policy's layer of path rules (data.paths), compiled.
	paths *PathRules
	// flowPaths are the path tags of data.flow.paths, compiled.
	flowPaths *pathTags
	// reuse is what the policy's evaluations may share (its constants,
	// session facts and later rounds' stable rules: pdp/internal/evalcache).
	reuse *evalcache.Analysis
	// memo holds this policy's answers per input; it goes with the policy.
	memo *evalcache.Memo[evaluation]
	// plain evaluates as OPA does, with neither the memo nor what reuse
	// keeps: the yardstick the tests hold the speed-up layer to.
	plain bool
}

// Compile prepares the entry point over parsed modules and data. An error
// here means the policy must not be activated.
func Compile(ctx context.Context, modules map[string]*ast.Module, data map[string]any, source, revision string) (*Policy, error) {
	// The data is read as AST values: rules that read data.shell or the
	// level table get them without converting them on every evaluation.
	store := inmem.NewFromObjectWithOpts(data, inmem.OptReturnASTValuesOnRead(true))
	compiler := ast.NewCompiler()
	if compiler.Compile(modules); compiler.Failed() {
		return nil, fmt.Errorf("compiling policy %s: %w", source, compiler.Errors)
	}
	prepare := func(query string) (rego.PreparedEvalQuery, error) {
		return rego.New(rego.Query(query), rego.Compiler(compiler), rego.Store(store)).PrepareForEval(ctx)
	}
	explain, err := prepare(EntryPoint)
	if err != nil {
		return nil, fmt.Errorf("preparing %s of policy %s: %w", EntryPoint, source, err)
	}
	answer, err := prepare(AnswerPoint)
	if err != nil {
		return nil, fmt.Errorf("preparing %s of policy %s: %w", AnswerPoint, source, err)
	}
	explainQuery, err := compileQuery(compiler, EntryPoint)
	if err != nil {
		return nil, fmt.Errorf("compiling %s of policy %s: %w", EntryPoint, source, err)
	}
	answerQuery, err := compileQuery(compiler, AnswerPoint)
	if err != nil {
		return nil, fmt.Errorf("compiling %s of policy %s: %w", AnswerPoint, source, err)
	}
	catalogue, err := readCatalogue(ctx, compiler, store)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	if err := checkPolicyData(ctx, compiler, store); err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	raw, err := readData(ctx, compiler, store, "data.paths")
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	paths, err := DecodePathRules(raw)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	raw, err = readData(ctx, compiler, store, "data.flow.paths")
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	flowPaths, err := decodePathTags(raw)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	reuse, err := evalcache.Analyse(ctx, compiler, store, reusePaths)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", source, err)
	}
	return &Policy{Revision: revision, Source: source, explain: explain, answer: answer,
		explainQuery: explainQuery, answerQuery: answerQuery, compiler: compiler, store: store, catalogue: catalogue,
		paths: paths, flowPaths: flowPaths, reuse: reuse, memo: evalcache.NewMemo(0, evaluationBytes)}, nil
}

// resultVar names an entry point's value in its compiled query.
const resultVar = ast.Var("__pdp_result")

// compileQuery compiles `__pdp_result = point` over the policy.
func compileQuery(compiler *ast.Compiler, point string) (ast.Body, error) {
	ref, err := ast.ParseRef(point)
	if err != nil {
		return nil, err
	}
	return compiler.QueryCompiler().Compile(ast.NewBody(ast.Equality.Expr(ast.VarTerm(string(resultVar)), ast.NewTerm(ref))))
}

// readData evaluates a document of the policy's data once (nil when it
// is not there), so a table written as data or as rules reads the same.
func readData(ctx context.Context, compiler *ast.Compiler, store storage.Store, query string) (any, error) {
	rs, err := rego.New(rego.Query(query), rego.Compiler(compiler), rego.Store(store)).Eval(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", query, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, nil
	}
	return rs[0].Expressions[0].Value, nil
}

// readCatalogue evaluates data.tools once, so a catalogue written as data
// or as rules is read the same way.
func readCatalogue(ctx context.Context, compiler *ast.Compiler, store storage.Store) (Catalogue, error) {
	rs, err := rego.New(rego.Query("data.tools"), rego.Compiler(compiler), rego.Store(store)).Eval(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the tool catalogue: %w", err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return Catalogue{}, nil
	}
	return DecodeCatalogue(rs[0].Expressions[0].Value)
}

// CompileBundle prepares a policy from an OPA bundle: its modules, its
// data, and its manifest revision (a content hash when it has none).
func CompileBundle(ctx context.Context, b bundle.Bundle, source, digest string) (*Policy, error) {
	modules := make(map[string]*ast.Module, len(b.Modules))
	for _, m := range b.Modules {
		if strings.HasSuffix(m.Path, "_test.rego") {
			continue
		}
		modules[m.Path] = m.Parsed
	}
	if len(modules) == 0 {
		return nil, fmt.Errorf("bundle %s has no policy modules", source)
	}
	revision := b.Manifest.Revision
	if revision == "" {
		revision = digest
	}
	return Compile(ctx, modules, b.Data, source, revision)
}

// probeInput is a plain call every policy must answer with a well-formed
// decision (whatever the decision is).
var probeInput = map[string]any{
	"tool":      "read_file",
	"session":   sessionInput(withDefaults(&SessionTree{Workspace: "/probe"})),
	"workspace": map[string]any{"outside": []any{}},
}

// checkTimeout bounds the probe evaluations of Check: a policy that
// cannot answer a plain call in time is not activated.
const checkTimeout = 5 * time.Second

// Check tests a compiled policy before it is activated: both entry points
// must answer a plain call with a decision of the right shape.
func (p *Policy) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	value, err := ast.InterfaceToValue(probeInput)
	if err != nil {
		return err
	}
	for name, q := range map[string]rego.PreparedEvalQuery{AnswerPoint: p.answer, EntryPoint: p.explain} {
		rs, err := q.Eval(ctx, rego.EvalParsedInput(value), p.reuse.Start(ctx, value, nil).Option())
		if err != nil {
			return fmt.Errorf("policy %s fails on a plain call: %w", p.Source, err)
		}
		if _, err := decodeResult(rs, name, name == EntryPoint); err != nil {
			return fmt.Errorf("policy %s answers a plain call wrongly: %w", p.Source, err)
		}
	}
	return nil
}
