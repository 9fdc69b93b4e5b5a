package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// PruneDecisions deletes at most limit events older than before, oldest
// first, in one transaction. Replicas sweeping at once skip each other's
// rows (SKIP LOCKED) instead of waiting on them.
func (s *Store) PruneDecisions(ctx context.Context, before time.Time, limit int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM decisions WHERE id IN
		(SELECT id FROM decisions WHERE time < $1 ORDER BY time LIMIT $2 FOR UPDATE SKIP LOCKED)`, utc(before), limit)
	if err != nil {
		return 0, fmt.Errorf("deleting old events: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// ReclaimSpace does nothing: PostgreSQL's autovacuum makes the space of
// deleted rows reusable for new events.
func (s *Store) ReclaimSpace(context.Context) error { return nil }

// TrailSize estimates the events from the planner's statistics (a count
// reads the whole table) and measures the database.
func (s *Store) TrailSize(ctx context.Context) (pdp.TrailSize, error) {
	var size pdp.TrailSize
	err := s.pool.QueryRow(ctx, `SELECT GREATEST(c.reltuples, 0)::bigint, pg_database_size(current_database())
		FROM pg_class c WHERE c.oid = 'decisions'::regclass`).Scan(&size.Events, &size.Bytes)
	if err != nil {
		return size, fmt.Errorf("measuring the audit trail: %w", err)
	}
	return size, nil
}

// exportChunk is how many events one read of EachDecision takes: each
// read is its own short query, so a long export holds no snapshot open.
const exportChunk = 1000

// EachDecision calls fn with every event at or after since, oldest first,
// until fn returns an error, reading in chunks along the id index.
func (s *Store) EachDecision(ctx context.Context, since time.Time, fn func(pdp.DecisionEvent) error) error {
	return storerows.EachInChunks(pdp.DecisionIDFloor(since), exportChunk, func(after string, first bool) ([]pdp.DecisionEvent, error) {
		from := "id > $1"
		if first {
			from = "id >= $1"
		}
		rows, err := s.pool.Query(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE `+from+` AND time >= $2 ORDER BY id LIMIT $3`,
			after, utc(since), exportChunk)
		if err != nil {
			return nil, fmt.Errorf("reading the audit trail: %w", err)
		}
		var chunk []pdp.DecisionEvent
		for rows.Next() {
			rec, err := scanDecision(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading the audit trail: %w", err)
			}
			chunk = append(chunk, rec)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("reading the audit trail: %w", err)
		}
		return chunk, nil
	}, fn)
}
