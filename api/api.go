// Package api holds the wire types of the toolperm HTTP API: the JSON
// shapes the server encodes and the Go client decodes, and the words of
// the vocabulary they carry (decisions, levels, modes, answers). It
// depends on nothing but the standard library, so a client can use it
// without pulling in the policy engine. The core (package pdp) names its
// records with these types, so each shape is written once.
package api

import (
	"encoding/json"
	"fmt"
	"time"
)

// Level is a session's permission level for LOCAL tools.
type Level string

// The four permission levels, strictest first; READ_ONLY is the default.
const (
	ReadOnly  Level = "READ_ONLY"
	ReadWrite Level = "READ_WRITE"
	Smart     Level = "SMART"
	Full      Level = "FULL"
)

// Mode is a session's confirmation mode.
type Mode string

// The three modes; on-demand is the default.
const (
	AlwaysAsk Mode = "always-ask"
	OnDemand  Mode = "on-demand"
	AllowAll  Mode = "allow-all"
)

// ExecutionMode says where a session's tools run; fixed at creation.
type ExecutionMode string

// LOCAL tools run on the user's machine under the level; CLOUD tools run
// in the server's sandbox.
const (
	Local ExecutionMode = "LOCAL"
	Cloud ExecutionMode = "CLOUD"
)

// The answers a decision can carry.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// The answers a person can give to an ask.
const (
	AllowOnce    = "allow_once"
	AllowSession = "allow_session"
	// AllowProject grants every part for the workspace of the session's
	// root, to every session of its owner there.
	AllowProject = "allow_project"
	DenyAnswer   = "deny"
)

// Expired is the answer the PDP itself records to an ask nobody
// answered within asks.expire_after, on the channel ExpiryChannel. It
// is never a grant, and whoever waits on the ask reads it as a deny.
const (
	Expired       = "expired"
	ExpiryChannel = "pdp"
)

// DecideRequest is POST /v1/decide: one tool call a dispatcher asks about.
type DecideRequest struct {
	SessionID  string         `json:"session_id"`
	Tool       string         `json:"tool,omitempty"`
	Capability string         `json:"capability,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Cwd        string         `json:"cwd,omitempty"`
	// ToolUseID is the runtime's own id of the call (Claude Code's
	// tool_use_id), kept with the decision so the runtime can later
	// report what became of an ask (POST
	// /v1/decisions/by-tool-use/{id}/outcome).
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Runtime says which agent runtime made the call and in which of its
	// own modes; the policy reads it as input.runtime, and the tool
	// catalogue looks up "<agent>/<tool>" before "<tool>".
	Runtime *Runtime `json:"runtime,omitempty"`
	// ProjectPolicy is the project's policy file (.toolperm/policy.json
	// of the workspace) as the hook read it, for a PDP that cannot read
	// the workspace itself. It can only tighten what the organisation's
	// policy answers (docs/policy.md, "The project layer").
	ProjectPolicy *ProjectFile `json:"project_policy,omitempty"`
}

// ProjectFile is a project's policy file as a hook read it: its text,
// or why it could not be read.
type ProjectFile struct {
	// Dir is the directory holding the file's .toolperm: the nearest at
	// or above the workspace the hook searched from.
	Dir string `json:"dir"`
	// Content is the file's text, at most MaxProjectFileBytes.
	Content string `json:"content"`
	// Error says why the hook could not read a file that is there (it
	// then denies every call of the session, as a malformed file does).
	Error string `json:"error,omitempty"`
}

// ProjectFileName is where a repository keeps its project policy,
// relative to the workspace.
const ProjectFileName = ".toolperm/policy.json"

// MaxProjectFileBytes bounds a project's policy file.
const MaxProjectFileBytes = 64 << 10

// Runtime is what an agent runtime says about itself with a call: facts
// for the policy, never a permission. The shipped policy decides the
// same whatever they say.
type Runtime struct {
	// Agent names the runtime: claude-code, codex, gemini-cli, cursor.
	Agent string `json:"agent,omitempty"`
	// PermissionMode is the runtime's own permission mode (Claude Code's
	// and Codex's permission_mode: default, plan, acceptEdits, …).
	PermissionMode string `json:"permission_mode,omitempty"`
}

// Danger is the danger verdict of a shell command and who gave it.
type Danger struct {
	Verdict string `json:"verdict"` // SAFE or DANGEROUS
	By      string `json:"by"`      // llm, cache, screen, error, unavailable
}

// TraceStep is one step of the decision chain and what happened there.
type TraceStep struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"` // pass, decided, not_reached
}

// RuleMatch is the rule one layer resolved to.
type RuleMatch struct {
	Pattern string `json:"pattern"`
	Action  string `json:"action"`
	// Layer, Path and Access are set for the path rule of "path": the
	// layer it came from, the resolved path it matched and the access.
	Layer  string `json:"layer,omitempty"`
	Path   string `json:"path,omitempty"`
	Access string `json:"access,omitempty"`
}

// PathRule is what a path pattern does to each access kind: one action
// for every access (JSON "deny") or one per kind ({"write": "ask"}). An
// empty kind is not covered by the rule.
type PathRule struct {
	Read  string
	Write string
}

// MarshalJSON writes one action when both kinds have the same one.
func (r PathRule) MarshalJSON() ([]byte, error) {
	if r.Read == r.Write {
		return json.Marshal(r.Read)
	}
	m := map[string]string{}
	if r.Read != "" {
		m["read"] = r.Read
	}
	if r.Write != "" {
		m["write"] = r.Write
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads an action string or an object of read/write actions.
func (r *PathRule) UnmarshalJSON(b []byte) error {
	var action string
	if err := json.Unmarshal(b, &action); err == nil {
		*r = PathRule{Read: action, Write: action}
		return nil
	}
	var kinds map[string]string
	if err := json.Unmarshal(b, &kinds); err != nil {
		return fmt.Errorf(`a path rule is an action or an object of actions per access ({"read": …, "write": …})`)
	}
	*r = PathRule{}
	for kind, action := range kinds {
		switch kind {
		case "read":
			r.Read = action
		case "write":
			r.Write = action
		default:
			return fmt.Errorf("a path rule's access is read or write, not %q", kind)
		}
	}
	return nil
}

// Decision is the answer to a DecideRequest. Every field is always
// present in its JSON form; Trace and Matches only when an explanation was
// asked for.
type Decision struct {
	DecisionID   string  `json:"decision_id"`
	Decision     string  `json:"decision"`
	NeedApproval bool    `json:"need_approval"`
	Source       string  `json:"source"`
	Rule         string  `json:"rule"`
	Reason       string  `json:"reason"`
	Capability   *string `json:"capability"`
	Fingerprint  *string `json:"fingerprint"`
	Grantable    bool    `json:"grantable"`
	// WouldGrant are the fingerprints the answer allow_session (or
	// allow_project) grants: the call's, or each part's not already
	// allowed; empty, never null, when the call is not grantable.
	WouldGrant []string `json:"would_grant"`
	Danger     *Danger  `json:"danger"`
	Revision   string   `json:"revision"`
	// Parts judge a command of more than one part one by one
	// (docs/design.md §5); null for any other call.
	Parts []Part `json:"parts"`
	// Labels are the flow labels the call carries (LabelUntrusted,
	// LabelSensitive, LabelExternal): an allow adds them to the
	// session, as do a person's allow of an ask and a runtime's outcome
	// that the call ran. Empty, never null, when it carries none.
	Labels []string `json:"labels"`

	Trace   []TraceStep          `json:"trace,omitempty"`
	Matches map[string]RuleMatch `json:"matches,omitempty"`
}

// Part is one part of a compound shell command and how it was judged:
// Decision, Source and Rule are null when no command rule or grant
// decides it (the level decides the whole call then).
type Part struct {
	Text        string  `json:"text"`
	Fingerprint *string `json:"fingerprint"`
	Decision    *string `json:"decision"`
	Source      *string `json:"source"`
	Rule        *string `json:"rule"`
}

// Answer is a person's answer to an ask. Only a person's channel gives
// one (POST /v1/decisions/{id}/answer); what a runtime reports is an
// Outcome, never an Answer.
type Answer struct {
	Answer     string    `json:"answer"`
	Channel    string    `json:"channel"`
	AnsweredAt time.Time `json:"answered_at"`
	GrantID    int64     `json:"grant_id,omitempty"`
	// AnsweredBy names the token of the person who answered ("anonymous"
	// where no tokens are configured), or the signed-in person's e-mail;
	// for an answer through a notification's link without sign-in,
	// "link:" and the sink's name; empty for asks
	// answered before it was recorded and for the PDP's own expiry.
	AnsweredBy string `json:"answered_by,omitempty"`
	// AnsweredBySubject is the subject (sub claim) of a person signed in
	// with the organisation's OpenID provider who answered; AnsweredBy
	// is then their e-mail (or the subject, without one). Empty for an
	// answer by a token.
	AnsweredBySubject string `json:"answered_by_subject,omitempty"`
	// ReportedBy is never set by this server. Servers from before
	// outcomes were kept apart recorded a runtime's outcome as an answer
	// naming the token that reported it here: such an answer is no
	// person's, and Allows is false for it.
	ReportedBy string `json:"by,omitempty"`
}

// Answerer is who answers: a token's name, or a signed-in person's
// e-mail (Name) and subject.
type Answerer struct {
	Name, Subject string
}

// Allows says whether a person's answer lets the call run: allow_once,
// allow_session or allow_project. Anything else, no answer, and a
// runtime's report read as an answer (ReportedBy) do not.
func (a *Answer) Allows() bool {
	if a == nil || a.ReportedBy != "" {
		return false
	}
	switch a.Answer {
	case AllowOnce, AllowSession, AllowProject:
		return true
	}
	return false
}

// AnswerRequest is POST /v1/decisions/{id}/answer.
type AnswerRequest struct {
	Answer  string `json:"answer"`
	Channel string `json:"channel"`
}

// RuntimeChannel is the channel of an outcome whose runtime names none.
const RuntimeChannel = "runtime"

// Outcome is what a runtime reported became of an ask it showed in its
// own prompt (POST /v1/decisions/by-tool-use/{id}/outcome): a record of
// what the runtime did, kept apart from the person's answer. It is never
// a permission: the ask stays unanswered until a person answers it, and
// nothing waiting for a person's answer takes an outcome for one.
type Outcome struct {
	// Answer is allow_once (the call ran) or deny (the runtime refused it).
	Answer string `json:"answer"`
	// Channel names the runtime ("claude-code"), never a person's channel.
	Channel string `json:"channel"`
	// By names the dispatcher token that reported it.
	By         string    `json:"by"`
	RecordedAt time.Time `json:"recorded_at"`
}

// OutcomeRequest is POST /v1/decisions/by-tool-use/{id}/outcome.
type OutcomeRequest struct {
	Answer  string `json:"answer"`
	Channel string `json:"channel,omitempty"`
}

// Event is one audit event: the decision, the call it answered, the
// person's answer once given and the runtime's outcome once reported
// (GET /v1/decisions/{id}).
type Event struct {
	Decision
	Time      time.Time      `json:"time"`
	SessionID string         `json:"session_id"`
	Tool      string         `json:"tool"`
	Args      map[string]any `json:"args"`
	Cwd       string         `json:"cwd,omitempty"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
	LatencyUS int64          `json:"latency_us"`
	Answer    *Answer        `json:"answer"`
	// Outcome is what the runtime reported became of the ask, or null.
	Outcome *Outcome `json:"outcome"`
	// Waiting is who waits on the ask now, earliest first: set (empty
	// when nobody waits) on asks GET /v1/decisions and
	// GET /v1/decisions/{id} return, absent elsewhere.
	Waiting []Waiter `json:"waiting,omitzero"`
}

// ListedEvent is an item of GET /v1/decisions: the event with every
// string over the list's limit cut.
type ListedEvent struct {
	Event
	// Truncated says that at least one string was cut; GET
	// /v1/decisions/{id} has the event whole.
	Truncated bool `json:"truncated,omitempty"`
}

// Page is GET /v1/decisions: events newest first, and the id to pass as
// before= for the next page.
type Page struct {
	Decisions  []ListedEvent `json:"decisions"`
	NextBefore string        `json:"next_before,omitempty"`
}

// NewSession is POST /v1/sessions; empty fields take the defaults (a
// sub-agent's workspace and execution mode: its parent's).
type NewSession struct {
	ID              string            `json:"id,omitempty"`
	PermissionLevel Level             `json:"permission_level,omitempty"`
	Mode            Mode              `json:"mode,omitempty"`
	ExecutionMode   ExecutionMode     `json:"execution_mode,omitempty"`
	Workspace       string            `json:"workspace,omitempty"`
	Rules           map[string]string `json:"rules,omitempty"`
	// CommandRules map command prefixes ("go test") to allow, ask or deny.
	CommandRules map[string]string `json:"command_rules,omitempty"`
	// PathRules maps path patterns to what they do (docs/policy.md).
	PathRules       map[string]PathRule `json:"path_rules,omitempty"`
	ParentSessionID string              `json:"parent_session_id,omitempty"`
	Scope           []string            `json:"scope,omitempty"`
	AssessorModel   string              `json:"assessor_model,omitempty"`
}

// Session is a stored session (GET /v1/sessions/{id}).
type Session struct {
	ID              string              `json:"id"`
	PermissionLevel Level               `json:"permission_level"`
	Mode            Mode                `json:"mode"`
	ExecutionMode   ExecutionMode       `json:"execution_mode"`
	Workspace       string              `json:"workspace"`
	Rules           map[string]string   `json:"rules"`
	PathRules       map[string]PathRule `json:"path_rules"`
	ParentSessionID string              `json:"parent_session_id,omitempty"`
	Scope           []string            `json:"scope,omitempty"`
	AssessorModel   string              `json:"assessor_model,omitempty"`
	// CommandRules are the session's layer of command rules.
	CommandRules map[string]string `json:"command_rules"`
	// Owner names the dispatcher token that created the session; only it
	// (or a person's channel) may use it. Empty: no single owner.
	Owner string `json:"owner,omitempty"`
	// Labels are the flow labels of the session's tree, in the order
	// they were set: GET /v1/sessions/{id} always has them ([] for
	// none); lists of sessions leave them out.
	Labels    []FlowLabel `json:"labels,omitempty"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// SessionChange is PATCH /v1/sessions/{id}: nil fields stay as they are;
// an empty rules object removes every rule.
type SessionChange struct {
	PermissionLevel *Level             `json:"permission_level,omitempty"`
	Mode            *Mode              `json:"mode,omitempty"`
	Rules           *map[string]string `json:"rules,omitempty"`
	// CommandRules replaces the session's command rules; an empty object removes them.
	CommandRules *map[string]string `json:"command_rules,omitempty"`
	// PathRules replaces the session's path rules; an empty object removes them.
	PathRules *map[string]PathRule `json:"path_rules,omitempty"`
}

// Grant is a stored grant: calls of the session tree with this capability
// and fingerprint run without asking.
type Grant struct {
	ID          int64     `json:"id"`
	SessionID   string    `json:"session_id"`
	Capability  string    `json:"capability"`
	Fingerprint string    `json:"fingerprint"`
	DecisionID  string    `json:"decision_id,omitempty"`
	Scope       string    `json:"scope"`               // session or project
	Workspace   string    `json:"workspace,omitempty"` // a project grant's workspace
	CreatedAt   time.Time `json:"created_at"`
}

// AccessEvent is a request refused by access control.
type AccessEvent struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Route  string    `json:"route"`
	Code   int       `json:"code"`
	Token  string    `json:"token,omitempty"` // the token's name; empty when unknown
	Reason string    `json:"reason"`
	Remote string    `json:"remote"`
}

// Error is the body of every 4xx and 5xx answer.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is a stable code a client can branch on and a message a
// person can act on.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ImpactReport is what a candidate policy would change in recorded
// decisions (pdp replay --format json, POST /v1/policy/impact).
type ImpactReport struct {
	Replayed int `json:"replayed"`
	Skipped  int `json:"skipped"`
	Changed  int `json:"changed"`
	Loosened int `json:"loosened"`
	// Changes groups the changed decisions by from → to and the
	// candidate's rule, most first.
	Changes []ImpactChange `json:"changes"`
	// Loosening lists the groups that loosen (deny or ask → allow, deny →
	// ask); they are in Changes too.
	Loosening []ImpactChange `json:"loosening"`
}

// ImpactChange is one group of changed decisions.
type ImpactChange struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Rule  string `json:"rule"`
	Count int    `json:"count"`
	// Sessions is how many sessions the changed decisions were made in.
	Sessions int      `json:"sessions"`
	Examples []string `json:"examples"`
}

// The flow labels of a session (docs/design.md §4, "Flow").
const (
	// LabelUntrusted: the session has read text from outside the people
	// and files it trusts (a web page, an MCP tool's result, a download).
	LabelUntrusted = "untrusted_input"
	// LabelSensitive: the session has read a secret.
	LabelSensitive = "sensitive_read"
	// LabelExternal: the session has sent data out or changed state
	// outside.
	LabelExternal = "external_effect"
	// LabelAccepted: a person answered the flow rule's ask
	// allow_session, accepting all three for the session.
	LabelAccepted = "trifecta_accepted"
)

// FlowRule is the rule of the flow's stop, the Rule of Two: the answer
// allow_session to its ask accepts all three labels for the session's
// tree (LabelAccepted) and grants nothing.
const FlowRule = "FLOW_RULE_OF_TWO"

// FlowLabel is a label of a session's tree and the call that set it.
type FlowLabel struct {
	Label      string `json:"label"`
	DecisionID string `json:"decision_id"`
	// SessionID is the session whose call set it: a sub-agent's label
	// is its whole tree's.
	SessionID string    `json:"session_id"`
	Time      time.Time `json:"time"`
	// Summary says what the call was: its tool and what it touched.
	Summary string `json:"summary"`
}
