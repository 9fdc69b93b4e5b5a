package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// EachRecorded streams the decisions in range, oldest first, with what
// each was judged on (nil when the event is not replayable). It reads a
// snapshot through the read pool, so a server can keep deciding.
func (s *Store) EachRecorded(ctx context.Context, f pdp.ReplayFilter, fn func(pdp.RecordedDecision) error) error {
	q := `SELECT id, session_id, decision, rule, recorded FROM decisions`
	var where []string
	var args []any
	if !f.Since.IsZero() {
		where = append(where, "time >= ?")
		args = append(args, formatTime(f.Since))
	}
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	for i, w := range where {
		if i == 0 {
			q += " WHERE " + w
		} else {
			q += " AND " + w
		}
	}
	rows, err := s.read.QueryContext(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return fmt.Errorf("reading recorded decisions: %w", err)
	}
	defer rows.Close()
	return storerows.EachRecorded(rows, fn)
}
