package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/store/sqlstore"
)

// addChanges appends entries to the change log inside tx; the table's
// AUTOINCREMENT seq follows the one writer's commit order.
func addChanges(ctx context.Context, tx sqlstore.Tx, entries ...sqlstore.Change) error {
	for _, c := range entries {
		decision, snapshot, err := c.Columns()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO changes (time, kind, session_id, decision_id, session) VALUES (?,?,?,?,?)`,
			formatTime(c.Time), c.Kind, c.SessionID, decision, snapshot); err != nil {
			return fmt.Errorf("logging the change of %q: %w", c.SessionID, err)
		}
	}
	return nil
}
