package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/internal/sqlstore"
)

// writeTx writes a batch of events, and the change log entries of its
// asks, in one transaction of the writer connection.
func (s *Store) writeTx(batch []sqlstore.PendingEvent) error {
	ctx := context.Background()
	tx, err := s.write.BeginTx(ctx, nil)
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
	if err := addChanges(ctx, sqlstore.SQLTx(tx), sqlstore.Asks(batch)...); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: commit: %w", err)
	}
	return nil
}
