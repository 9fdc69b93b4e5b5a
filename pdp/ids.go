package pdp

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
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

// DecisionIDFloor is the smallest id NewDecisionID gives a decision made
// at or after t, so a store can select "since t" as a range of ids: ids
// sort as their times do. Before 1970 it is "" (every id); past the last
// time the id can hold, it is above every id.
func DecisionIDFloor(t time.Time) string {
	switch {
	case t.Before(time.Unix(0, 0)):
		return ""
	case t.After(time.Unix(0, math.MaxInt64)):
		return "g"
	}
	return fmt.Sprintf("%016x", uint64(t.UnixNano()))
}
