package sqlite

import (
	"context"
	"fmt"
	"time"
)

// AccessEvent is a request refused by access control (401 or 403).
type AccessEvent struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Route  string    `json:"route"`
	Code   int       `json:"code"`
	Token  string    `json:"token,omitempty"` // the token's name; empty when unknown
	Reason string    `json:"reason"`
	Remote string    `json:"remote"`
}

// RecordAccessDenied stores a refused request in the audit trail.
func (s *Store) RecordAccessDenied(ctx context.Context, ev AccessEvent) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO access_events (time, method, route, code, token, reason, remote) VALUES (?,?,?,?,?,?,?)`,
		formatTime(ev.Time), ev.Method, ev.Route, ev.Code, ev.Token, ev.Reason, ev.Remote)
	if err != nil {
		return fmt.Errorf("recording an access event: %w", err)
	}
	return nil
}

// AccessEvents lists refused requests, newest first.
func (s *Store) AccessEvents(ctx context.Context, limit int) ([]AccessEvent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT time, method, route, code, token, reason, remote FROM access_events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing access events: %w", err)
	}
	defer rows.Close()
	out := []AccessEvent{}
	for rows.Next() {
		var ev AccessEvent
		var t string
		if err := rows.Scan(&t, &ev.Method, &ev.Route, &ev.Code, &ev.Token, &ev.Reason, &ev.Remote); err != nil {
			return nil, err
		}
		ev.Time = parseTime(t)
		out = append(out, ev)
	}
	return out, rows.Err()
}
