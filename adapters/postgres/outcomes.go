package postgres

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// DecisionsByToolUse returns the decisions made for a call with this
// runtime id, newest first (at most 16: a runtime's ids are unique).
func (s *Store) DecisionsByToolUse(ctx context.Context, toolUseID string) ([]pdp.DecisionEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE tool_use_id = $1 ORDER BY id DESC LIMIT 16`, toolUseID)
	if err != nil {
		return nil, fmt.Errorf("finding tool use %q: %w", toolUseID, err)
	}
	defer rows.Close()
	var out []pdp.DecisionEvent
	for rows.Next() {
		rec, err := scanDecision(rows)
		if err != nil {
			return nil, fmt.Errorf("finding tool use %q: %w", toolUseID, err)
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// RecordOutcome records what a runtime reports became of an ask (allow_once
// or deny), naming the token that reported it; it never creates a grant.
// As an answer it is a conditional UPDATE: pdp.ErrConflict when the
// decision is not an ask or is already answered, on any replica.
func (s *Store) RecordOutcome(ctx context.Context, id, answer, channel, by string) (pdp.DecisionEvent, error) {
	if answer != pdp.AllowOnce && answer != pdp.DenyAnswer {
		return pdp.DecisionEvent{}, fmt.Errorf("outcome %q is not allow_once or deny: %w", answer, pdp.ErrConflict)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return pdp.DecisionEvent{}, fmt.Errorf("recording the outcome: %w", err)
	}
	defer tx.Rollback(context.Background())
	now := utc(s.now())
	tag, err := tx.Exec(ctx, `UPDATE decisions SET answer = $1, answer_channel = $2, answered_at = $3, answered_by = $4
		WHERE id = $5 AND decision = 'ask' AND answer IS NULL`, answer, channel, now, by, id)
	if err != nil {
		return pdp.DecisionEvent{}, fmt.Errorf("recording the outcome: %w", err)
	}
	rec, err := decision(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	if tag.RowsAffected() == 0 {
		if rec.Decision.Decision != pdp.Ask {
			return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
		}
		return rec, fmt.Errorf("decision %s was already answered: %w", id, pdp.ErrConflict)
	}
	if err := addChanges(ctx, tx, change{time: now, kind: pdp.ChangeAnswer, sessionID: rec.SessionID, decisionID: id}); err != nil {
		return rec, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, answersChannel, id); err != nil {
		return rec, fmt.Errorf("recording the outcome: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("recording the outcome: %w", err)
	}
	return rec, nil
}
