package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

// EachRecorded streams the decisions in range, oldest first, with what
// each was judged on (nil when the event is not replayable).
func (s *Store) EachRecorded(ctx context.Context, f pdp.ReplayFilter, fn func(pdp.RecordedDecision) error) error {
	q := `SELECT ` + storerows.RecordedColumns + ` FROM decisions`
	var where []string
	var args []any
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, s.Time(f.Since))
	}
	if f.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, f.SessionID)
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.Read.Query(ctx, q+" ORDER BY id", args...)
	if err != nil {
		return fmt.Errorf("reading recorded decisions: %w", err)
	}
	defer rows.Close()
	return storerows.EachRecorded(rows, fn)
}

// exportChunk is how many events one read of EachDecision takes: each
// read is its own short query, so a long export holds no snapshot open.
const exportChunk = 1000

// EachDecision calls fn with every event at or after since, oldest first,
// until fn returns an error. Events are read in chunks along the id
// index, so a long export holds no read transaction open.
func (s *Store) EachDecision(ctx context.Context, since time.Time, fn func(api.Event) error) error {
	cut := s.Time(since)
	return storerows.EachInChunks(pdp.DecisionIDFloor(since), exportChunk, func(after string, first bool) ([]api.Event, error) {
		from := "id > ?"
		if first {
			from = "id >= ?"
		}
		rows, err := s.Read.Query(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE `+from+` AND `+s.FilterTime+` >= ? ORDER BY id LIMIT ?`,
			after, cut, exportChunk)
		if err != nil {
			return nil, fmt.Errorf("reading the audit trail: %w", err)
		}
		return collect(rows, nil, scanDecision, "reading the audit trail")
	}, fn)
}
