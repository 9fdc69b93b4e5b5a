package storetest

import (
	"testing"
	"time"
)

// testClaimLeases: a claim holds its notification for its lease: a claim
// within it loses and is told when the lease ends; once the lease has
// run out with the event not done (its replica died between its claim
// and its delivery), the next claim wins. The holder renews its lease
// and marks the event done, after which no claim wins, however old the
// lease, and none is told to come back.
func testClaimLeases(t *testing.T, s Store) {
	ctx := t.Context()
	before := time.Now()
	if mine, _, err := s.ClaimDelivery(ctx, "ops", 7, time.Hour); err != nil || !mine {
		t.Fatalf("the first claim: %v, %v", mine, err)
	}
	mine, until, err := s.ClaimDelivery(ctx, "ops", 7, time.Hour)
	if err != nil || mine {
		t.Fatalf("a claim within the lease: %v, %v", mine, err)
	}
	if until.Before(before.Add(time.Hour-time.Second)) || until.After(time.Now().Add(time.Hour+time.Second)) {
		t.Fatalf("a claim within the lease is told it ends at %v, want an hour after %v", until, before)
	}

	// A lease that ran out undone: the next claim takes the event over.
	if mine, _, err := s.ClaimDelivery(ctx, "ops", 8, time.Millisecond); err != nil || !mine {
		t.Fatalf("the first claim of 8: %v, %v", mine, err)
	}
	time.Sleep(10 * time.Millisecond) // past the lease
	if mine, _, err := s.ClaimDelivery(ctx, "ops", 8, time.Hour); err != nil || !mine {
		t.Fatalf("a claim after the lease ran out undone: %v, %v, want it taken over", mine, err)
	}
	if mine, until, err := s.ClaimDelivery(ctx, "ops", 8, time.Hour); err != nil || mine || until.IsZero() {
		t.Fatalf("a claim within the new lease: %v, %v, %v", mine, until, err)
	}

	// The holder renews, then marks it done: no claim wins it again.
	if held, err := s.RenewDelivery(ctx, "ops", 7, time.Hour); err != nil || !held {
		t.Fatalf("renewing a held claim: %v, %v", held, err)
	}
	if err := s.DeliveryDone(ctx, "ops", 7); err != nil {
		t.Fatal(err)
	}
	if held, err := s.RenewDelivery(ctx, "ops", 7, time.Hour); err != nil || held {
		t.Fatalf("renewing a done claim: %v, %v", held, err)
	}
	if mine, until, err := s.ClaimDelivery(ctx, "ops", 7, time.Hour); err != nil || mine || !until.IsZero() {
		t.Fatalf("a claim of a done event: %v, %v, %v, want lost with nothing to wait for", mine, until, err)
	}
	if mine, _, err := s.ClaimDelivery(ctx, "ops", 9, time.Millisecond); err != nil || !mine {
		t.Fatalf("the first claim of 9: %v, %v", mine, err)
	}
	if err := s.DeliveryDone(ctx, "ops", 9); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // past the lease
	if mine, until, err := s.ClaimDelivery(ctx, "ops", 9, time.Hour); err != nil || mine || !until.IsZero() {
		t.Fatalf("a claim of a done event whose lease ran out: %v, %v, %v", mine, until, err)
	}
	// Another sink's claim of the same change is its own.
	if mine, _, err := s.ClaimDelivery(ctx, "pager", 7, time.Hour); err != nil || !mine {
		t.Fatalf("another sink's claim: %v, %v", mine, err)
	}
}
