package feed_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/sqlite"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
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
