package pdp

import "time"

// Level is a session's permission level for LOCAL tools.
type Level string

// The four permission levels; READ_ONLY is the default.
const (
	ReadOnly  Level = "READ_ONLY"
	ReadWrite Level = "READ_WRITE"
	Smart     Level = "SMART"
	Full      Level = "FULL"
)

// Levels lists the permission levels from strictest to loosest.
var Levels = []Level{ReadOnly, ReadWrite, Smart, Full}

// Mode is a session's confirmation mode.
type Mode string

// The three modes; on-demand is the default.
const (
	AlwaysAsk Mode = "always-ask"
	OnDemand  Mode = "on-demand"
	AllowAll  Mode = "allow-all"
)

// Modes lists the confirmation modes. They differ only where no rule
// applies: on-demand denies, always-ask asks, allow-all allows everything
// not explicitly denied.
var Modes = []Mode{AlwaysAsk, OnDemand, AllowAll}

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

// Rule actions beyond the three answers: assess asks the danger assessor.
const Assess = "assess"

// Grant lets calls with this fingerprint run without asking, for the
// session tree it belongs to.
type Grant struct {
	Capability  string `json:"capability"`
	Fingerprint string `json:"fingerprint"`
}

// Session is the state a decision depends on. The service stores it; the
// CLI takes it inline in the shape docs/design.md §8 gives.
type Session struct {
	ID              string            `json:"id,omitempty"`
	PermissionLevel Level             `json:"permission_level,omitempty"`
	Mode            Mode              `json:"mode,omitempty"`
	ExecutionMode   ExecutionMode     `json:"execution_mode,omitempty"`
	Workspace       string            `json:"workspace,omitempty"`
	Rules           map[string]string `json:"rules,omitempty"`
	// Scope limits a sub-agent to these capability patterns; empty means
	// no limit beyond its parent's decision.
	Scope  []string `json:"scope,omitempty"`
	Grants []Grant  `json:"grants,omitempty"`
	// Parent is the session a sub-agent was spawned from.
	Parent *Session `json:"parent,omitempty"`
	// AssessorModel is the model of the agent the session belongs to,
	// used by the danger assessor when set.
	AssessorModel string `json:"assessor_model,omitempty"`
	// Owner is the dispatcher that created a stored session (access
	// control only; the policy never sees it).
	Owner string `json:"-"`
}

// Request is one tool call a dispatcher asks about.
type Request struct {
	SessionID  string         `json:"session_id"`
	Tool       string         `json:"tool,omitempty"`
	Capability string         `json:"capability,omitempty"`
	Args       map[string]any `json:"args,omitempty"`
	Cwd        string         `json:"cwd,omitempty"`
}

// Danger is the danger verdict of a shell command and who gave it.
type Danger struct {
	Verdict string `json:"verdict"` // SAFE or DANGEROUS
	By      string `json:"by"`      // llm, cache, screen, error, unavailable
}

// The danger verdicts.
const (
	Safe      = "SAFE"
	Dangerous = "DANGEROUS"
)

// TraceStep is one step of the chain and what happened there.
type TraceStep struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"` // pass, decided, not_reached
}

// RuleMatch is the rule one layer resolved to.
type RuleMatch struct {
	Pattern string `json:"pattern"`
	Action  string `json:"action"`
}

// Decision is the answer to a Request. Every field is always present in
// its JSON form; Trace and Matches only when an explanation was asked for.
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
	Danger       *Danger `json:"danger"`
	Revision     string  `json:"revision"`

	Trace   []TraceStep          `json:"trace,omitempty"`
	Matches map[string]RuleMatch `json:"matches,omitempty"`
}

// Event is the audit record of one decision.
type Event struct {
	Decision  Decision
	Request   Request
	SessionID string
	Time      time.Time
	Latency   time.Duration
}
