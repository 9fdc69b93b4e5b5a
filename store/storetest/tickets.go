package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// testTickets: an answer link's ticket answers one decision, once, with
// its one answer, until it expires; anything else is refused, and the
// reason told apart.
func testTickets(t *testing.T, s Store) {
	ctx := t.Context()
	tickets, err := s.IssueTickets(ctx, "d1", "ops", []string{api.AllowOnce, api.DenyAnswer}, time.Now().Add(time.Hour))
	if err != nil || len(tickets) != 2 || tickets[api.AllowOnce] == tickets[api.DenyAnswer] || len(tickets[api.AllowOnce]) < 40 {
		t.Fatalf("tickets = %v, %v", tickets, err)
	}
	once := tickets[api.AllowOnce]
	if got, err := s.PeekTicket(ctx, once, "d1"); err != nil || got.Answer != api.AllowOnce || got.Sink != "ops" {
		t.Fatalf("peek = %+v, %v", got, err)
	}
	_, err = s.UseTicket(ctx, once, "d2")
	wantErr(t, err, pdp.ErrTicketForged)
	_, err = s.UseTicket(ctx, "not-a-ticket-0000000000000000000000000000", "d1")
	wantErr(t, err, pdp.ErrTicketForged)
	if got, err := s.UseTicket(ctx, once, "d1"); err != nil || got.Answer != api.AllowOnce || got.Sink != "ops" || got.DecisionID != "d1" {
		t.Fatalf("use = %+v, %v", got, err)
	}
	_, err = s.UseTicket(ctx, once, "d1")
	wantErr(t, err, pdp.ErrTicketUsed)
	_, err = s.PeekTicket(ctx, once, "d1")
	wantErr(t, err, pdp.ErrTicketUsed)

	// Of many uses at once, one wins.
	deny := tickets[api.DenyAnswer]
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Go(func() {
			if _, err := s.UseTicket(ctx, deny, "d1"); err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d uses of one ticket won", won)
	}

	old, err := s.IssueTickets(ctx, "d3", "ops", []string{api.DenyAnswer}, time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.UseTicket(ctx, old[api.DenyAnswer], "d3")
	wantErr(t, err, pdp.ErrTicketExpired)
}
