package storerows

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolperm/pdp/pdp"
)

// ChangeSession is the session snapshot of a change log row: nil when
// the column is NULL or unreadable.
func ChangeSession(raw *string) *pdp.StoredSession {
	if raw == nil {
		return nil
	}
	var rec pdp.StoredSession
	if json.Unmarshal([]byte(*raw), &rec) != nil {
		return nil
	}
	return &rec
}

// AttachDecisions gives each change the decision whose id it names
// (decisionIDs[i] for changes[i], "" for none), as decision reads it
// now; a decision pruned from the trail since leaves its change without
// one.
func AttachDecisions(ctx context.Context, changes []pdp.Change, decisionIDs []string, decision func(context.Context, string) (pdp.DecisionEvent, error)) error {
	for i, id := range decisionIDs {
		if id == "" {
			continue
		}
		rec, err := decision(ctx, id)
		switch {
		case errors.Is(err, pdp.ErrNotFound):
			// Pruned from the trail since: the change stays, without it.
		case err != nil:
			return err
		default:
			changes[i].Decision = &rec
		}
	}
	return nil
}
