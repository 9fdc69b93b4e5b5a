package pdp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// NewDecisionID returns an id that sorts by time: 16 hex digits of the
// Unix time in nanoseconds, then 8 random hex digits.
func NewDecisionID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("%016x%s", uint64(t.UnixNano()), hex.EncodeToString(b[:]))
}

// NewSessionID returns a random session id for a session created without one.
func NewSessionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}
