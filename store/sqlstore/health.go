package sqlstore

import (
	"fmt"
	"sync"
	"time"
)

// Health is what a store knows of its own state without asking the
// database: a fault that holds until it is cleared (the file it writes
// is no longer the one its path names) and the result of its last
// writes. GET /ready reads it, so a probe never waits on the database.
type Health struct {
	mu        sync.Mutex
	fault     error
	lastErr   error
	lastErrAt time.Time
	lastOK    time.Time
	now       func() time.Time
}

// HealthSettle is how long after a failed write the store stays
// unhealthy even when a later write succeeds: on a nearly full disk some
// small commits pass while most fail, and a ready that flips with each is
// no help to a load balancer.
const HealthSettle = time.Second

// NewHealth returns the health of a store that has just opened.
func NewHealth() *Health {
	h := &Health{now: time.Now}
	h.lastOK = h.now()
	return h
}

// Wrote records the result of a write (an audit batch, a probe).
func (h *Health) Wrote(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.lastErr, h.lastErrAt = err, h.now()
		return
	}
	h.lastOK = h.now()
	if h.lastErr != nil && h.lastOK.Sub(h.lastErrAt) >= HealthSettle {
		h.lastErr = nil
	}
}

// SetFault records a fault that refuses every decision until cleared
// (nil clears it).
func (h *Health) SetFault(err error) {
	h.mu.Lock()
	h.fault = err
	h.mu.Unlock()
}

// Fault is the standing fault, or nil.
func (h *Health) Fault() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fault
}

// Err is why the audit trail cannot be written now, or nil.
func (h *Health) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.fault != nil:
		return h.fault
	case h.lastErr != nil:
		return fmt.Errorf("the last write failed %s ago: %w", h.now().Sub(h.lastErrAt).Round(time.Millisecond), h.lastErr)
	}
	return nil
}

// Failing reports whether the last writes failed (the store then probes).
func (h *Health) Failing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr != nil
}

// Idle reports whether nothing was written successfully for at least d.
func (h *Health) Idle(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now().Sub(h.lastOK) >= d
}
