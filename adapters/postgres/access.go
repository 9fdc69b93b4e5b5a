package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// RecordAccessDenied stores a refused request in the audit trail.
func (s *Store) RecordAccessDenied(ctx context.Context, ev pdp.AccessEvent) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO access_events (time, method, route, code, token, reason, remote) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
		utc(ev.Time), noNUL(ev.Method), noNUL(ev.Route), ev.Code, noNUL(ev.Token), noNUL(ev.Reason), noNUL(ev.Remote))
	if err != nil {
		return fmt.Errorf("recording an access event: %w", err)
	}
	return nil
}

// AccessEvents lists refused requests, newest first.
func (s *Store) AccessEvents(ctx context.Context, limit int) ([]pdp.AccessEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT time, method, route, code, token, reason, remote FROM access_events ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing access events: %w", err)
	}
	defer rows.Close()
	out := []pdp.AccessEvent{}
	for rows.Next() {
		var ev pdp.AccessEvent
		var t time.Time
		if err := rows.Scan(&t, &ev.Method, &ev.Route, &ev.Code, &ev.Token, &ev.Reason, &ev.Remote); err != nil {
			return nil, fmt.Errorf("listing access events: %w", err)
		}
		ev.Time = t.UTC()
		out = append(out, ev)
	}
	return out, rows.Err()
}
