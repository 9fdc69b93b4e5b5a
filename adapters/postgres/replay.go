package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolperm/pdp/pdp"
)

// EachRecorded streams the decisions in range, oldest first, with what
// each was judged on (nil when the event is not replayable).
func (s *Store) EachRecorded(ctx context.Context, f pdp.ReplayFilter, fn func(pdp.RecordedDecision) error) error {
	q := `SELECT id, session_id, decision, rule, recorded FROM decisions`
	var where []string
	var args []any
	if !f.Since.IsZero() {
		args = append(args, utc(f.Since))
		where = append(where, "time >= $"+strconv.Itoa(len(args)))
	}
	if f.SessionID != "" {
		args = append(args, f.SessionID)
		where = append(where, "session_id = $"+strconv.Itoa(len(args)))
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.pool.Query(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return fmt.Errorf("reading recorded decisions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rd pdp.RecordedDecision
		var recorded []byte
		if err := rows.Scan(&rd.DecisionID, &rd.SessionID, &rd.Decision, &rd.Rule, &recorded); err != nil {
			return fmt.Errorf("reading recorded decisions: %w", err)
		}
		if len(recorded) > 0 {
			if rd.Recorded, err = pdp.DecodeRecorded(recorded); err != nil {
				rd.Recorded = nil // unreadable: skipped like an unrecorded one
			}
		}
		if err := fn(rd); err != nil {
			return err
		}
	}
	return rows.Err()
}
