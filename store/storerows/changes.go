package storerows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
)

// Changes reads the rows of `SELECT seq, time, kind, session_id,
// decision_id, session FROM changes`; it returns the changes without
// their decisions and, for AttachDecisions, the id each names ("" for
// none).
func Changes(rows Rows) ([]feed.Change, []string, error) {
	var out []feed.Change
	var decisionIDs []string
	for rows.Next() {
		var c feed.Change
		var t Time
		var decisionID, session *string
		if err := rows.Scan(&c.Seq, &t, &c.Kind, &c.SessionID, &decisionID, &session); err != nil {
			return nil, nil, fmt.Errorf("reading the change log: %w", err)
		}
		c.Time = t.T
		c.Session = ChangeSession(session)
		out = append(out, c)
		decisionIDs = append(decisionIDs, str(decisionID))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading the change log: %w", err)
	}
	return out, decisionIDs, nil
}

// ChangeSession is the session snapshot of a change log row: nil when
// the column is NULL or unreadable.
func ChangeSession(raw *string) *api.Session {
	if raw == nil {
		return nil
	}
	var rec api.Session
	if json.Unmarshal([]byte(*raw), &rec) != nil {
		return nil
	}
	return &rec
}

// AttachDecisions gives each change the decision whose id it names
// (decisionIDs[i] for changes[i], "" for none), as decision reads it
// now; a decision pruned from the trail since leaves its change without
// one.
func AttachDecisions(ctx context.Context, changes []feed.Change, decisionIDs []string, decision func(context.Context, string) (api.Event, error)) error {
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
