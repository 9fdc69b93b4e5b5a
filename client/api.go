package client

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// The answers of a decision.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// The answers a person gives to an ask.
const (
	AllowOnce    = "allow_once"
	AllowSession = "allow_session"
	DenyAnswer   = "deny"
)

// DecideRequest asks whether one tool call may run.
type DecideRequest struct {
	SessionID  string         `json:"session_id"`
	Tool       string         `json:"tool,omitempty"`
	Capability string         `json:"capability,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Cwd        string         `json:"cwd,omitempty"`
}

// Danger is the danger verdict of a shell command.
type Danger struct {
	Verdict string `json:"verdict"`
	By      string `json:"by"`
}

// TraceStep is one step of the decision chain.
type TraceStep struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"`
}

// Decision is the PDP's answer.
type Decision struct {
	DecisionID   string      `json:"decision_id"`
	Decision     string      `json:"decision"`
	NeedApproval bool        `json:"need_approval"`
	Source       string      `json:"source"`
	Rule         string      `json:"rule"`
	Reason       string      `json:"reason"`
	Capability   *string     `json:"capability"`
	Fingerprint  *string     `json:"fingerprint"`
	Grantable    bool        `json:"grantable"`
	Danger       *Danger     `json:"danger"`
	Revision     string      `json:"revision"`
	Trace        []TraceStep `json:"trace,omitempty"`
}

// Answer is a person's answer to an ask.
type Answer struct {
	Answer     string    `json:"answer"`
	Channel    string    `json:"channel"`
	AnsweredAt time.Time `json:"answered_at"`
	GrantID    int64     `json:"grant_id,omitempty"`
}

// Event is a decision as the audit trail keeps it.
type Event struct {
	Decision
	Time      time.Time      `json:"time"`
	SessionID string         `json:"session_id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"`
	Cwd       string         `json:"cwd,omitempty"`
	LatencyUS int64          `json:"latency_us"`
	Answer    *Answer        `json:"answer"`
}

// Session is a stored session.
type Session struct {
	ID              string            `json:"id,omitempty"`
	PermissionLevel string            `json:"permission_level,omitempty"`
	Mode            string            `json:"mode,omitempty"`
	ExecutionMode   string            `json:"execution_mode,omitempty"`
	Workspace       string            `json:"workspace,omitempty"`
	Rules           map[string]string `json:"rules,omitempty"`
	ParentSessionID string            `json:"parent_session_id,omitempty"`
	Scope           []string          `json:"scope,omitempty"`
	AssessorModel   string            `json:"assessor_model,omitempty"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// SessionChange is a PATCH: nil fields stay as they are.
type SessionChange struct {
	PermissionLevel *string            `json:"permission_level,omitempty"`
	Mode            *string            `json:"mode,omitempty"`
	Rules           *map[string]string `json:"rules,omitempty"`
}

// Grant lets calls with a fingerprint run without asking.
type Grant struct {
	ID          int64     `json:"id"`
	SessionID   string    `json:"session_id"`
	Capability  string    `json:"capability"`
	Fingerprint string    `json:"fingerprint"`
	DecisionID  string    `json:"decision_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// Filter selects audit events; zero values select everything.
type Filter struct {
	SessionID string
	Decision  string
	Before    string // a decision id: only older ones
	Limit     int
}

// Page is one page of audit events, newest first.
type Page struct {
	Decisions  []Event `json:"decisions"`
	NextBefore string  `json:"next_before,omitempty"`
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
// (creates a grant; ErrNotGrantable when the call has no fingerprint) or
// DenyAnswer.
func (c *Client) Answer(ctx context.Context, decisionID, answer, channel string) (Event, error) {
	var ev Event
	err := c.do(ctx, "POST", "/v1/decisions/"+url.PathEscape(decisionID)+"/answer", map[string]string{"answer": answer, "channel": channel}, &ev)
	return ev, err
}

// Decision returns one audit event; with wait > 0 an unanswered ask is
// held until a person answers or the wait ends.
func (c *Client) Decision(ctx context.Context, decisionID string, wait time.Duration) (Event, error) {
	var ev Event
	q := ""
	if wait > 0 {
		q = query(map[string]string{"wait": wait.String()})
	}
	err := c.do(ctx, "GET", "/v1/decisions/"+url.PathEscape(decisionID)+q, nil, &ev)
	return ev, err
}

// Decisions returns a page of the audit trail.
func (c *Client) Decisions(ctx context.Context, f Filter) (Page, error) {
	var p Page
	limit := ""
	if f.Limit > 0 {
		limit = strconv.Itoa(f.Limit)
	}
	err := c.do(ctx, "GET", "/v1/decisions"+query(map[string]string{"session_id": f.SessionID, "decision": f.Decision, "before": f.Before, "limit": limit}), nil, &p)
	return p, err
}

// Sessions manages sessions.
func (c *Client) Sessions() Sessions { return Sessions{c} }

// Sessions is the sessions part of the API.
type Sessions struct{ c *Client }

// Create creates a session; ErrConflict when the id is taken.
func (s Sessions) Create(ctx context.Context, in Session) (Session, error) {
	var out Session
	body := newSession{in.ID, in.PermissionLevel, in.Mode, in.ExecutionMode, in.Workspace, in.Rules, in.ParentSessionID, in.Scope, in.AssessorModel}
	err := s.c.do(ctx, "POST", "/v1/sessions", body, &out)
	return out, err
}

// newSession is a Session without the fields the server sets.
type newSession struct {
	ID              string            `json:"id,omitempty"`
	PermissionLevel string            `json:"permission_level,omitempty"`
	Mode            string            `json:"mode,omitempty"`
	ExecutionMode   string            `json:"execution_mode,omitempty"`
	Workspace       string            `json:"workspace,omitempty"`
	Rules           map[string]string `json:"rules,omitempty"`
	ParentSessionID string            `json:"parent_session_id,omitempty"`
	Scope           []string          `json:"scope,omitempty"`
	AssessorModel   string            `json:"assessor_model,omitempty"`
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
