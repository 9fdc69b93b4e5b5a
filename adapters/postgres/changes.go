package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// change is one entry to append to the change log.
type change struct {
	time       time.Time
	kind       string
	sessionID  string
	decisionID string
	session    *pdp.StoredSession // after a level change
}

// addChanges appends entries to the change log inside tx and announces
// them to every replica's feed (see queueChanges).
func addChanges(ctx context.Context, tx pgx.Tx, entries ...change) error {
	var b pgx.Batch
	if err := queueChanges(&b, entries...); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("logging a change: %w", err)
	}
	return nil
}

// insertChanges takes the entries' seqs from the counter row, whose lock
// the transaction then holds until it commits: seqs are handed out in
// commit order.
const insertChanges = `WITH c AS (UPDATE change_counter SET last = last + $1::bigint RETURNING last)
INSERT INTO changes (seq, time, kind, session_id, decision_id, session)
SELECT c.last - $1::bigint + e.ord, e.time, e.kind, e.session_id, e.decision_id, e.session
FROM c, unnest($2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e(time, kind, session_id, decision_id, session, ord)`

// queueChanges queues the statements that append entries to the change
// log and announce them (NOTIFY, delivered at the commit); nothing for no
// entries.
func queueChanges(b *pgx.Batch, entries ...change) error {
	if len(entries) == 0 {
		return nil
	}
	times := make([]time.Time, len(entries))
	kinds := make([]string, len(entries))
	sessions := make([]string, len(entries))
	decisions := make([]*string, len(entries))
	snapshots := make([]*string, len(entries))
	for i, c := range entries {
		times[i], kinds[i], sessions[i] = utc(c.time), c.kind, c.sessionID
		if c.decisionID != "" {
			decisions[i] = &c.decisionID
		}
		if c.session != nil {
			raw, err := json.Marshal(c.session)
			if err != nil {
				return fmt.Errorf("logging the change of %q: %w", c.sessionID, err)
			}
			s := string(raw)
			snapshots[i] = &s
		}
	}
	b.Queue(insertChanges, len(entries), times, kinds, sessions, decisions, snapshots)
	b.Queue(`SELECT pg_notify($1, '')`, changesChannel)
	return nil
}

// ChangesAfter returns up to limit changes after seq, oldest first, each
// with its decision as the audit trail now has it, or the session as it
// was after a level change.
func (s *Store) ChangesAfter(ctx context.Context, after int64, limit int) ([]pdp.Change, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, time, kind, session_id, decision_id, session FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("reading the change log: %w", err)
	}
	out, decisionIDs, err := storerows.Changes(rows, time.Time.UTC)
	rows.Close()
	if err != nil {
		return nil, err
	}
	if err := storerows.AttachDecisions(ctx, out, decisionIDs, s.Decision); err != nil {
		return nil, err
	}
	return out, nil
}

// ChangeBounds returns the first and last seq of the change log (0, 0
// when it is empty).
func (s *Store) ChangeBounds(ctx context.Context) (first, last int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM changes`).Scan(&first, &last)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the change log: %w", err)
	}
	return first, last, nil
}
