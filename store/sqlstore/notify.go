package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/store/storerows"
)

// claimsKept is how long a notification's claim is kept: long past any
// replica's retries of it.
const claimsKept = 24 * time.Hour

// ClaimDelivery claims the sink's notification of change seq for this
// process until lease from now. It is this process's (mine) when no one
// claimed it yet, or when the replica that did let its lease run out
// without marking it done (it died between its claim and its delivery);
// the primary key and the conditional update decide, so of replicas
// claiming at once exactly one wins. Otherwise until is when the
// holder's lease ends, to ask again then, or zero when the event is done
// (sent or given up) and nothing is left to do. Claims older than a day
// are deleted on the way.
func (s *Store) ClaimDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (mine bool, until time.Time, err error) {
	now := s.Now()
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("claiming a notification: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `DELETE FROM notify_claims WHERE claimed_at < ?`, s.Time(now.Add(-claimsKept))); err != nil {
		return false, time.Time{}, fmt.Errorf("claiming a notification: %w", err)
	}
	n, err := tx.Exec(ctx, `INSERT INTO notify_claims (sink, seq, server, claimed_at, lease_until) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (sink, seq) DO UPDATE SET server = excluded.server, claimed_at = excluded.claimed_at, lease_until = excluded.lease_until
WHERE notify_claims.done_at IS NULL AND notify_claims.lease_until < ?`,
		sink, seq, s.instance(), s.Time(now), s.Time(now.Add(lease)), s.Time(now))
	if err != nil {
		return false, time.Time{}, fmt.Errorf("claiming a notification: %w", err)
	}
	if n == 0 {
		var leaseUntil, done storerows.Time
		if err := tx.QueryRow(ctx, `SELECT lease_until, done_at FROM notify_claims WHERE sink = ? AND seq = ?`, sink, seq).Scan(&leaseUntil, &done); err != nil {
			return false, time.Time{}, fmt.Errorf("claiming a notification: %w", err)
		}
		if leaseUntil.Valid && !done.Valid {
			until = leaseUntil.T
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return false, time.Time{}, fmt.Errorf("claiming a notification: %w", err)
	}
	return n == 1, until, nil
}

// RenewDelivery extends this process's claim of the sink's notification
// to lease from now, before another attempt: false when the claim is no
// longer its own (its lease ran out and another replica took it) or is
// done.
func (s *Store) RenewDelivery(ctx context.Context, sink string, seq int64, lease time.Duration) (bool, error) {
	now := s.Now()
	n, err := s.Write.Exec(ctx, `UPDATE notify_claims SET lease_until = ? WHERE sink = ? AND seq = ? AND server = ? AND done_at IS NULL`,
		s.Time(now.Add(lease)), sink, seq, s.instance())
	if err != nil {
		return false, fmt.Errorf("renewing a notification's claim: %w", err)
	}
	return n == 1, nil
}

// DeliveryDone marks this process's claim of the sink's notification
// done (sent, or given up after its last attempt): no replica claims it
// again.
func (s *Store) DeliveryDone(ctx context.Context, sink string, seq int64) error {
	if _, err := s.Write.Exec(ctx, `UPDATE notify_claims SET done_at = ? WHERE sink = ? AND seq = ? AND server = ?`,
		s.Time(s.Now()), sink, seq, s.instance()); err != nil {
		return fmt.Errorf("marking a notification sent: %w", err)
	}
	return nil
}
