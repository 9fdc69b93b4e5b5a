package assessor

import (
	"sync"
	"time"
)

// breaker opens after a run of consecutive failures and stays open for a
// cool-down; the first call after it is a trial that closes it on success.
type breaker struct {
	mu        sync.Mutex
	threshold int
	cooldown  time.Duration
	failures  int
	openUntil time.Time
}

// allow reports whether a call may go out now.
func (b *breaker) allow(now time.Time) bool {
	if b.threshold <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return !now.Before(b.openUntil)
}

// record notes the outcome of a call.
func (b *breaker) record(ok bool, now time.Time) {
	if b.threshold <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.openUntil = now.Add(b.cooldown)
		b.failures = b.threshold - 1 // one more failure after the cool-down reopens it
	}
}
