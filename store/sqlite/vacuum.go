package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// smallDatabaseBytes is the largest file Open switches to incremental
// auto-vacuum by itself: the switch is a VACUUM, which rewrites the whole
// file under the write lock (about a second for 64 MiB). A larger file
// keeps its mode, reuses the pages of deleted events for new ones, and
// is switched by Store.Vacuum (pdp audit vacuum) when its owner chooses.
const smallDatabaseBytes = 64 << 20

// autoVacuumIncremental is PRAGMA auto_vacuum's value for INCREMENTAL.
const autoVacuumIncremental = 2

// switchToIncrementalVacuum makes a database of at most limit bytes
// (every new one) give freed pages back on PRAGMA incremental_vacuum,
// and reports whether it does. A database already in FULL mode gives them
// back at every commit and is left so.
func switchToIncrementalVacuum(ctx context.Context, db *sql.DB, limit int64) (bool, error) {
	var mode, pages, pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return false, fmt.Errorf("reading auto_vacuum: %w", err)
	}
	if mode != 0 {
		return mode == autoVacuumIncremental, nil
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return false, err
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return false, err
	}
	if limit >= 0 && pages*pageSize > limit {
		return false, nil
	}
	if _, err := db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return false, fmt.Errorf("setting auto_vacuum: %w", err)
	}
	// A new file takes the mode before its first table; an existing one
	// only through a VACUUM.
	if pages > 0 {
		if _, err := db.ExecContext(ctx, `VACUUM`); err != nil {
			return false, fmt.Errorf("switching to incremental auto-vacuum: %w", err)
		}
	}
	return true, nil
}

// Vacuum switches the database to incremental auto-vacuum whatever its
// size, by a VACUUM that rewrites the file (it needs as much free disk
// again, and holds the write lock throughout: decisions wait, and past
// the busy timeout fail; run it with the server stopped). A database
// already incremental is left as it is.
func (s *Store) Vacuum(ctx context.Context) error {
	ok, err := switchToIncrementalVacuum(ctx, s.write, -1)
	if err != nil {
		return err
	}
	s.incremental.Store(ok)
	return nil
}

// Incremental says whether the file gives the space of deleted events back
// (auto_vacuum INCREMENTAL) rather than only reusing it.
func (s *Store) Incremental() bool { return s.incremental.Load() }
