package httpapi

import (
	"sync"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
)

// A change is encoded once however many streams send it, also when they
// ask at the same moment; the same Seq read again from the log (other
// pointers) is encoded apart, and so is a change older than the cache.
func TestEventFramesEncodeAChangeOnce(t *testing.T) {
	f := newEventFrames()
	encodes := map[*api.Event]int{}
	var mu sync.Mutex
	frame := func(c feed.Change) []byte {
		raw, err := f.encoded(c, func() ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			encodes[c.Decision]++
			return []byte(c.Decision.DecisionID), nil
		})
		if err != nil {
			t.Error(err)
		}
		return raw
	}
	ask := feed.Change{Seq: 7, Kind: feed.ChangeAsk, Decision: &api.Event{}}
	ask.Decision.DecisionID = "d-7"
	var streams sync.WaitGroup
	for range 100 {
		streams.Go(func() {
			if got := string(frame(ask)); got != "d-7" {
				t.Errorf("frame %q", got)
			}
		})
	}
	streams.Wait()
	if encodes[ask.Decision] != 1 {
		t.Fatalf("encoded %d times for 100 streams", encodes[ask.Decision])
	}

	fromLog := ask
	fromLog.Decision = &api.Event{}
	fromLog.Decision.DecisionID = "d-7, answered since"
	if got := string(frame(fromLog)); got != "d-7, answered since" || encodes[fromLog.Decision] != 1 {
		t.Fatalf("the change read again from the log: %q, encoded %d times", got, encodes[fromLog.Decision])
	}

	for i := range frameCache {
		newer := feed.Change{Seq: int64(100 + i), Kind: feed.ChangeAsk, Decision: &api.Event{}}
		frame(newer)
	}
	frame(ask)
	if encodes[ask.Decision] != 2 {
		t.Fatalf("a change older than the cache was encoded %d times in all, want 2", encodes[ask.Decision])
	}
}
