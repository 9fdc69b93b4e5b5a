package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// DecisionsByToolUse returns the decisions made for a call with this
// runtime id, newest first (at most 16: a runtime's ids are unique).
func (s *Store) DecisionsByToolUse(ctx context.Context, toolUseID string) ([]pdp.DecisionEvent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE tool_use_id = ? ORDER BY id DESC LIMIT 16`, toolUseID)
	if err != nil {
		return nil, fmt.Errorf("finding tool use %q: %w", toolUseID, err)
	}
	defer rows.Close()
	var out []pdp.DecisionEvent
	for rows.Next() {
		rec, err := scanDecision(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// RecordOutcome records what a runtime reports became of an ask (allow_once
// or deny), naming the token that reported it; it never creates a grant.
// pdp.ErrConflict when the decision is not an ask or is already answered.
func (s *Store) RecordOutcome(ctx context.Context, id, answer, channel, by string) (pdp.DecisionEvent, error) {
	if answer != pdp.AllowOnce && answer != pdp.DenyAnswer {
		return pdp.DecisionEvent{}, fmt.Errorf("outcome %q is not allow_once or deny: %w", answer, pdp.ErrConflict)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return pdp.DecisionEvent{}, err
	}
	defer tx.Rollback()
	rec, err := s.decision(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	if rec.Decision.Decision != pdp.Ask {
		return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
	}
	if rec.Answer != nil {
		return rec, fmt.Errorf("decision %s was already answered %s: %w", id, rec.Answer.Answer, pdp.ErrConflict)
	}
	now := s.now()
	if _, err := tx.ExecContext(ctx, `UPDATE decisions SET answer = ?, answer_channel = ?, answered_at = ?, answered_by = ? WHERE id = ? AND answer IS NULL`,
		answer, channel, formatTime(now), by, id); err != nil {
		return rec, fmt.Errorf("recording the outcome: %w", err)
	}
	if err := addChange(ctx, tx, now, pdp.ChangeAnswer, rec.SessionID, id, nil); err != nil {
		return rec, err
	}
	if err := tx.Commit(); err != nil {
		return rec, fmt.Errorf("recording the outcome: %w", err)
	}
	rec.Answer = &pdp.Answer{Answer: answer, Channel: channel, AnsweredAt: now, By: by}
	return rec, nil
}
