package pdp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolperm/pdp/api"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The desk is where a caller's requests are served, whichever front end
// brings them: the HTTP API, the agents' hook endpoint, `pdp hook
// --local`. A front end decodes its request, calls the desk, and
// encodes the answer; what the desk does — validate once, resolve the
// session, decide, wait for a person, record an answer or an outcome —
// is written here once.

// DeskStore is what the desk reads and writes: sessions, decisions and
// their answers, outcomes.
type DeskStore interface {
	SessionStore
	DecisionStore
	OutcomeStore
}

// Desk serves a caller's requests. Build it with NewDesk.
type Desk struct {
	Engine   *Engine
	Sessions *Sessions
	store    DeskStore
	// sessionTimeout bounds the read (or creation) of a decision's
	// session tree.
	sessionTimeout time.Duration
	// stopping, when closed, ends every wait for an answer.
	stopping <-chan struct{}
	// changed is told of every answer and outcome the desk records (the
	// live feed).
	changed func()
	answers *answerBoard
}

// DeskOptions are the desk's settings beyond its engine and store.
type DeskOptions struct {
	// DefaultLevel and DefaultMode apply to sessions created without them.
	DefaultLevel api.Level
	DefaultMode  api.Mode
	// SessionTimeout bounds reading (or creating) a decision's session
	// tree (default 2s); past it the decision fails with
	// ErrStoreUnavailable, never an allow.
	SessionTimeout time.Duration
	// Stopping, when closed, ends every wait for an answer with the
	// decision as it stands.
	Stopping <-chan struct{}
	// Changed is told of every answer and outcome recorded.
	Changed func()
}

// NewDesk builds the desk of an engine and a store.
func NewDesk(engine *Engine, store DeskStore, o DeskOptions) *Desk {
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 2 * time.Second
	}
	if o.Changed == nil {
		o.Changed = func() {}
	}
	return &Desk{Engine: engine, Sessions: &Sessions{Store: store, DefaultLevel: o.DefaultLevel, DefaultMode: o.DefaultMode},
		store: store, sessionTimeout: o.SessionTimeout, stopping: o.Stopping, changed: o.Changed, answers: newAnswerBoard()}
}

// ErrStoreUnavailable: the session store could not be read or written
// in time. Without the session there is no decision, and no allow.
var ErrStoreUnavailable = errors.New("the session store is unavailable")

// StoreFailure is a store's error as a caller meets it: bad input,
// refusals and what the store says of an id pass through; anything else
// is ErrStoreUnavailable.
func StoreFailure(err error) error {
	var bad *Error
	var refused *Refusal
	if err == nil || errors.As(err, &bad) || errors.As(err, &refused) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrExists) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrStoreUnavailable, err)
}

// Decide decides one request of who: the request validated once, in the
// session the session rules resolve (an unknown one created with the
// defaults, owned by who), by the engine. The answer is returned only
// after its audit record is committed.
func (d *Desk) Decide(ctx context.Context, req api.DecideRequest, who Caller, explain bool) (api.Decision, error) {
	_, span := d.Engine.span(ctx, SpanValidate)
	err := ValidateRequest(req)
	endSpan(span, err)
	if err != nil {
		return api.Decision{}, err
	}
	// The tree read has the decision's deadline; the audit write has its
	// own, and the evaluation — an LLM call included — is not store work.
	rctx, cancel := context.WithTimeout(ctx, d.sessionTimeout)
	rctx, span = d.Engine.span(rctx, SpanSessionRead)
	session, err := d.Sessions.Resolve(rctx, req, who)
	endSpan(span, err)
	cancel()
	if err != nil {
		return api.Decision{}, StoreFailure(err)
	}
	return d.Engine.decideValid(ctx, Call{Request: req, Session: session, Explain: explain})
}

// DecideIn decides a request in a session the caller holds itself (`pdp
// hook --local`, which keeps no sessions): validated once, decided by
// the engine.
func (d *Desk) DecideIn(ctx context.Context, req api.DecideRequest, session *SessionTree) (api.Decision, error) {
	if err := ValidateRequest(req); err != nil {
		return api.Decision{}, err
	}
	return d.Engine.decideValid(ctx, Call{Request: req, Session: session})
}

// ChildSession is a sub-agent's session under parent, as the stores build
// it: the parent's level, mode and workspace, its own id.
func ChildSession(parent *SessionTree, id string) *SessionTree {
	return &SessionTree{ID: id, PermissionLevel: parent.PermissionLevel, Mode: parent.Mode, Workspace: parent.Workspace, Parent: parent}
}

// Answer records a person's answer to an ask (allow_once, allow_session,
// allow_project or deny) on channel (default "api"), by the caller named
// by; every wait on the ask ends.
func (d *Desk) Answer(ctx context.Context, id, answer, channel string, by api.Answerer) (api.Event, error) {
	switch answer {
	case api.AllowOnce, api.AllowSession, api.AllowProject, api.DenyAnswer:
	default:
		return api.Event{}, invalid("invalid_answer", "answer must be allow_once, allow_session, allow_project or deny, got %q", answer)
	}
	if channel == "" {
		channel = "api"
	}
	if len(channel) > 64 {
		return api.Event{}, invalid("invalid_channel", "channel must be at most 64 characters")
	}
	rec, err := d.store.AnswerDecision(ctx, id, answer, channel, by)
	if err != nil {
		return api.Event{}, err
	}
	d.Answered(id)
	d.changed()
	return rec, nil
}

// RecordOutcome records what a runtime did with the call of its own ask
// (Outcomes.Record).
func (d *Desk) RecordOutcome(ctx context.Context, toolUseID, outcome, channel string, who Caller) (api.Event, error) {
	rec, err := (&Outcomes{Sessions: d.Sessions, Store: d.store}).Record(ctx, toolUseID, outcome, channel, who)
	if err == nil {
		d.changed()
	}
	return rec, err
}

// Answered wakes every wait on the decision: an answer this desk
// recorded, or one another process committed to the same store.
func (d *Desk) Answered(id string) { d.answers.notify(id) }

// How a wait for an answer ended.
const (
	WaitAnswered = "answered"
	WaitTimeout  = "timeout"
	WaitStopping = "stopping"
	WaitGone     = "gone"
	WaitError    = "error"
)

// Await reads the decision id and, while it is an unanswered ask, waits
// up to wait for a person's answer. Only a person's answer ends the wait
// (a runtime's outcome is none). check, when set, sees the record first
// read and may refuse the caller before anything waits. park, when set,
// is called when the wait starts and its result when it ends, with how
// (WaitAnswered, WaitTimeout, …). A wait that ends without an answer
// returns the decision as it stands then; a store that fails,
// ErrStoreUnavailable.
func (d *Desk) Await(ctx context.Context, id string, wait time.Duration, check func(api.Event) error, park func() func(result string)) (api.Event, error) {
	// Watch before reading, so an answer between the read and the wait
	// is not missed.
	answered, release := d.answers.watch(id)
	defer func() { release() }()
	rec, err := d.store.Decision(ctx, id)
	if err != nil {
		return api.Event{}, StoreFailure(err)
	}
	if check != nil {
		if err := check(rec); err != nil {
			return api.Event{}, err
		}
	}
	if wait <= 0 || rec.Decision.Decision != api.Ask || rec.Answer != nil {
		return rec, nil
	}
	result := WaitAnswered
	if park != nil {
		ended := park()
		defer func() { ended(result) }()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	asItStands := func(why string) (api.Event, error) {
		result = why
		if rec, err = d.store.Decision(ctx, id); err != nil {
			return api.Event{}, StoreFailure(err)
		}
		return rec, nil
	}
	for rec.Answer == nil {
		select {
		case <-answered:
			// Woken without an answer (none is sent for an outcome, but
			// nothing else is taken for one either): wait on.
			release()
			answered, release = d.answers.watch(id)
			if rec, err = d.store.Decision(ctx, id); err != nil {
				result = WaitError
				return api.Event{}, StoreFailure(err)
			}
		case <-timer.C:
			// The record as it is when the wait ends (an outcome recorded
			// meanwhile included).
			return asItStands(WaitTimeout)
		case <-d.stopping:
			// Shutting down: the record as it stands, still pending, so
			// the runtime asks again, of another replica or of this one
			// once it is back.
			return asItStands(WaitStopping)
		case <-ctx.Done():
			result = WaitGone
			return api.Event{}, ctx.Err()
		}
	}
	return rec, nil
}

func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// answerBoard wakes the waits on a decision when it is answered.
type answerBoard struct {
	mu sync.Mutex
	m  map[string]*answerWatch
}

type answerWatch struct {
	ch chan struct{}
	n  int
}

func newAnswerBoard() *answerBoard { return &answerBoard{m: map[string]*answerWatch{}} }

// watch returns a channel closed when id is answered, and a release func
// the caller must call when it stops waiting.
func (b *answerBoard) watch(id string) (<-chan struct{}, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.m[id]
	if e == nil {
		e = &answerWatch{ch: make(chan struct{})}
		b.m[id] = e
	}
	e.n++
	return e.ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		e.n--
		if e.n == 0 && b.m[id] == e {
			delete(b.m, id)
		}
	}
}

// notify wakes every wait on id.
func (b *answerBoard) notify(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.m[id]; e != nil {
		close(e.ch)
		delete(b.m, id)
	}
}
