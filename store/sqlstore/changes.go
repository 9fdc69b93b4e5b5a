package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/store/storerows"
)

// Columns are the change's values for the decision_id and session
// columns: NULL for none, the session as JSON.
func (c Change) Columns() (decisionID, session *string, err error) {
	if c.DecisionID != "" {
		id := c.DecisionID
		decisionID = &id
	}
	if c.Session != nil {
		raw, err := json.Marshal(c.Session)
		if err != nil {
			return nil, nil, fmt.Errorf("logging the change of %q: %w", c.SessionID, err)
		}
		snapshot := string(raw)
		session = &snapshot
	}
	return decisionID, session, nil
}

// Asks are the change log entries of a batch's asks, in its order.
func Asks(batch []PendingEvent) []Change {
	var asks []Change
	for _, p := range batch {
		if ev := p.Event; ev.Decision.Decision == api.Ask {
			asks = append(asks, Change{Time: ev.Time, Kind: feed.ChangeAsk, SessionID: ev.SessionID, DecisionID: ev.Decision.DecisionID})
		}
	}
	return asks
}

// ChangesAfter returns up to limit changes after seq, oldest first, each
// with its decision as the audit trail now has it, or the session as it
// was after a level change.
func (s *Store) ChangesAfter(ctx context.Context, after int64, limit int) ([]feed.Change, error) {
	rows, err := s.Read.Query(ctx, `SELECT seq, time, kind, session_id, decision_id, session FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the change log: %w", err)
	}
	out, decisionIDs, err := storerows.Changes(rows)
	rows.Close()
	if err != nil {
		return nil, err
	}
	if err := storerows.AttachDecisions(ctx, out, decisionIDs, s.Decision); err != nil {
		return nil, err
	}
	return out, nil
}

// ChangeBounds returns the first and last seq of the change log (0, 0
// when it is empty).
func (s *Store) ChangeBounds(ctx context.Context) (first, last int64, err error) {
	// Two subqueries, not MIN and MAX in one: each alone reads one end of
	// the key's index, both together scan the whole log.
	err = s.Read.QueryRow(ctx, `SELECT COALESCE((SELECT MIN(seq) FROM changes), 0), COALESCE((SELECT MAX(seq) FROM changes), 0)`).Scan(&first, &last)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the change log: %w", err)
	}
	return first, last, nil
}
