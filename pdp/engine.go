package pdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/toolperm/pdp/api"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// ChangeListener is told that the store committed changes. The engine calls it
// after recording an ask, the API after an answer, an outcome or a level
// change. A store shared by replicas (PostgreSQL) calls it too when
// another replica commits a change, so every replica's readers see it.
type ChangeListener interface {
	Changed()
}

// Assessor judges whether a shell command is dangerous. It never fails:
// any error is its own DANGEROUS verdict, with By saying why.
type Assessor interface {
	Assess(ctx context.Context, command AssessedCommand, session *SessionTree) api.Danger
}

// AssessedCommand is a shell command put to the assessor: the text the
// call runs, and that text as the shell sees it (Shell.Canonical), which
// is what a model is shown. Canonical is "" when the command has none
// (it does not parse, or is over the limits): the assessor calls it
// DANGEROUS without asking a model.
type AssessedCommand struct {
	Text, Canonical string
}

// AuditLog records a decision durably before its answer is sent.
type AuditLog interface {
	Record(ctx context.Context, ev AuditRecord) error
}

// Components are the parts an Engine is built from; the service, the CLI
// and tests each pass their own. Nil parts are off: no assessor means
// every assess is DANGEROUS (by "unavailable"), no audit log means no
// audit trail (the CLI).
type Components struct {
	Assessor Assessor
	Audit    AuditLog
	// Shell parses what shell calls run into facts.
	Shell Shell
	// Workspace resolves a call's paths against the session's workspace.
	Workspace Workspace
	// Projects reads a workspace's project policy file on this host;
	// ProjectSource says where the project layer comes from (default
	// ProjectAuto). Nil Projects: only the hook's copy.
	Projects      ProjectFiles
	ProjectSource ProjectSource
	Logger        *slog.Logger
	Now           func() time.Time
	// Observer is told of every decision and evaluation (metrics); may be nil.
	Observer Observer
	// EvalTimeout bounds one evaluation of the policy (default 1s); a
	// policy that runs longer is an error, so a deny.
	EvalTimeout time.Duration
	// MemoBytes bounds the memory the active policy's memo of answers may
	// hold (default evalcache.DefaultMemoBytes).
	MemoBytes int64
	// SubmemoBytes bounds the memory the active policy's function results
	// kept across evaluations may hold (default
	// evalcache.DefaultFuncMemoBytes).
	SubmemoBytes int64
	// Changes is told when an ask is recorded (the audit log writes it to
	// the change log), so live readers see it; may be nil.
	Changes ChangeListener
	// Tracer, when set, traces each decision (tracing.go): a span of the
	// decision with its answer, and under it the evaluation and the
	// audit commit. Nil: no spans, at no cost.
	Tracer trace.Tracer
	// TraceCommand says whether the decision's span may carry the
	// command read from the named argument (the decision log's masking
	// decides); nil: never.
	TraceCommand func(arg string) bool
}

// Observer is told what the engine does, for metrics.
type Observer interface {
	// Decided reports an answer and how long the whole decision took,
	// audit write included.
	Decided(d api.Decision, took time.Duration)
	// Evaluated reports one evaluation of the policy: how long it took,
	// or that the memo answered it.
	Evaluated(took time.Duration, memoHit bool)
}

// noObserver is the Observer when none is configured.
type noObserver struct{}

func (noObserver) Decided(api.Decision, time.Duration) {}
func (noObserver) Evaluated(time.Duration, bool)       {}

// Call is one decision to make: the request, the session it runs in
// (already loaded, with its parents and the grants of its tree), and
// whether to explain the answer step by step.
type Call struct {
	Request api.DecideRequest
	Session *SessionTree
	Explain bool
}

// ErrAuditUnavailable means the decision could not be recorded; the
// answer that comes with it is a deny.
var ErrAuditUnavailable = errors.New("audit trail unavailable")

// Engine evaluates calls against the active policy. It is safe for
// concurrent use; Swap replaces the policy atomically, and a decision in
// flight finishes on the policy it started with.
type Engine struct {
	policy atomic.Pointer[Policy]
	c      Components
	// typed holds each process's partial line of typed input between
	// decisions (stdin.go); nil where nothing is recorded (Simulate).
	typed *typedInput
	// projects are the project files parsed so far (project.go).
	projects projectCache
}

// New returns an engine serving p.
func New(p *Policy, c Components) *Engine {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	if c.EvalTimeout <= 0 {
		c.EvalTimeout = time.Second
	}
	e := &Engine{c: c, typed: newTypedInput()}
	if p != nil {
		p.memo.SetLimit(c.MemoBytes)
		p.reuse.SetFuncMemoBytes(c.SubmemoBytes)
		e.policy.Store(p)
	}
	return e
}

// Swap activates p for the next decisions. A nil policy is refused: the
// last good one keeps serving.
func (e *Engine) Swap(p *Policy) error {
	if p == nil {
		return errors.New("refusing to activate a nil policy")
	}
	p.memo.SetLimit(e.c.MemoBytes)
	p.reuse.SetFuncMemoBytes(e.c.SubmemoBytes)
	e.policy.Store(p)
	return nil
}

// Policy returns the active policy, or nil when none is active.
func (e *Engine) Policy() *Policy { return e.policy.Load() }

// Decide answers one call: it validates the input, evaluates the chain
// (fetching what the policy asks for), records the audit event and
// returns. Bad input is an *Error and no decision; every other failure
// is a deny.
func (e *Engine) Decide(ctx context.Context, call Call) (api.Decision, error) {
	if err := ValidateRequest(call.Request); err != nil {
		return api.Decision{}, err
	}
	return e.decideValid(ctx, call)
}

// decideValid decides a call whose request is valid (Desk validates it
// once).
func (e *Engine) decideValid(ctx context.Context, call Call) (api.Decision, error) {
	if e.c.Tracer == nil {
		return e.decide(ctx, call)
	}
	ctx, span := e.c.Tracer.Start(ctx, SpanDecide)
	d, err := e.decide(ctx, call)
	e.traced(span, call, d, err)
	span.End()
	return d, err
}

func (e *Engine) decide(ctx context.Context, call Call) (api.Decision, error) {
	start := e.c.Now()
	if err := ValidateSession(call.Session); err != nil {
		return api.Decision{}, err
	}
	p := e.policy.Load()
	var d api.Decision
	var rec *Recorded
	if p == nil {
		d = failClosed("No policy is active.")
	} else {
		var err error
		ectx, span := e.span(ctx, SpanEvaluate)
		d, rec, err = e.evaluate(ectx, p, call)
		span.End()
		var bad *Error
		if errors.As(err, &bad) {
			return api.Decision{}, err
		}
		if err != nil {
			e.c.Logger.Error("policy evaluation failed; denying", "err", err)
			d = failClosed(fmt.Sprintf("The policy could not be evaluated: %v.", err))
		}
		d.Revision = p.Revision
	}
	d.DecisionID = NewDecisionID(start)
	d.WouldGrant = WouldGrant(d)
	if d.Labels == nil {
		d.Labels = []string{}
	}
	if err := ctx.Err(); err != nil {
		return denyUnrecorded(d), fmt.Errorf("the caller went away before the decision was made: %w", err)
	}
	if e.c.Audit != nil {
		ev := AuditRecord{Decision: d, Request: call.Request, SessionID: call.Request.SessionID, Time: start, Latency: e.c.Now().Sub(start), Recorded: rec}
		if root := rootID(call.Session); d.Decision == api.Allow && root != "" {
			// An allowed call's labels are its tree's from now on,
			// committed with its record.
			ev.Labels, ev.LabelRoot = newLabels(call.Session, d, call.Request, start), root
		}
		actx, span := e.span(ctx, SpanAuditCommit)
		err := e.c.Audit.Record(actx, ev)
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		if err != nil {
			e.c.Logger.Error("audit write failed; denying", "decision_id", d.DecisionID, "err", err)
			d = denyUnrecorded(d)
			e.c.Observer.Decided(d, e.c.Now().Sub(start))
			return d, fmt.Errorf("%w: %v", ErrAuditUnavailable, err)
		}
		if d.Decision == api.Ask && e.c.Changes != nil {
			e.c.Changes.Changed()
		}
	}
	e.c.Observer.Decided(d, e.c.Now().Sub(start))
	return d, nil
}

// failClosed is the answer when no policy can give one.
func failClosed(reason string) api.Decision {
	return api.Decision{Decision: api.Deny, Source: "default", Rule: "FALLBACK", Reason: reason}
}

func denyUnrecorded(d api.Decision) api.Decision {
	d.Decision, d.NeedApproval, d.Source, d.Rule = api.Deny, false, "default", "FALLBACK"
	d.Reason = "The decision could not be recorded in the audit trail."
	return d
}

// Input returns the document the policy judges first for call: the facts
// of the request and the session, before any verdict or parent decision
// is fetched. It is what `pdp decide --print-input` prints.
func (e *Engine) Input(ctx context.Context, call Call) (map[string]any, error) {
	if err := ValidateRequest(call.Request); err != nil {
		return nil, err
	}
	if err := ValidateSession(call.Session); err != nil {
		return nil, err
	}
	p := e.policy.Load()
	if p == nil {
		return nil, errors.New("no policy is active")
	}
	pl := &pipeline{e: e, p: p, call: call}
	if err := pl.parseCommand(ctx); err != nil {
		return nil, err
	}
	in, _, _, err := pl.input(ctx, withDefaults(call.Session))
	return in, err
}

// Simulate answers a call like Decide, with the trace, but records
// nothing (no audit event, no metrics) and asks the danger assessor only
// when assess is set; otherwise an assess rule sees DANGEROUS
// (unavailable).
func (e *Engine) Simulate(ctx context.Context, call Call, assess bool) (api.Decision, error) {
	sim := &Engine{c: e.c}
	sim.c.Audit, sim.c.Observer = nil, noObserver{}
	if !assess {
		sim.c.Assessor = nil
	}
	if p := e.policy.Load(); p != nil {
		sim.policy.Store(p)
	}
	call.Explain = true
	return sim.Decide(ctx, call)
}
