package sqlite

import "sync"

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
