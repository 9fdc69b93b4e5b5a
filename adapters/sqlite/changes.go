package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// linkCalls runs in the audit transaction: it keeps each call's runtime
// id (tool_use_id) and writes each ask to the change log, so the ask and
// its change commit together.
func linkCalls(ctx context.Context, tx *sql.Tx, batch []pendingEvent) error {
	for _, p := range batch {
		ev := p.ev
		if id := ev.Request.ToolUseID; id != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE decisions SET tool_use_id = ? WHERE id = ?`, id, ev.Decision.DecisionID); err != nil {
				return fmt.Errorf("keeping the tool use id of %s: %w", ev.Decision.DecisionID, err)
			}
		}
		if ev.Decision.Decision == pdp.Ask {
			if err := addChange(ctx, tx, ev.Time, pdp.ChangeAsk, ev.SessionID, ev.Decision.DecisionID, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// addChange appends one entry to the change log inside tx: a decision's
// id for an ask or an answer, the session as it now is for a level change.
func addChange(ctx context.Context, tx *sql.Tx, t time.Time, kind, sessionID, decisionID string, session *pdp.StoredSession) error {
	var decision, snapshot any
	if decisionID != "" {
		decision = decisionID
	}
	if session != nil {
		raw, err := json.Marshal(session)
		if err != nil {
			return fmt.Errorf("logging the change of %q: %w", sessionID, err)
		}
		snapshot = string(raw)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO changes (time, kind, session_id, decision_id, session) VALUES (?,?,?,?,?)`,
		formatTime(t), kind, sessionID, decision, snapshot); err != nil {
		return fmt.Errorf("logging the change of %q: %w", sessionID, err)
	}
	return nil
}

// ChangesAfter returns up to limit changes after seq, oldest first, each
// with its decision as the audit trail now has it, or the session as it
// was after a level change.
func (s *Store) ChangesAfter(ctx context.Context, after int64, limit int) ([]pdp.Change, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT seq, time, kind, session_id, decision_id, session FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the change log: %w", err)
	}
	out, decisionIDs, err := storerows.Changes(rows, parseTime)
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
	err = s.read.QueryRowContext(ctx, `SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM changes`).Scan(&first, &last)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the change log: %w", err)
	}
	return first, last, nil
}
