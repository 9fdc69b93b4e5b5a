package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolperm/pdp/store/sqlstore"
)

// writeTx writes a batch of events, and the change log entries of its
// asks, in one transaction of the writer connection. ctx carries the
// batch's deadline (its callers' nearest); SQLite's busy wait cannot be
// interrupted, so the transaction's busy timeout is lowered to it. The
// commit's outcome is known either way: committed, or nothing written.
func (s *Store) writeTx(ctx context.Context, batch []sqlstore.PendingEvent) error {
	if err := s.health.Fault(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	err := s.writeBatch(ctx, batch)
	if err != nil {
		// A deleted file shows as failed writes first: look at once
		// rather than at the next tick.
		s.checkFile()
	}
	s.health.Wrote(err)
	return err
}

func (s *Store) writeBatch(ctx context.Context, batch []sqlstore.PendingEvent) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return fmt.Errorf("audit: %w", context.DeadlineExceeded)
		}
		if left < s.busy {
			if err := setBusy(ctx, conn, left); err != nil {
				return fmt.Errorf("audit: %w", err)
			}
			defer setBusy(context.Background(), conn, s.busy)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, sqlstore.InsertDecision)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer stmt.Close()
	for _, p := range batch {
		args, err := dialect.EventArgs(p)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("audit: writing decision %s: %w", p.Event.Decision.DecisionID, err)
		}
	}
	for _, p := range batch {
		for _, l := range p.Event.Labels {
			if _, err := tx.ExecContext(ctx, sqlstore.InsertLabel, dialect.LabelArgs(p.Event.LabelRoot, l)...); err != nil {
				return fmt.Errorf("audit: adding the label %s of decision %s: %w", l.Label, p.Event.Decision.DecisionID, err)
			}
		}
	}
	if err := addChanges(ctx, sqlstore.SQLTx(tx), sqlstore.Asks(batch)...); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: commit: %w", err)
	}
	return nil
}

// setBusy sets the connection's busy timeout (at least a millisecond:
// zero would turn the wait off altogether, which is not shorter).
func setBusy(ctx context.Context, conn *sql.Conn, d time.Duration) error {
	ms := max(d.Milliseconds(), 1)
	_, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", ms))
	return err
}
