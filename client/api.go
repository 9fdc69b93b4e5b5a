package client

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/toolperm/pdp/api"
)

// The answers of a decision.
const (
	Allow = api.Allow
	Ask   = api.Ask
	Deny  = api.Deny
)

// The answers a person gives to an ask.
const (
	AllowOnce    = api.AllowOnce
	AllowSession = api.AllowSession
	AllowProject = api.AllowProject
	DenyAnswer   = api.DenyAnswer
	// Expired is the answer the PDP gives an ask nobody answered in
	// time: never an allow.
	Expired = api.Expired
)

// The wire types, shared with the server (package api).
type (
	// Level is a session's permission level; Mode its confirmation mode.
	Level = api.Level
	Mode  = api.Mode
	// DecideRequest asks whether one tool call may run.
	DecideRequest = api.DecideRequest
	// Runtime is what an agent runtime says about itself with a call.
	Runtime = api.Runtime
	// Danger is the danger verdict of a shell command.
	Danger = api.Danger
	// TraceStep is one step of the decision chain.
	TraceStep = api.TraceStep
	// Decision is the PDP's answer.
	Decision = api.Decision
	// Answer is a person's answer to an ask; Answer.Allows says whether
	// it lets the call run.
	Answer = api.Answer
	// Outcome is what a runtime reported became of an ask: a record,
	// never a person's answer.
	Outcome = api.Outcome
	// Event is a decision as the audit trail keeps it.
	Event = api.Event
	// Session is a stored session.
	Session = api.Session
	// SessionChange is a PATCH: nil fields stay as they are.
	SessionChange = api.SessionChange
	// Grant lets calls with a fingerprint run without asking.
	Grant = api.Grant
	// Page is one page of audit events, newest first.
	Page = api.Page
	// Waiter is a runtime waiting on an ask now (Event.Waiting).
	Waiter = api.Waiter
)

// Filter selects audit events; zero values select everything.
type Filter struct {
	SessionID string
	Decision  string
	Before    string // a decision id: only older ones
	Limit     int
	// Pending lists unanswered asks only, those a runtime waits on
	// first; such a page has no next one.
	Pending bool
}

// Decide asks whether a call may run. With explain the answer carries
// the step-by-step trace.
func (c *Client) Decide(ctx context.Context, r DecideRequest, explain bool) (Decision, error) {
	var d Decision
	path := "/v1/decide"
	if explain {
		path += "?explain=1"
	}
	err := c.do(ctx, "POST", path, r, &d)
	return d, err
}

// Answer records a person's answer to an ask: AllowOnce, AllowSession
// or AllowProject (create grants; ErrNotGrantable when the call has no
// fingerprint) or DenyAnswer.
func (c *Client) Answer(ctx context.Context, decisionID, answer, channel string) (Event, error) {
	var ev Event
	err := c.do(ctx, "POST", "/v1/decisions/"+url.PathEscape(decisionID)+"/answer", api.AnswerRequest{Answer: answer, Channel: channel}, &ev)
	return ev, err
}

// Decision returns one audit event; with wait > 0 an unanswered ask is
// held until a person answers or the wait ends. Only ev.Answer is a
// person's answer; ev.Outcome, a runtime's report, never ends the wait
// and must never be taken for a permission.
func (c *Client) Decision(ctx context.Context, decisionID string, wait time.Duration) (Event, error) {
	var ev Event
	q := ""
	if wait > 0 {
		q = query(map[string]string{"wait": wait.String()})
	}
	err := c.do(ctx, "GET", "/v1/decisions/"+url.PathEscape(decisionID)+q, nil, &ev)
	return ev, err
}

// AwaitAnswer waits up to wait for a person's answer to the ask
// decisionID, as long as the wait needs: a server caps each wait
// (server.max_wait) and ends waits early when it stops, so it asks again
// while time is left, at most once a second, each request bounded by
// wait left plus perRequest. It returns the decision as it stands when
// answered or when the wait ends (Answer nil: no answer); a runtime's
// outcome on the ask is no answer. An answer for another decision is an
// error.
func (c *Client) AwaitAnswer(ctx context.Context, decisionID string, wait, perRequest time.Duration) (Event, error) {
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline).Truncate(time.Millisecond)
		asked := time.Now()
		wctx, cancel := context.WithTimeout(ctx, max(left, 0)+perRequest)
		ev, err := c.Decision(wctx, decisionID, max(left, 0))
		cancel()
		if err == nil && ev.DecisionID != decisionID {
			err = fmt.Errorf("the PDP answered with decision %q", ev.DecisionID)
		}
		if err != nil || ev.Answer != nil || time.Until(deadline) <= 0 {
			return ev, err
		}
		// A server that ends waits early is not asked in a busy loop.
		if pause := time.Second - time.Since(asked); pause > 0 {
			select {
			case <-time.After(min(pause, time.Until(deadline))):
			case <-ctx.Done():
				return ev, ctx.Err()
			}
		}
	}
}

// Decisions returns a page of the audit trail.
func (c *Client) Decisions(ctx context.Context, f Filter) (Page, error) {
	var p Page
	limit := ""
	if f.Limit > 0 {
		limit = strconv.Itoa(f.Limit)
	}
	pending := ""
	if f.Pending {
		pending = "true"
	}
	err := c.do(ctx, "GET", "/v1/decisions"+query(map[string]string{"session_id": f.SessionID, "decision": f.Decision, "before": f.Before, "limit": limit, "pending": pending}), nil, &p)
	return p, err
}

// Sessions manages sessions.
func (c *Client) Sessions() Sessions { return Sessions{c} }

// Sessions is the sessions part of the API.
type Sessions struct{ c *Client }

// Create creates a session; ErrConflict when the id is taken.
func (s Sessions) Create(ctx context.Context, in Session) (Session, error) {
	var out Session
	body := api.NewSession{ID: in.ID, PermissionLevel: in.PermissionLevel, Mode: in.Mode, ExecutionMode: in.ExecutionMode,
		Workspace: in.Workspace, Rules: in.Rules, ParentSessionID: in.ParentSessionID, Scope: in.Scope, AssessorModel: in.AssessorModel}
	err := s.c.do(ctx, "POST", "/v1/sessions", body, &out)
	return out, err
}

// Get returns a session.
func (s Sessions) Get(ctx context.Context, id string) (Session, error) {
	var out Session
	err := s.c.do(ctx, "GET", "/v1/sessions/"+url.PathEscape(id), nil, &out)
	return out, err
}

// Update changes a session's level, mode or rules (a person's channel).
func (s Sessions) Update(ctx context.Context, id string, change SessionChange) (Session, error) {
	var out Session
	err := s.c.do(ctx, "PATCH", "/v1/sessions/"+url.PathEscape(id), change, &out)
	return out, err
}

// Grants manages the grants of a session tree.
func (c *Client) Grants() Grants { return Grants{c} }

// Grants is the grants part of the API.
type Grants struct{ c *Client }

// List returns the grants that apply to a session.
func (g Grants) List(ctx context.Context, sessionID string) ([]Grant, error) {
	var out struct {
		Grants []Grant `json:"grants"`
	}
	err := g.c.do(ctx, "GET", "/v1/sessions/"+url.PathEscape(sessionID)+"/grants", nil, &out)
	return out.Grants, err
}

// Revoke deletes a grant.
func (g Grants) Revoke(ctx context.Context, sessionID string, grantID int64) error {
	return g.c.do(ctx, "DELETE", fmt.Sprintf("/v1/sessions/%s/grants/%d", url.PathEscape(sessionID), grantID), nil, nil)
}
