package pdp

import (
	"context"
	"time"

	"github.com/toolperm/pdp/api"
)

// WaitLinger is how long a wait that ended still counts: a runtime that
// polls ?wait= again at once waits on without a gap, and keeps the time
// its first wait began.
const WaitLinger = 2 * time.Second

// WaitingStore keeps who waits on which ask, in the store, so every
// replica sharing it sees every replica's waiters. A wait is recorded
// until its end at the latest, so one held by a server that died stops
// counting then; a server that shuts down removes its own.
type WaitingStore interface {
	// StartWaiting records that by waits on the decision from now until
	// until at the latest. stop records the end of the wait (it lingers
	// WaitLinger); it is safe to call more than once.
	StartWaiting(ctx context.Context, decisionID, by string, until time.Time) (stop func(), err error)
	// Waiting returns who waits on each of the decisions now, by waiter,
	// earliest first; a decision nobody waits on is absent.
	Waiting(ctx context.Context, decisionIDs []string) (map[string][]api.Waiter, error)
}
