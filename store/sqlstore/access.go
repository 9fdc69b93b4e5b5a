package sqlstore

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/store/storerows"
)

// RecordAccessDenied stores a refused request in the audit trail.
func (s *Store) RecordAccessDenied(ctx context.Context, ev api.AccessEvent) error {
	_, err := s.Write.Exec(ctx, `INSERT INTO access_events (time, method, route, code, token, reason, remote) VALUES (?,?,?,?,?,?,?)`,
		s.Time(ev.Time), s.Text(ev.Method), s.Text(ev.Route), ev.Code, s.Text(ev.Token), s.Text(ev.Reason), s.Text(ev.Remote))
	if err != nil {
		return fmt.Errorf("recording an access event: %w", err)
	}
	return nil
}

// AccessEvents lists refused requests, newest first.
func (s *Store) AccessEvents(ctx context.Context, limit int) ([]api.AccessEvent, error) {
	rows, err := s.Read.Query(ctx, `SELECT time, method, route, code, token, reason, remote FROM access_events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing access events: %w", err)
	}
	return collect(rows, []api.AccessEvent{}, func(r Rows) (api.AccessEvent, error) {
		var ev api.AccessEvent
		var t storerows.Time
		err := r.Scan(&t, &ev.Method, &ev.Route, &ev.Code, &ev.Token, &ev.Reason, &ev.Remote)
		ev.Time = t.T
		return ev, err
	}, "listing access events")
}
