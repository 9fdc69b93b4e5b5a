package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/toolperm/pdp/store/storerows"
)

// TrailStats describes the audit trail for an operator (pdp audit stats).
type TrailStats struct {
	Events    int64     // events, counted
	Bytes     int64     // the database file's size
	FreeBytes int64     // of which free pages (reused, or given back by the sweeper)
	Oldest    time.Time // zero when the trail is empty
	Newest    time.Time
	// Counts are the events per decision and source.
	Counts []TrailCount
	// Incremental says the file gives freed space back (auto_vacuum
	// INCREMENTAL); otherwise it is reused, and `pdp audit vacuum` switches.
	Incremental bool
}

// TrailCount is the number of events with one decision and source.
type TrailCount struct {
	Decision, Source string
	Events           int64
}

// TrailStats counts the trail: it reads one whole index (seconds for ten
// million events), on a reader, so decisions go on meanwhile.
func (s *Store) TrailStats(ctx context.Context) (TrailStats, error) {
	st := TrailStats{Incremental: s.incremental.Load()}
	rows, err := s.read.QueryContext(ctx, `SELECT decision, source, count(*) FROM decisions INDEXED BY decisions_source_decision
		GROUP BY source, decision ORDER BY decision, source`)
	if err != nil {
		return st, fmt.Errorf("counting the audit trail: %w", err)
	}
	for rows.Next() {
		var c TrailCount
		if err := rows.Scan(&c.Decision, &c.Source, &c.Events); err != nil {
			rows.Close()
			return st, err
		}
		st.Counts = append(st.Counts, c)
		st.Events += c.Events
	}
	if err := rows.Close(); err != nil {
		return st, err
	}
	// Two queries: SQLite reads a min() or a max() off the index only
	// when it is the query's one aggregate.
	for _, q := range []struct {
		sql string
		to  *time.Time
	}{{`SELECT min(time) FROM decisions`, &st.Oldest}, {`SELECT max(time) FROM decisions`, &st.Newest}} {
		var t sql.NullString
		if err := s.read.QueryRowContext(ctx, q.sql).Scan(&t); err != nil {
			return st, err
		}
		if t.Valid {
			*q.to = storerows.ParseTime(t.String)
		}
	}
	if st.Bytes, err = s.fileBytes(ctx); err != nil {
		return st, err
	}
	var free, pageSize int64
	if err := s.read.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return st, err
	}
	if err := s.read.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return st, err
	}
	st.FreeBytes = free * pageSize
	return st, nil
}
