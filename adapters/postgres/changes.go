package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
// them (NOTIFY, delivered at the commit) to every replica's feed. The
// seqs come from the counter row, whose lock the transaction holds until
// it commits: seqs are handed out in commit order.
func addChanges(ctx context.Context, tx pgx.Tx, entries ...change) error {
	if len(entries) == 0 {
		return nil
	}
	var last int64
	if err := tx.QueryRow(ctx, `UPDATE change_counter SET last = last + $1 RETURNING last`, len(entries)).Scan(&last); err != nil {
		return fmt.Errorf("logging a change: %w", err)
	}
	var b pgx.Batch
	for i, c := range entries {
		var decision, snapshot *string
		if c.decisionID != "" {
			decision = &c.decisionID
		}
		if c.session != nil {
			raw, err := json.Marshal(c.session)
			if err != nil {
				return fmt.Errorf("logging the change of %q: %w", c.sessionID, err)
			}
			s := string(raw)
			snapshot = &s
		}
		b.Queue(`INSERT INTO changes (seq, time, kind, session_id, decision_id, session) VALUES ($1,$2,$3,$4,$5,$6)`,
			last-int64(len(entries))+1+int64(i), utc(c.time), c.kind, c.sessionID, decision, snapshot)
	}
	b.Queue(`SELECT pg_notify($1, '')`, changesChannel)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("logging a change: %w", err)
	}
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
	var out []pdp.Change
	var decisionIDs []string
	for rows.Next() {
		var c pdp.Change
		var t time.Time
		var decisionID, session *string
		if err := rows.Scan(&c.Seq, &t, &c.Kind, &c.SessionID, &decisionID, &session); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the change log: %w", err)
		}
		c.Time = t.UTC()
		if session != nil {
			var rec pdp.StoredSession
			if json.Unmarshal([]byte(*session), &rec) == nil {
				c.Session = &rec
			}
		}
		id := ""
		if decisionID != nil {
			id = *decisionID
		}
		out = append(out, c)
		decisionIDs = append(decisionIDs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the change log: %w", err)
	}
	for i, id := range decisionIDs {
		if id == "" {
			continue
		}
		rec, err := s.Decision(ctx, id)
		switch {
		case errors.Is(err, pdp.ErrNotFound):
			// Pruned from the trail since: the change stays, without it.
		case err != nil:
			return nil, err
		default:
			out[i].Decision = &rec
		}
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
