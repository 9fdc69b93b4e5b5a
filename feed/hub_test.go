package feed_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// countingLog is a store's change log that counts what the hub asks of it.
type countingLog struct {
	feed.ChangeLog
	reads, bounds atomic.Int64
}

func (l *countingLog) ChangesAfter(ctx context.Context, after int64, limit int) ([]feed.Change, error) {
	l.reads.Add(1)
	return l.ChangeLog.ChangesAfter(ctx, after, limit)
}

func (l *countingLog) ChangeBounds(ctx context.Context) (int64, int64, error) {
	l.bounds.Add(1)
	return l.ChangeLog.ChangeBounds(ctx)
}

// levelChanges commits n level changes of session id, one change each:
// READ_WRITE after READ_ONLY and back (the session starts READ_ONLY; a
// level set again is no change).
func levelChanges(t *testing.T, s *sqlite.Store, id string, n int) {
	t.Helper()
	for range n {
		level := api.ReadWrite
		if rec, err := s.GetSession(t.Context(), id); err != nil {
			t.Fatal(err)
		} else if rec.PermissionLevel == api.ReadWrite {
			level = api.ReadOnly
		}
		if _, err := s.UpdateSession(t.Context(), id, pdp.SessionPatch{PermissionLevel: &level}); err != nil {
			t.Fatal(err)
		}
	}
}

func receive(t *testing.T, sub feed.Subscription, n int) []feed.Change {
	t.Helper()
	var got []feed.Change
	timeout := time.After(5 * time.Second)
	for len(got) < n {
		select {
		case c, open := <-sub.Changes():
			if !open {
				t.Fatalf("the subscription ended after %d of %d changes: %v", len(got), n, sub.Err())
			}
			got = append(got, c)
		case <-timeout:
			t.Fatalf("%d of %d changes in 5 s", len(got), n)
		}
	}
	return got
}

// With no subscriber the hub reads no change, only where the log ends; a
// subscriber that comes later and resumes from before that still gets
// every change (from the log), and then the new ones as they come.
func TestAHubWithoutSubscribersReadsNoChanges(t *testing.T) {
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.CreateSession(ctx, api.Session{ID: "s", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	log := &countingLog{ChangeLog: store}
	hub, err := feed.New(ctx, log, feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()

	levelChanges(t, store, "s", 5)
	before := log.bounds.Load()
	hub.Changed()
	for deadline := time.Now().Add(5 * time.Second); log.bounds.Load() == before; {
		if time.Now().After(deadline) {
			t.Fatal("the hub never looked at the log after Changed")
		}
		time.Sleep(time.Millisecond)
	}
	if n := log.reads.Load(); n != 0 {
		t.Fatalf("the hub read the change log %d times with no one subscribed", n)
	}

	sub, err := hub.Subscribe(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	got := receive(t, sub, 5)
	for i, c := range got {
		if c.Kind != feed.ChangeLevel || c.Session == nil || (i > 0 && c.Seq <= got[i-1].Seq) {
			t.Fatalf("change %d: %+v", i, c)
		}
	}
	levelChanges(t, store, "s", 2)
	hub.Changed()
	more := receive(t, sub, 2)
	if more[0].Seq <= got[4].Seq || more[1].Seq <= more[0].Seq {
		t.Fatalf("later changes %d, %d after %d", more[0].Seq, more[1].Seq, got[4].Seq)
	}
}

// A reader whose buffer fills while the hub hands it changes gets every
// change once, in order: while it keeps up the hub puts them in its
// buffer, when the buffer is full its own goroutine waits for room and
// catches up from the ring, and then the hub hands it the next ones
// again.
func TestAReaderWhoseBufferFillsGetsEveryChangeOnce(t *testing.T) {
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.CreateSession(ctx, api.Session{ID: "s", PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	hub, err := feed.New(ctx, store, feed.Options{Buffer: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	sub, err := hub.Subscribe(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []feed.Change
	for round := range 4 {
		// Bursts the reader does not read during: its buffer of 3 fills.
		for range 3 {
			levelChanges(t, store, "s", 4)
			hub.Changed()
			time.Sleep(20 * time.Millisecond)
		}
		got = append(got, receive(t, sub, 12)...)
		// Then one at a time, each read as it comes.
		for range 3 {
			levelChanges(t, store, "s", 1)
			hub.Changed()
			got = append(got, receive(t, sub, 1)...)
		}
		if len(got) != 15*(round+1) {
			t.Fatalf("round %d: %d changes", round, len(got))
		}
	}
	_, last, err := store.ChangeBounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range got {
		if want := last - int64(len(got)-1-i); c.Seq != want {
			t.Fatalf("change %d is %d, want %d (every change once, in order)", i, c.Seq, want)
		}
	}
	select {
	case c := <-sub.Changes():
		t.Fatalf("a change more than the log holds: %+v", c)
	case <-time.After(100 * time.Millisecond):
	}
}
