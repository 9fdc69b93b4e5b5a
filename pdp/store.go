package pdp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
)

// The records the store keeps are the API's shapes (package api:
// api.Session, api.Event, api.Answer, api.Outcome, api.Grant,
// api.AccessEvent), so each shape is written once; a storage backend maps
// its columns to them and a column rename changes nothing a client sees.

// Errors the stores return and callers branch on.
var (
	ErrNotFound = errors.New("not found")
	ErrExists   = errors.New("already exists")
	ErrConflict = errors.New("conflict")
	// ErrNotGrantable is the answer allow_session to a call without a
	// fingerprint: no grant can name it.
	ErrNotGrantable = errors.New("the call is not grantable")
)

// SessionPatch changes what may change after creation; nil fields stay.
type SessionPatch struct {
	PermissionLevel *api.Level
	Mode            *api.Mode
	Rules           map[string]string // with RulesSet: the new rules (empty: none)
	RulesSet        bool
	// CommandRules, with CommandRulesSet, replace the command rules.
	CommandRules    map[string]string
	CommandRulesSet bool
	PathRules       map[string]api.PathRule // with PathRulesSet: the new path rules (empty: none)
	PathRulesSet    bool
}

// ApplySettings changes rec's level, mode, rules and path rules as the
// patch says and reports whether the level changed (which the change
// log records). Command rules are left to the store: each keeps them
// its own way.
func (p SessionPatch) ApplySettings(rec *api.Session) (levelChanged bool) {
	levelChanged = p.PermissionLevel != nil && *p.PermissionLevel != rec.PermissionLevel
	if p.PermissionLevel != nil {
		rec.PermissionLevel = *p.PermissionLevel
	}
	if p.Mode != nil {
		rec.Mode = *p.Mode
	}
	if p.RulesSet {
		rec.Rules = p.Rules
	}
	if p.PathRulesSet {
		rec.PathRules = p.PathRules
	}
	return levelChanged
}

// DecisionFilter selects decisions for listing, newest first; zero values
// select everything.
type DecisionFilter struct {
	SessionID string
	Decision  string
	Source    string
	Since     time.Time // only events at or after this time
	Before    string    // a decision id: only older ones
	Limit     int
	// Pending selects unanswered asks only, those someone waits on first
	// (waiting.go).
	Pending bool
}

// SessionOf is a stored session as the engine sees it, without its
// parent or grants.
func SessionOf(r api.Session) *SessionTree {
	return &SessionTree{
		ID:              r.ID,
		PermissionLevel: r.PermissionLevel,
		Mode:            r.Mode,
		ExecutionMode:   r.ExecutionMode,
		Workspace:       r.Workspace,
		Rules:           r.Rules,
		CommandRules:    r.CommandRules,
		PathRules:       NewPathRules(r.PathRules),
		Scope:           r.Scope,
		AssessorModel:   r.AssessorModel,
		Owner:           r.Owner,
	}
}

// AssembleTree is the session tree of chain — a session followed by its
// parents, nearest first, ending at the root — with grants and flow
// labels on its root, as SessionTree returns it.
func AssembleTree(chain []api.Session, grants []Grant, labels []api.FlowLabel) *SessionTree {
	var parent *SessionTree
	for i := len(chain) - 1; i >= 0; i-- {
		sess := SessionOf(chain[i])
		sess.Parent = parent
		parent = sess
	}
	root := parent
	for root.Parent != nil {
		root = root.Parent
	}
	root.Grants = append(root.Grants, grants...)
	root.Labels = append(root.Labels, labels...)
	return parent
}

// GrantFingerprints are what an answer grants: the call's fingerprint,
// or each part's that no rule or grant allows yet. A call of which any
// such part has none is not grantable. The decision's would_grant is the
// same list (WouldGrant), so the two never disagree.
func GrantFingerprints(rec api.Event) ([]string, error) {
	return grantFingerprints(rec.Decision)
}

// WouldGrant is the decision's would_grant: GrantFingerprints of d, and
// an empty list when d is not grantable.
func WouldGrant(d api.Decision) []string {
	fps, err := grantFingerprints(d)
	if err != nil {
		return []string{}
	}
	return fps
}

func grantFingerprints(d api.Decision) ([]string, error) {
	if !d.Grantable || d.Capability == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotGrantable, notGrantableReason(d))
	}
	if d.Fingerprint != nil {
		return []string{*d.Fingerprint}, nil
	}
	var out []string
	for _, p := range d.Parts {
		if p.Decision != nil && *p.Decision == api.Allow {
			continue
		}
		if p.Fingerprint == nil {
			return nil, fmt.Errorf("%w: the part %q has no fingerprint", ErrNotGrantable, p.Text)
		}
		out = append(out, *p.Fingerprint)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotGrantable, notGrantableReason(d))
	}
	return out, nil
}

func notGrantableReason(d api.Decision) string {
	if d.Capability == nil || *d.Capability != "shell.exec" {
		return "only shell commands can be allowed for the session; path capabilities never can"
	}
	return "a part of the command is not one plain command with a literal program (substitutions, file redirections, assignments, wrappers, interpreters and dangerous programs have no fingerprint), or a command rule denies or asks for it"
}

// SessionStore keeps sessions and their trees.
type SessionStore interface {
	// CreateSession stores a new session; ErrExists when the id is taken.
	CreateSession(ctx context.Context, s api.Session) (api.Session, error)
	// EnsureSession creates the session unless one with its id exists,
	// and returns the stored one either way.
	EnsureSession(ctx context.Context, s api.Session) (api.Session, error)
	// ClaimWorkspace sets the workspace of a session that has none.
	ClaimWorkspace(ctx context.Context, id, workspace string) error
	GetSession(ctx context.Context, id string) (api.Session, error)
	UpdateSession(ctx context.Context, id string, p SessionPatch) (api.Session, error)
	// SessionTree loads a session with its parents and the grants of its
	// tree, ready to decide in; ErrNotFound for an unknown id.
	SessionTree(ctx context.Context, id string) (*SessionTree, error)
	// RootID is the id of the root of the session's tree.
	RootID(ctx context.Context, id string) (string, error)
	ListSessions(ctx context.Context, limit int) ([]api.Session, error)
}

// DecisionStore reads the audit trail and records answers.
type DecisionStore interface {
	Decision(ctx context.Context, id string) (api.Event, error)
	Decisions(ctx context.Context, f DecisionFilter) ([]api.Event, error)
	// AnswerDecision records a person's answer to an ask, exactly once
	// (ErrConflict for a second answer); allow_session also stores a
	// grant on the root session (ErrNotGrantable without a fingerprint).
	AnswerDecision(ctx context.Context, id, answer, channel string, by api.Answerer) (api.Event, error)
}

// GrantStore lists and revokes grants.
type GrantStore interface {
	Grants(ctx context.Context, sessionID string) ([]api.Grant, error)
	DeleteGrant(ctx context.Context, sessionID string, id int64) error
}

// AccessLog records refused requests.
type AccessLog interface {
	RecordAccessDenied(ctx context.Context, ev api.AccessEvent) error
	AccessEvents(ctx context.Context, limit int) ([]api.AccessEvent, error)
}
