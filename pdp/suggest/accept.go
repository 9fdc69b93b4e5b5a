package suggest

import (
	"context"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// Acceptance is a person's acceptance of a suggestion for the project of
// a session.
type Acceptance struct {
	// Pattern is the suggestion's rule; SessionID a session of the
	// project.
	Pattern, SessionID string
	// Since and MinAnswers mine the trail as Suggest does (zero Since:
	// the last DefaultWindow).
	Since      time.Time
	MinAnswers int
}

// AcceptStore is what accepting reads beyond the desk: the trail to mine
// and the sessions of the project.
type AcceptStore interface {
	Trail
	GetSession(ctx context.Context, id string) (api.Session, error)
	RootID(ctx context.Context, id string) (string, error)
	Decision(ctx context.Context, id string) (api.Event, error)
}

// Accept accepts a suggestion through the grant code every answer uses.
// The suggestion is mined again (it must still be one); its example call
// is decided anew in the session — an ask, recorded in the trail and the
// live feed like any — and answered allow_project on AcceptChannel by
// the person named by, which grants the call's fingerprint to every
// session of the project. Only a suggestion whose rule is its fingerprint
// can be accepted so: a grant of a shorter fingerprint would allow more
// than the rule.
func Accept(ctx context.Context, desk *pdp.Desk, store AcceptStore, a Acceptance, who pdp.Caller, by api.Answerer) (api.Event, error) {
	if a.Pattern == "" || a.SessionID == "" {
		return api.Event{}, &pdp.Error{Code: "invalid_accept", Message: "pattern and session_id are required"}
	}
	if a.MinAnswers < 0 {
		return api.Event{}, &pdp.Error{Code: "invalid_min_answers", Message: "min_answers must be a whole number from 1"}
	}
	sess, err := store.GetSession(ctx, a.SessionID)
	if err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	}
	rootID, err := store.RootID(ctx, a.SessionID)
	if err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	}
	if root, err := store.GetSession(ctx, rootID); err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	} else if root.Workspace == "" {
		return api.Event{}, pdp.Refused(pdp.ErrNotGrantable, "not_grantable", "session %q has no workspace, so there is no project to accept for", rootID)
	}
	opts := Options{Since: a.Since, MinAnswers: a.MinAnswers}
	if opts.Since.IsZero() {
		opts.Since = time.Now().Add(-DefaultWindow)
	}
	mined, err := Suggest(ctx, desk.Engine.Policy(), store, opts)
	if err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	}
	var sug *api.Suggestion
	for i := range mined.Suggestions {
		if mined.Suggestions[i].Pattern == a.Pattern {
			sug = &mined.Suggestions[i]
		}
	}
	if sug == nil || len(sug.Evidence.Examples) == 0 {
		return api.Event{}, pdp.Refused(pdp.ErrNotFound, "unknown_suggestion", "%q is not a suggestion of the trail now", a.Pattern)
	}
	if sug.Pattern != sug.Fingerprint {
		return api.Event{}, pdp.Refused(pdp.ErrNotGrantable, "not_grantable", "a project grant names the fingerprint %q, which allows more than the rule %q: copy the rule as policy data instead", sug.Fingerprint, sug.Pattern)
	}
	example, err := store.Decision(ctx, sug.Evidence.Examples[0])
	if err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	}
	cwd := sess.Workspace
	if cwd == "" {
		cwd = example.Cwd
	}
	req := api.DecideRequest{SessionID: a.SessionID, Tool: example.Tool, Args: example.Args, Cwd: cwd}
	tree, err := desk.Sessions.Resolve(ctx, req, who)
	if err != nil {
		return api.Event{}, pdp.StoreFailure(err)
	}
	// Only a call this session would ask for, with the suggestion's
	// fingerprint, is decided and answered.
	sim, err := desk.Engine.Simulate(ctx, pdp.Call{Request: req, Session: tree}, false)
	if err != nil {
		return api.Event{}, err
	}
	if sim.Decision != api.Ask || sim.Fingerprint == nil || *sim.Fingerprint != sug.Fingerprint || !sim.Grantable {
		return api.Event{}, pdp.Refused(pdp.ErrConflict, "nothing_to_accept", "%q is %s in session %q (%s), not a grantable ask", a.Pattern, sim.Decision, a.SessionID, sim.Reason)
	}
	d, err := desk.Engine.Decide(ctx, pdp.Call{Request: req, Session: tree})
	if err != nil {
		return api.Event{}, err
	}
	if d.Decision != api.Ask {
		return api.Event{}, pdp.Refused(pdp.ErrConflict, "nothing_to_accept", "%q is %s in session %q (%s), not an ask", a.Pattern, d.Decision, a.SessionID, d.Reason)
	}
	return desk.Answer(ctx, d.DecisionID, api.AllowProject, AcceptChannel, by)
}
