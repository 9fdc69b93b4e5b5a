package schema

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/store/sqlstore"
)

// Apply brings db up to migrations: it keeps the versions applied in
// schema_migrations (its time column of type timeType) and runs each
// missing migration, with its version's row stamped appliedAt, in one
// transaction.
func Apply(ctx context.Context, db sqlstore.DB, migrations []string, timeType string, appliedAt any) error {
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at `+timeType+` NOT NULL)`); err != nil {
		return err
	}
	var current int
	if err := db.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	return Migrate(current, migrations, func(v int, migration string) error {
		tx, err := db.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background())
		if _, err := tx.Exec(ctx, migration); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, appliedAt); err != nil {
			return err
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		return nil
	})
}
