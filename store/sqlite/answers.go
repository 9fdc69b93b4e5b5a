package sqlite

import (
	"context"
	"sync"
	"time"
)

// OnAnswer calls fn with the decision id of every answer this process
// commits — a person's, or the one the expiry sweep gives an ask nobody
// answered — after the commit. The HTTP API subscribes to wake the
// requests waiting on GET /v1/decisions/{id}?wait=. fn must not block.
func (s *Store) OnAnswer(fn func(decisionID string)) { s.answers.subscribe(fn) }

// answerHooks are the subscribers of OnAnswer.
type answerHooks struct {
	mu  sync.Mutex
	fns []func(string)
}

func (h *answerHooks) subscribe(fn func(string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fns = append(h.fns, fn)
}

func (h *answerHooks) deliver(id string) {
	h.mu.Lock()
	fns := h.fns
	h.mu.Unlock()
	for _, fn := range fns {
		fn(id)
	}
}

// endWaits removes this process's waits from ask_waiters as it closes,
// so no replica — or the next server on the file — shows them.
func (s *Store) endWaits() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.EndWaits(ctx); err != nil {
		s.log.Warn("closing the store", "err", err)
	}
}
