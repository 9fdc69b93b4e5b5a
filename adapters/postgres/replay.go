package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolperm/pdp/internal/storerows"
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
	return storerows.EachRecorded(rows, fn)
}
