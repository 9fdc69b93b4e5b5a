package pdp

import (
	"time"

	"github.com/toolperm/pdp/api"
)

// The domain's words that travel on the wire (levels, modes, answers,
// the decision and the call) are package api's, used as api.* here too,
// so each is written once.

// Levels lists the permission levels from strictest to loosest.
var Levels = []api.Level{api.ReadOnly, api.ReadWrite, api.Smart, api.Full}

// Modes lists the confirmation modes. They differ only where no rule
// applies: on-demand denies, always-ask asks, allow-all allows everything
// not explicitly denied.
var Modes = []api.Mode{api.AlwaysAsk, api.OnDemand, api.AllowAll}

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

// SessionTree is a session as a decision judges it: its settings, the
// grants of its tree and, through Parent, the sessions it was spawned
// from. The stores build it from their records (api.Session, one per
// session); the CLI takes it inline in the shape docs/design.md §8 gives.
type SessionTree struct {
	ID              string            `json:"id,omitempty"`
	PermissionLevel api.Level         `json:"permission_level,omitempty"`
	Mode            api.Mode          `json:"mode,omitempty"`
	ExecutionMode   api.ExecutionMode `json:"execution_mode,omitempty"`
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
	// Labels are the flow labels of the tree, kept on its root (flow.go).
	Labels []api.FlowLabel `json:"labels,omitempty"`
	// Parent is the session a sub-agent was spawned from.
	Parent *SessionTree `json:"parent,omitempty"`
	// AssessorModel is the model of the agent the session belongs to,
	// used by the danger assessor when set.
	AssessorModel string `json:"assessor_model,omitempty"`
	// Owner is the dispatcher that created a stored session (access
	// control only; the policy never sees it).
	Owner string `json:"-"`
}

// The danger verdicts.
const (
	Safe      = "SAFE"
	Dangerous = "DANGEROUS"
)

// withDefaults returns a copy of s with the defaults filled in: READ_ONLY,
// on-demand, LOCAL. The workspace has no default here: a session without
// one confines nothing, so every path is outside. Callers that have a
// default (the CLI's inline sessions, the service's first cwd) fill it in.
func withDefaults(s *SessionTree) *SessionTree {
	out := SessionTree{}
	if s != nil {
		out = *s
	}
	if out.PermissionLevel == "" {
		out.PermissionLevel = api.ReadOnly
	}
	if out.Mode == "" {
		out.Mode = api.OnDemand
	}
	if out.ExecutionMode == "" {
		out.ExecutionMode = api.Local
	}
	return &out
}

// AuditRecord is what the engine hands the audit log for one decision:
// the decision, the call, when and how long; the store keeps it and
// answers with api.Event (the decision as recorded, with its answer).
type AuditRecord struct {
	Decision  api.Decision
	Request   api.DecideRequest
	SessionID string
	Time      time.Time
	Latency   time.Duration
	// Recorded is what the decision was judged on, for replay; nil when
	// the policy gave no answer (an error, no policy).
	Recorded *Recorded
	// Labels are the flow labels an allowed call gives its session tree
	// that it did not have, to be kept on the tree's root, LabelRoot, in
	// the transaction of the record.
	Labels    []api.FlowLabel
	LabelRoot string
}
