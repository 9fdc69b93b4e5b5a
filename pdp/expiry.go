package pdp

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultExpireAfter is how long an ask waits for a person before the
// PDP answers it expired: a working day and a night, so an ask made in
// the evening is still there in the morning, while the inbox does not
// keep asks nobody will answer for ever.
const DefaultExpireAfter = 24 * time.Hour

// ErrExpired is the error of an answer to an ask that expired first; it
// is an ErrConflict too.
var ErrExpired = fmt.Errorf("%w: the ask expired before it was answered", ErrConflict)

// IsExpired says whether err is ErrExpired.
func IsExpired(err error) bool { return errors.Is(err, ErrExpired) }

// AskExpirer is what a store does for expiry: it answers the oldest
// unanswered asks made before a cut with api.Expired on api.ExpiryChannel,
// each exactly as a person's answer is recorded (once, with its change
// log entry, never a grant), so an answer that wins the race is kept and
// the ask is simply not expired.
type AskExpirer interface {
	// ExpireAsks expires at most limit asks made before the cut, oldest
	// first, and returns the ids it expired; fewer than limit candidates
	// means none is left.
	ExpireAsks(ctx context.Context, before time.Time, limit int) (expired []string, more bool, err error)
}

// expire answers the asks older than ExpireAfter expired, batch by
// batch, and tells Changes when it did. A store without AskExpirer, or
// ExpireAfter 0, expires nothing.
func (s *Sweeper) expire(ctx context.Context) (int, error) {
	expirer, ok := s.Store.(AskExpirer)
	if !ok || s.ExpireAfter <= 0 {
		return 0, nil
	}
	batch, pause := s.Batch, s.Pause
	if batch <= 0 {
		batch = DefaultSweepBatch
	}
	if pause <= 0 {
		pause = DefaultSweepPause
	}
	cut := s.now().Add(-s.ExpireAfter)
	total := 0
	var err error
	for {
		t := time.Now()
		var ids []string
		var more bool
		ids, more, err = expirer.ExpireAsks(ctx, cut, batch)
		total += len(ids)
		if len(ids) > 0 && s.Changes != nil {
			s.Changes.Changed()
		}
		if err != nil {
			err = fmt.Errorf("expiring asks made before %s: %w", cut.UTC().Format(time.RFC3339), err)
			break
		}
		if !more {
			break
		}
		if err = Wait(ctx, max(pause, time.Since(t))); err != nil {
			break
		}
	}
	return total, err
}
