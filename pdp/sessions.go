package pdp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/toolperm/pdp/api"
)

// MaxSubAgentDepth is how many levels of sub-agents a session tree may
// have below its root: deeper chains are refused at creation (400
// chain_too_deep), so every session that exists can be decided in.
const MaxSubAgentDepth = 15

// Caller is who asks for a session, as the session rules see it.
type Caller struct {
	// Name is the caller's token name; empty on an open server.
	Name string
	// Person is a person's channel (or an open server, or an admin): it
	// owns no session, may use every one and may create any.
	Person bool
	// ReadsAll may read every session and decision (a person, an auditor).
	ReadsAll bool
}

// owner is the owner a session created by this caller gets: the token's
// name for a dispatcher, nobody for a person's channel.
func (c Caller) owner() string {
	if c.Person {
		return ""
	}
	return c.Name
}

// mayUse reports whether the caller may decide in a session owned by owner.
func (c Caller) mayUse(owner string) bool {
	return owner == "" || c.Person || owner == c.Name
}

// foreignIn is the first session of a tree the caller may not use, or nil.
func (c Caller) foreignIn(tree *SessionTree) *SessionTree {
	for cur := tree; cur != nil; cur = cur.Parent {
		if !c.mayUse(cur.Owner) {
			return cur
		}
	}
	return nil
}

// Refusal is a request the caller's role allows but its content does not
// (a looser session, another dispatcher's session): the API answers 403 —
// or, when Hidden, exactly what an unknown id gets (Hidden is that error),
// so ids cannot be probed — and records Reason.
type Refusal struct {
	Reason  string
	Message string
	Hidden  error
}

func (r *Refusal) Error() string {
	if r.Hidden != nil {
		return r.Hidden.Error()
	}
	return r.Message
}

// Unwrap lets a hidden refusal be told apart only as what it hides.
func (r *Refusal) Unwrap() error { return r.Hidden }

func refuse(reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Sessions holds the rules of sessions that every front end follows: how
// an unknown session is created on its first decision, what a sub-agent
// inherits, what a dispatcher may create, and who may use and read what.
// Ownership is always checked before anything is written.
type Sessions struct {
	Store SessionStore
	// DefaultLevel and DefaultMode apply to sessions created without them.
	DefaultLevel api.Level
	DefaultMode  api.Mode
}

// Resolve loads the session a decision runs in, with its parents and
// grants, creating an unknown one with the defaults (owned by the
// caller, the request's absolute cwd as its workspace). A session without
// a workspace adopts the first absolute cwd it is asked about — after the
// caller is known to own it: a refused request changes nothing.
func (s *Sessions) Resolve(ctx context.Context, req api.DecideRequest, who Caller) (*SessionTree, error) {
	tree, err := s.Store.SessionTree(ctx, req.SessionID)
	if errors.Is(err, ErrNotFound) {
		_, err = s.Store.EnsureSession(ctx, api.Session{
			Owner: who.owner(), ID: req.SessionID, PermissionLevel: s.level(), Mode: s.mode(),
			ExecutionMode: api.Local, Workspace: absCwd(req.Cwd),
		})
		if err == nil {
			// Another request may have created it first: its session is
			// the one whose owner is checked.
			tree, err = s.Store.SessionTree(ctx, req.SessionID)
		}
	}
	if err != nil {
		return nil, err
	}
	if foreign := who.foreignIn(tree); foreign != nil {
		return nil, refuse("another dispatcher's session", "session %q belongs to another dispatcher", foreign.ID)
	}
	if tree.Workspace == "" && tree.Parent == nil && absCwd(req.Cwd) != "" {
		if err := s.Store.ClaimWorkspace(ctx, req.SessionID, absCwd(req.Cwd)); err != nil {
			return nil, err
		}
		return s.Store.SessionTree(ctx, req.SessionID)
	}
	return tree, nil
}

func absCwd(cwd string) string {
	if filepath.IsAbs(cwd) {
		return filepath.Clean(cwd)
	}
	return ""
}

func (s *Sessions) level() api.Level {
	if s.DefaultLevel == "" {
		return api.ReadOnly
	}
	return s.DefaultLevel
}

func (s *Sessions) mode() api.Mode {
	if s.DefaultMode == "" {
		return api.OnDemand
	}
	return s.DefaultMode
}

// Create stores a new session for the caller: an id when it has none,
// the defaults for what it leaves out, a sub-agent's workspace and
// execution mode from its parent. A dispatcher may not create a session
// looser than the defaults, nor under another dispatcher's tree.
func (s *Sessions) Create(ctx context.Context, spec api.NewSession, who Caller) (api.Session, error) {
	if spec.ID == "" {
		spec.ID = NewSessionID()
	}
	if !ValidSessionID(spec.ID) {
		return api.Session{}, invalid("invalid_session_id", "id must be 1-128 characters of [A-Za-z0-9._:-]")
	}
	if spec.ParentSessionID != "" {
		if err := s.inherit(ctx, &spec, who); err != nil {
			return api.Session{}, err
		}
	}
	if spec.PermissionLevel == "" {
		spec.PermissionLevel = s.level()
	}
	if spec.Mode == "" {
		spec.Mode = s.mode()
	}
	if spec.ExecutionMode == "" {
		spec.ExecutionMode = api.Local
	}
	if spec.Rules == nil {
		spec.Rules = map[string]string{}
	}
	if spec.CommandRules == nil {
		spec.CommandRules = map[string]string{}
	}
	if err := s.validate(spec); err != nil {
		return api.Session{}, err
	}
	if !who.Person {
		if err := s.noLooser(spec); err != nil {
			return api.Session{}, err
		}
	}
	return s.Store.CreateSession(ctx, api.Session{
		Owner: who.owner(), ID: spec.ID, PermissionLevel: spec.PermissionLevel, Mode: spec.Mode,
		ExecutionMode: spec.ExecutionMode, Workspace: spec.Workspace, Rules: spec.Rules, CommandRules: spec.CommandRules, PathRules: spec.PathRules,
		ParentSessionID: spec.ParentSessionID, Scope: spec.Scope, AssessorModel: spec.AssessorModel,
	})
}

// inherit checks a sub-agent's parent and fills in what it inherits.
func (s *Sessions) inherit(ctx context.Context, spec *api.NewSession, who Caller) error {
	parent, err := s.Store.SessionTree(ctx, spec.ParentSessionID)
	if errors.Is(err, ErrNotFound) {
		return invalid("parent_not_found", "parent session %q does not exist", spec.ParentSessionID)
	} else if err != nil {
		return err
	}
	if foreign := who.foreignIn(parent); foreign != nil {
		return refuse("parent in another dispatcher's session", "parent session %q belongs to another dispatcher", foreign.ID)
	}
	depth := 1
	for cur := parent.Parent; cur != nil; cur = cur.Parent {
		depth++
	}
	if depth > MaxSubAgentDepth {
		return invalid("chain_too_deep", "a sub-agent may be at most %d levels below its root session; under %q it would be %d", MaxSubAgentDepth, spec.ParentSessionID, depth)
	}
	// A sub-agent runs where its parent runs, in its workspace, unless told otherwise.
	if spec.Workspace == "" {
		spec.Workspace = parent.Workspace
	}
	if spec.ExecutionMode == "" {
		spec.ExecutionMode = parent.ExecutionMode
	}
	return nil
}

func (s *Sessions) validate(spec api.NewSession) error {
	if len(spec.AssessorModel) > 200 {
		return invalid("invalid_assessor_model", "assessor_model is longer than 200 characters")
	}
	if spec.Workspace != "" && !filepath.IsAbs(spec.Workspace) {
		return invalid("invalid_workspace", "workspace must be an absolute path, got %q", spec.Workspace)
	}
	return ValidateSession(&SessionTree{PermissionLevel: spec.PermissionLevel, Mode: spec.Mode, ExecutionMode: spec.ExecutionMode, Rules: spec.Rules, CommandRules: spec.CommandRules,
		PathRules: NewPathRules(spec.PathRules), Scope: spec.Scope})
}

// modeLooseness orders modes by what they let through: on-demand denies
// what no rule covers, always-ask asks, allow-all allows.
var modeLooseness = map[api.Mode]int{api.OnDemand: 0, api.AlwaysAsk: 1, api.AllowAll: 2}

// noLooser checks that a session a dispatcher creates is no looser than
// the defaults: its level and mode at most as permissive, only deny rules
// (any other rule could open what the defaults deny), and the configured
// assessor model. Execution mode, workspace, parent and scope are the
// dispatcher's to say: it knows where its tools run.
func (s *Sessions) noLooser(spec api.NewSession) error {
	if spec.AssessorModel != "" {
		return refuse("assessor model", "a dispatcher may not choose the assessor's model")
	}
	if slices.Index(Levels, spec.PermissionLevel) > slices.Index(Levels, s.level()) {
		return refuse("looser level", "a dispatcher may not create a session above the default level %s", s.level())
	}
	if modeLooseness[spec.Mode] > modeLooseness[s.mode()] {
		return refuse("looser mode", "a dispatcher may not create a session with a mode looser than the default %s", s.mode())
	}
	for prefix, action := range spec.CommandRules {
		if action != api.Deny {
			return refuse("non-deny command rule", "a dispatcher may only add deny command rules; %q is %s", prefix, action)
		}
	}
	for pattern, action := range spec.Rules {
		if action != api.Deny {
			return refuse("non-deny rule", "a dispatcher may only add deny rules; %q is %s", pattern, action)
		}
	}
	for pattern, rule := range spec.PathRules {
		for _, action := range []string{rule.Read, rule.Write} {
			if action != "" && action != api.Deny {
				return refuse("non-deny path rule", "a dispatcher may only add deny path rules; %q is %s", pattern, action)
			}
		}
	}
	return nil
}

// MayRead lets the caller read a session, or a decision made in it, only
// when it reads everything or may use the session's whole tree; anything
// else is a hidden refusal that reads as notFound, the answer to an
// unknown id.
func (s *Sessions) MayRead(ctx context.Context, sessionID string, who Caller, notFound error) error {
	if who.ReadsAll {
		return nil
	}
	tree, err := s.Store.SessionTree(ctx, sessionID)
	if errors.Is(err, ErrNotFound) {
		return &Refusal{Reason: "session gone", Hidden: notFound}
	} else if err != nil {
		return err
	}
	if who.foreignIn(tree) != nil {
		return &Refusal{Reason: "another dispatcher's session", Hidden: notFound}
	}
	return nil
}

// InlineSession is a session given inline (pdp decide, the simulator):
// it, and each of its parents, takes the request's cwd as workspace when
// it names none, as an auto-created session gets its first cwd. A nil
// session becomes one with the defaults.
func InlineSession(s *SessionTree, cwd string) *SessionTree {
	if s == nil {
		s = &SessionTree{}
	}
	for cur := s; cur != nil; cur = cur.Parent {
		if cur.Workspace == "" {
			cur.Workspace = cwd
		}
	}
	return s
}
