package httpapi

import (
	"context"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// startWaiting records in the store that by waits on the ask for up to
// wait, so GET /v1/decisions shows it on every replica; the returned
// func records the end. A store that keeps no waiters, or one that
// fails to record it, leaves the wait as it is: who waits is shown to
// people, it decides nothing.
func (s *Server) startWaiting(ctx context.Context, id, by string, wait time.Duration) func() {
	ws, ok := s.cfg.Store.(pdp.WaitingStore)
	if !ok {
		return func() {}
	}
	stop, err := ws.StartWaiting(ctx, id, by, time.Now().Add(wait))
	if err != nil {
		s.cfg.Logger.Warn("recording a wait", "decision_id", id, "err", err)
		return func() {}
	}
	return stop
}

// withWaiting sets who waits on rec when it is an ask: nobody once it
// is answered.
func (s *Server) withWaiting(ctx context.Context, rec api.Event) api.Event {
	list := []api.Event{rec}
	s.listWaiting(ctx, list)
	return list[0]
}

// listWaiting sets who waits on each ask of list, in one read. When the
// read fails the field stays absent (unknown), never a made-up "nobody".
func (s *Server) listWaiting(ctx context.Context, list []api.Event) {
	ws, ok := s.cfg.Store.(pdp.WaitingStore)
	if !ok {
		return
	}
	var pending []string
	for _, rec := range list {
		if rec.Decision.Decision == api.Ask && rec.Answer == nil {
			pending = append(pending, rec.DecisionID)
		}
	}
	var waiting map[string][]api.Waiter
	if len(pending) > 0 {
		var err error
		if waiting, err = ws.Waiting(ctx, pending); err != nil {
			s.cfg.Logger.Warn("reading who waits", "err", err)
			return
		}
	}
	for i := range list {
		if list[i].Decision.Decision != api.Ask {
			continue
		}
		list[i].Waiting = []api.Waiter{}
		if w := waiting[list[i].DecisionID]; list[i].Answer == nil && w != nil {
			list[i].Waiting = w
		}
	}
}
