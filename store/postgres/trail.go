package postgres

import (
	"context"
	"fmt"
	"time"

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
