package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/store/sqlstore"
)

// addChanges appends entries to the change log inside t, one of this
// package's transactions, and announces them to every replica's feed
// (see queueChanges).
func addChanges(ctx context.Context, t sqlstore.Tx, entries ...sqlstore.Change) error {
	var b pgx.Batch
	if err := queueChanges(&b, entries...); err != nil {
		return err
	}
	if err := t.(tx).pgx.SendBatch(ctx, &b).Close(); err != nil {
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
func queueChanges(b *pgx.Batch, entries ...sqlstore.Change) error {
	if len(entries) == 0 {
		return nil
	}
	times := make([]time.Time, len(entries))
	kinds := make([]string, len(entries))
	sessions := make([]string, len(entries))
	decisions := make([]*string, len(entries))
	snapshots := make([]*string, len(entries))
	for i, c := range entries {
		var err error
		times[i], kinds[i], sessions[i] = utc(c.Time), c.Kind, c.SessionID
		if decisions[i], snapshots[i], err = c.Columns(); err != nil {
			return err
		}
	}
	b.Queue(insertChanges, len(entries), times, kinds, sessions, decisions, snapshots)
	b.Queue(`SELECT pg_notify($1, '')`, changesChannel)
	return nil
}
