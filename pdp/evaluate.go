package pdp

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp/internal/evalcache"
)

// evaluation is what one evaluation of the entry point gave: the
// decision, or what the policy needs before it can give one (the parent's
// decision, the danger verdict). Not to be confused with a runtime's
// outcome of a call (api.Outcome, outcomes.go).
type evaluation struct {
	decision api.Decision
	needs    []string
}

// evaluationBytes estimates what a remembered evaluation keeps alive (the
// memo's budget counts it): its struct, its strings and their pointers'
// targets.
func evaluationBytes(out evaluation) int64 {
	d := out.decision
	n := int64(unsafe.Sizeof(evaluation{})) + int64(len(d.DecisionID)+len(d.Decision)+len(d.Source)+len(d.Rule)+len(d.Reason)+len(d.Revision))
	if d.Capability != nil {
		n += 16 + int64(len(*d.Capability))
	}
	if d.Fingerprint != nil {
		n += 16 + int64(len(*d.Fingerprint))
	}
	if d.Danger != nil {
		n += int64(unsafe.Sizeof(*d.Danger)) + int64(len(d.Danger.Verdict)+len(d.Danger.By))
	}
	for _, step := range d.Trace {
		n += int64(unsafe.Sizeof(step)) + int64(len(step.Step)+len(step.Outcome))
	}
	for k, match := range d.Matches {
		n += 64 + int64(len(k)+len(match.Pattern)+len(match.Action))
	}
	for _, need := range out.needs {
		n += 16 + int64(len(need))
	}
	return n
}

// evaluator evaluates input documents against one policy.
type evaluator struct {
	p       *Policy
	timeout time.Duration
	obs     Observer
	now     func() time.Time
}

// eval evaluates in; prev is the previous round of the same decision
// (nil for the first), and the returned round is this one for the next
// (nil when the memo answered).
func (ev evaluator) eval(ctx context.Context, in map[string]any, explain bool, prev *evalcache.Round) (evaluation, *evalcache.Round, error) {
	start := ev.now()
	value, err := ast.InterfaceToValue(in)
	if err != nil {
		return evaluation{}, nil, fmt.Errorf("building input: %w", err)
	}
	var key string
	if !explain && !ev.p.plain {
		if key, err = evalcache.InputKey(value); err != nil {
			return evaluation{}, nil, err
		}
		if out, ok := ev.p.memo.Get(key); ok {
			ev.obs.Evaluated(0, true)
			return out, nil, ctx.Err() // a caller that has gone gets no answer
		}
	}
	evalcache.GrowStack()
	name := AnswerPoint
	if explain {
		name = EntryPoint
	}
	evalCtx, cancel := context.WithTimeout(ctx, ev.timeout)
	defer cancel()
	cache := ev.p.reuse.Start(evalCtx, value, prev)
	var obj any
	if ev.p.plain {
		obj, err = ev.evalPlainly(evalCtx, value, explain)
	} else {
		obj, err = ev.evalQuery(evalCtx, value, explain, cache)
	}
	ev.obs.Evaluated(ev.now().Sub(start), false)
	if err != nil {
		return evaluation{}, nil, fmt.Errorf("evaluating %s: %w", name, err)
	}
	// A decision whose caller has gone is not answered, least of all allowed.
	if err := ctx.Err(); err != nil {
		return evaluation{}, nil, fmt.Errorf("evaluating %s: %w", name, err)
	}
	out, err := decodeObject(obj, name, explain)
	if err == nil && !ev.p.plain {
		cache.Commit()
		if !explain {
			ev.p.memo.Put(key, out)
		}
	}
	return out, cache.Next(), err
}

// evalQuery evaluates the entry point with topdown, with what the
// speed-up layer reuses (cache), and returns its value as JSON.
func (ev evaluator) evalQuery(ctx context.Context, value ast.Value, explain bool, cache evalcache.Eval) (any, error) {
	body := ev.p.answerQuery
	if explain {
		body = ev.p.explainQuery
	}
	txn, err := ev.p.store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer ev.p.store.Abort(ctx, txn)
	halt := topdown.NewCancel()
	stop := context.AfterFunc(ctx, halt.Cancel)
	defer stop()
	rs, err := topdown.NewQuery(body).WithCompiler(ev.p.compiler).WithStore(ev.p.store).WithTransaction(txn).
		WithInput(ast.NewTerm(value)).WithVirtualCache(cache.VirtualCache()).WithCancel(halt).Run(ctx)
	if err != nil {
		return nil, err
	}
	if len(rs) != 1 {
		return nil, nil // undefined: decodeObject says so
	}
	result, ok := rs[0][resultVar]
	if !ok {
		return nil, nil
	}
	return ast.JSON(result.Value)
}

// evalPlainly evaluates the entry point as OPA's rego package does,
// without anything reused.
func (ev evaluator) evalPlainly(ctx context.Context, value ast.Value, explain bool) (any, error) {
	query := ev.p.answer
	if explain {
		query = ev.p.explain
	}
	rs, err := query.Eval(ctx, rego.EvalParsedInput(value))
	if err != nil || len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, err
	}
	return rs[0].Expressions[0].Value, nil
}

// decodeResult reads the entry point's object. Anything but the expected
// shape is an error, which the engine turns into a deny.
func decodeResult(rs rego.ResultSet, name string, explain bool) (evaluation, error) {
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return evaluation{}, fmt.Errorf("%s is undefined", name)
	}
	return decodeObject(rs[0].Expressions[0].Value, name, explain)
}

// decodeObject reads the entry point's value as JSON (nil: undefined).
func decodeObject(v any, name string, explain bool) (evaluation, error) {
	if v == nil {
		return evaluation{}, fmt.Errorf("%s is undefined", name)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return evaluation{}, fmt.Errorf("%s is %T, not an object", name, v)
	}
	r := reader{obj: obj, name: name}
	if e, ok := obj["error"].(map[string]any); ok {
		code, _ := e["code"].(string)
		msg, _ := e["message"].(string)
		return evaluation{}, &Error{Code: code, Message: msg}
	}
	d := api.Decision{
		Decision:    r.str("decision"),
		Source:      r.str("source"),
		Rule:        r.str("rule"),
		Reason:      r.str("reason"),
		Capability:  r.optStr("capability"),
		Fingerprint: r.optStr("fingerprint"),
		Grantable:   r.boolean("grantable"),
	}
	d.NeedApproval = d.Decision == api.Ask
	d.Parts = decodeParts(obj["parts"])
	d.Labels = []string{}
	if list, ok := obj["labels"].([]any); ok {
		for _, l := range list {
			if s, ok := l.(string); ok {
				d.Labels = append(d.Labels, s)
			}
		}
	}
	if dg, ok := obj["danger"].(map[string]any); ok {
		v, _ := dg["verdict"].(string)
		by, _ := dg["by"].(string)
		d.Danger = &api.Danger{Verdict: v, By: by}
	}
	switch d.Decision {
	case api.Allow, api.Ask, api.Deny:
	default:
		r.fail("decision %q is not allow, ask or deny", d.Decision)
	}
	var needs []string
	if list, ok := obj["needs"].([]any); ok {
		for _, n := range list {
			s, _ := n.(string)
			needs = append(needs, s)
		}
	}
	if explain {
		d.Trace = decodeTrace(obj["trace"])
		d.Matches = decodeMatches(obj["matches"])
	}
	if r.err != nil {
		return evaluation{}, r.err
	}
	return evaluation{decision: d, needs: needs}, nil
}

// reader reads typed fields and remembers the first field of the wrong type.
type reader struct {
	obj  map[string]any
	name string
	err  error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: "+format, append([]any{r.name}, args...)...)
	}
}

func (r *reader) str(key string) string {
	s, ok := r.obj[key].(string)
	if !ok {
		r.fail("field %q is %T, not a string", key, r.obj[key])
	}
	return s
}

func (r *reader) optStr(key string) *string {
	switch v := r.obj[key].(type) {
	case nil:
		return nil
	case string:
		return &v
	default:
		r.fail("field %q is %T, not a string or null", key, v)
		return nil
	}
}

func (r *reader) boolean(key string) bool {
	b, ok := r.obj[key].(bool)
	if !ok {
		r.fail("field %q is %T, not a boolean", key, r.obj[key])
	}
	return b
}

// decodeParts reads the parts of a compound command; nil when there are none.
func decodeParts(v any) []api.Part {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]api.Part, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		text, _ := m["text"].(string)
		out = append(out, api.Part{Text: text, Fingerprint: optional(m["fingerprint"]), Decision: optional(m["decision"]), Source: optional(m["source"]), Rule: optional(m["rule"])})
	}
	return out
}

func optional(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func decodeTrace(v any) []api.TraceStep {
	list, _ := v.([]any)
	out := make([]api.TraceStep, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		step, _ := m["step"].(string)
		outcome, _ := m["outcome"].(string)
		out = append(out, api.TraceStep{Step: step, Outcome: outcome})
	}
	return out
}

func decodeMatches(v any) map[string]api.RuleMatch {
	m, _ := v.(map[string]any)
	out := make(map[string]api.RuleMatch, len(m))
	for layer, raw := range m {
		rm, _ := raw.(map[string]any)
		p, _ := rm["pattern"].(string)
		a, _ := rm["action"].(string)
		// The path rule also names its layer, path and access kind.
		l, _ := rm["layer"].(string)
		path, _ := rm["path"].(string)
		access, _ := rm["access"].(string)
		out[layer] = api.RuleMatch{Pattern: p, Action: a, Layer: l, Path: path, Access: access}
	}
	return out
}
