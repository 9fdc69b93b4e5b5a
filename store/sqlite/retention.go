package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// vacuumStep is how many free pages one transaction gives back (4 MiB of
// 4 KiB pages): moving pages is a write, kept as short as an audit batch.
const vacuumStep = 1024

// PruneDecisions deletes at most limit events older than before, oldest
// first, in one transaction of the store's writer (the one audit events
// are written by, so the two take turns). Grants keep their decision_id
// as plain text: no event is referenced by anything else.
func (s *Store) PruneDecisions(ctx context.Context, before time.Time, limit int) (int, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM decisions WHERE rowid IN
		(SELECT rowid FROM decisions INDEXED BY decisions_time WHERE time < ? ORDER BY time LIMIT ?)`, formatTime(before), limit)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return int(n), tx.Commit()
}

// ReclaimSpace truncates the file by the pages deleted events freed,
// vacuumStep pages per transaction (auto_vacuum INCREMENTAL). A database
// in another mode reuses the free pages for new events instead, and the
// file keeps its size.
func (s *Store) ReclaimSpace(ctx context.Context) error {
	if !s.incremental.Load() {
		return nil
	}
	for {
		var free int64
		if err := s.write.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
			return err
		}
		if free == 0 {
			return nil
		}
		t := time.Now()
		if err := s.vacuumStep(ctx); err != nil {
			return err
		}
		// At least a millisecond, so audit batches get the writer.
		if err := pdp.Wait(ctx, max(time.Since(t), time.Millisecond)); err != nil {
			return err
		}
	}
}

// vacuumStep frees up to vacuumStep pages in one transaction. The pragma
// frees one page per step of its statement, so its rows are read to the
// end (an Exec would step it once).
func (s *Store) vacuumStep(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, vacuumStep))
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return tx.Commit()
}

// TrailSize estimates the events from the span of row ids (events are
// appended, and deleted oldest first, so it is exact but for the few that
// committed out of time order around a cut), without counting: a count
// reads a whole index. Bytes is the database file's size.
func (s *Store) TrailSize(ctx context.Context) (pdp.TrailSize, error) {
	var size pdp.TrailSize
	var lo, hi sql.NullInt64
	if err := s.read.QueryRowContext(ctx, `SELECT min(rowid), max(rowid) FROM decisions`).Scan(&lo, &hi); err != nil {
		return size, fmt.Errorf("measuring the audit trail: %w", err)
	}
	if lo.Valid {
		size.Events = hi.Int64 - lo.Int64 + 1
	}
	var err error
	size.Bytes, err = s.fileBytes(ctx)
	return size, err
}

func (s *Store) fileBytes(ctx context.Context) (int64, error) {
	var pages, pageSize int64
	if err := s.read.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, err
	}
	if err := s.read.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return 0, err
	}
	return pages * pageSize, nil
}
