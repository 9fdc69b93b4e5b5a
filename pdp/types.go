package pdp

import (
	"time"

	"github.com/toolperm/pdp/api"
)

// Level is a session's permission level for LOCAL tools.
type Level = api.Level

// The four permission levels; READ_ONLY is the default.
const (
	ReadOnly  = api.ReadOnly
	ReadWrite = api.ReadWrite
	Smart     = api.Smart
	Full      = api.Full
)

// Levels lists the permission levels from strictest to loosest.
var Levels = []Level{ReadOnly, ReadWrite, Smart, Full}

// Mode is a session's confirmation mode.
type Mode = api.Mode

// The three modes; on-demand is the default.
const (
	AlwaysAsk = api.AlwaysAsk
	OnDemand  = api.OnDemand
	AllowAll  = api.AllowAll
)

// Modes lists the confirmation modes. They differ only where no rule
// applies: on-demand denies, always-ask asks, allow-all allows everything
// not explicitly denied.
var Modes = []Mode{AlwaysAsk, OnDemand, AllowAll}

// ExecutionMode says where a session's tools run; fixed at creation.
type ExecutionMode = api.ExecutionMode

// LOCAL tools run on the user's machine under the level; CLOUD tools run
// in the server's sandbox.
const (
	Local = api.Local
	Cloud = api.Cloud
)

// The answers a decision can carry.
const (
	Allow = api.Allow
	Ask   = api.Ask
	Deny  = api.Deny
)

// Rule actions beyond the three answers: assess asks the danger assessor.
const Assess = "assess"

// Grant lets calls with this fingerprint run without asking, for the
// session tree it belongs to.
type Grant struct {
	Capability  string `json:"capability"`
	Fingerprint string `json:"fingerprint"`
	// Scope is "project" for a grant of the session's project
	// (allow_project); empty or "session" for the session's own.
	Scope string `json:"scope,omitempty"`
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
	// CommandRules are the session's layer of command rules.
	CommandRules map[string]string `json:"command_rules,omitempty"`
	// PathRules are the session's layer of path rules.
	PathRules *PathRules `json:"path_rules,omitempty"`
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
type Request = api.DecideRequest

// Danger is the danger verdict of a shell command and who gave it.
type Danger = api.Danger

// The danger verdicts.
const (
	Safe      = "SAFE"
	Dangerous = "DANGEROUS"
)

// TraceStep is one step of the chain and what happened there.
type TraceStep = api.TraceStep

// RuleMatch is the rule one layer resolved to.
type RuleMatch = api.RuleMatch

// Decision is the answer to a Request; its JSON form is the contract of
// docs/design.md §4.
type Decision = api.Decision

// Event is the audit record of one decision.
type Event struct {
	Decision  Decision
	Request   Request
	SessionID string
	Time      time.Time
	Latency   time.Duration
	// Recorded is what the decision was judged on, for replay; nil when
	// the policy gave no answer (an error, no policy).
	Recorded *Recorded
}
