package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// ExpireAsks answers at most limit unanswered asks made before the cut
// api.Expired on api.ExpiryChannel, oldest first, each in the
// transaction of an answer (answer): once, with its change log entry
// and its announcement, never a grant. An ask a person (or another
// replica's sweep) answers meanwhile is not expired and is no error. It
// reads the asks through the index of unanswered asks, so its cost is
// the number of pending asks, not the trail's.
func (s *Store) ExpireAsks(ctx context.Context, before time.Time, limit int) ([]string, bool, error) {
	rows, err := s.Read.Query(ctx, `SELECT id FROM decisions `+s.PendingIndex+` WHERE decision = 'ask' AND answer IS NULL AND time < ? ORDER BY time, id LIMIT ?`,
		s.Time(before), limit)
	if err != nil {
		return nil, false, fmt.Errorf("reading unanswered asks: %w", err)
	}
	candidates, err := collect(rows, []string{}, func(r Rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, "reading unanswered asks")
	if err != nil {
		return nil, false, err
	}
	var expired []string
	for _, id := range candidates {
		_, err := s.answer(ctx, id, api.Answer{Answer: api.Expired, Channel: api.ExpiryChannel}, "expiring the ask")
		switch {
		case err == nil:
			expired = append(expired, id)
		case errors.Is(err, pdp.ErrConflict), errors.Is(err, pdp.ErrNotFound):
			// Answered, or deleted by retention, since the read.
		default:
			return expired, false, err
		}
	}
	return expired, len(candidates) == limit, nil
}

// answerCommitted tells AnswerCommitted of an answer that committed.
func (s *Store) answerCommitted(id string) {
	if s.AnswerCommitted != nil {
		s.AnswerCommitted(id)
	}
}
