package suggest

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// MaxProjectSessions bounds the sessions ProjectSessions reads; a store
// with more is an error, never a project read in part.
const MaxProjectSessions = 100_000

// ProjectSessions are the sessions of the project of session id: those
// of its root's owner in its root's workspace, as a project grant
// (allow_project) reaches them. A root without a workspace has no
// project: the project is the session alone.
func ProjectSessions(ctx context.Context, store pdp.SessionStore, id string) (map[string]bool, error) {
	rootID, err := store.RootID(ctx, id)
	if err != nil {
		return nil, err
	}
	root, err := store.GetSession(ctx, rootID)
	if err != nil {
		return nil, err
	}
	if root.Workspace == "" {
		return map[string]bool{id: true}, nil
	}
	list, err := store.ListSessions(ctx, MaxProjectSessions+1)
	if err != nil {
		return nil, fmt.Errorf("listing the sessions of the project: %w", err)
	}
	if len(list) > MaxProjectSessions {
		return nil, fmt.Errorf("more than %d sessions: the project of %q cannot be read whole", MaxProjectSessions, id)
	}
	out := map[string]bool{id: true, rootID: true}
	for _, s := range list {
		if s.Workspace == root.Workspace && s.Owner == root.Owner {
			out[s.ID] = true
		}
	}
	return out, nil
}
