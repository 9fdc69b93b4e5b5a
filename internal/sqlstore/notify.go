package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// claimsKept is how long a notification's claim is kept: long past any
// replica's retries of it.
const claimsKept = 24 * time.Hour

// ClaimDelivery claims the sink's notification of change seq for this
// process: true for the first claim, false when another replica (or
// this one) claimed it already. The primary key decides, so of replicas
// claiming at once exactly one wins. Claims older than a day are
// deleted on the way.
func (s *Store) ClaimDelivery(ctx context.Context, sink string, seq int64) (bool, error) {
	now := s.Now()
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("claiming a notification: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `DELETE FROM notify_claims WHERE claimed_at < ?`, s.Time(now.Add(-claimsKept))); err != nil {
		return false, fmt.Errorf("claiming a notification: %w", err)
	}
	n, err := tx.Exec(ctx, `INSERT INTO notify_claims (sink, seq, server, claimed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		sink, seq, s.instance(), s.Time(now))
	if err != nil {
		return false, fmt.Errorf("claiming a notification: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("claiming a notification: %w", err)
	}
	return n == 1, nil
}
