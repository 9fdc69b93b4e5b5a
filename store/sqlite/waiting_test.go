package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// TestWaitLingers: a wait that ended still counts for pdp.WaitLinger, so a
// runtime polling ?wait= again at once is one waiter since its first
// wait, and then it counts no more. The store's clock is the test's.
func TestWaitLingers(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := t0
	s.shared.Now = func() time.Time { return now }
	waiting := func() []api.Waiter {
		t.Helper()
		w, err := s.Waiting(t.Context(), []string{"d1"})
		if err != nil {
			t.Fatal(err)
		}
		return w["d1"]
	}
	stop, err := s.StartWaiting(t.Context(), "d1", "runtime-a", t0.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(10 * time.Second)
	stop()
	now = now.Add(pdp.WaitLinger - time.Millisecond)
	if w := waiting(); len(w) != 1 || !w[0].Since.Equal(t0) {
		t.Fatalf("just after the wait ended: %+v", w)
	}
	stop, err = s.StartWaiting(t.Context(), "d1", "runtime-a", now.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if w := waiting(); len(w) != 1 || !w[0].Since.Equal(t0) || w[0].By != "runtime-a" {
		t.Fatalf("polling again: %+v, want one waiter since %v", w, t0)
	}
	stop()
	now = now.Add(pdp.WaitLinger)
	if w := waiting(); len(w) != 0 {
		t.Fatalf("a linger after the last wait: %+v", w)
	}
	// A wait that runs to its end (its server died) stops counting then.
	if _, err := s.StartWaiting(t.Context(), "d1", "runtime-b", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if w := waiting(); len(w) != 1 || !w[0].Since.Equal(now) {
		t.Fatalf("a new waiter: %+v", w)
	}
	now = now.Add(time.Second)
	if w := waiting(); len(w) != 0 {
		t.Fatalf("past its end: %+v", w)
	}
}
