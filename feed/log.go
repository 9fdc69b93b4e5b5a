package feed

import (
	"context"
	"errors"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// The kinds of change the live feed carries (GET /v1/events).
const (
	// ChangeAsk: an ask was made; the change carries the decision.
	ChangeAsk = "ask"
	// ChangeAnswer: a person answered an ask; the change carries the
	// decision with its answer.
	ChangeAnswer = "answer"
	// ChangeOutcome: a runtime reported what became of an ask; the change
	// carries the decision with its outcome. It is no answer: the ask
	// stays pending until a person answers it.
	ChangeOutcome = "outcome"
	// ChangeLevel: a session's permission level changed; the change
	// carries the session as it was after the change.
	ChangeLevel = "level"
)

// Change is one entry of the store's change log: something a person
// watching the PDP wants to see at once.
type Change struct {
	// Seq is the change's place in the log: it grows in commit order and
	// survives a restart, so it is the id a reader resumes from.
	Seq       int64
	Kind      string
	SessionID string
	Time      time.Time
	// Decision is the decision of an ask or answer, as stored when the
	// change was read (nil when the decision is gone from the trail).
	Decision *api.Event
	// Session is the session after a level change.
	Session *api.Session
}

// ChangeLog is the store's record of changes. The store writes each entry
// in the same transaction as the ask, the answer or the level change it
// tells of, so the log has no gaps and no entry for something that did
// not commit.
type ChangeLog interface {
	// ChangesAfter returns up to limit changes with Seq above after,
	// oldest first.
	ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error)
	// ChangeBounds returns the first and last Seq the log holds (0, 0
	// when it is empty).
	ChangeBounds(ctx context.Context) (first, last int64, err error)
}

// Feed delivers the change log to live readers: it reads the log when
// notified, keeps the recent changes in memory, and hands each reader the
// changes after the one it last saw.
type Feed interface {
	pdp.ChangeListener
	// Subscribe starts a reader after Seq after (below 0: from now on).
	// ErrResumeTooOld when the log no longer holds what follows after,
	// or never held after.
	Subscribe(ctx context.Context, after int64) (Subscription, error)
}

// Subscription is one live reader of the feed.
type Subscription interface {
	// Changes delivers the changes in order; it is closed when the
	// subscription ends, and Err then says why.
	Changes() <-chan Change
	// After is the Seq the subscription started after.
	After() int64
	Err() error
	// Close ends the subscription.
	Close()
}

// Why a subscription could not start or ended.
var (
	ErrResumeTooOld = errors.New("the change log no longer holds the changes after that id")
	ErrSlowReader   = errors.New("the reader fell too far behind and was dropped; resume from the last id it read")
	ErrFeedClosed   = errors.New("the feed is closed")
)
