package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// RecordAccessDenied stores a refused request in the audit trail.
func (s *Store) RecordAccessDenied(ctx context.Context, ev pdp.AccessEvent) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO access_events (time, method, route, code, token, reason, remote) VALUES (?,?,?,?,?,?,?)`,
		formatTime(ev.Time), ev.Method, ev.Route, ev.Code, ev.Token, ev.Reason, ev.Remote)
	if err != nil {
		return fmt.Errorf("recording an access event: %w", err)
	}
	return nil
}

// AccessEvents lists refused requests, newest first.
func (s *Store) AccessEvents(ctx context.Context, limit int) ([]pdp.AccessEvent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT time, method, route, code, token, reason, remote FROM access_events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing access events: %w", err)
	}
	defer rows.Close()
	out := []pdp.AccessEvent{}
	for rows.Next() {
		var ev pdp.AccessEvent
		var t string
		if err := rows.Scan(&t, &ev.Method, &ev.Route, &ev.Code, &ev.Token, &ev.Reason, &ev.Remote); err != nil {
			return nil, err
		}
		ev.Time = parseTime(t)
		out = append(out, ev)
	}
	return out, rows.Err()
}
