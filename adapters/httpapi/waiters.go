package httpapi

import "sync"

// AnswerSource is a store that hears of the answers other processes
// commit to the same database (replicas on PostgreSQL, which announce
// them with NOTIFY). The API subscribes when its store is one, so a
// request waiting here wakes when a person answers on another replica.
type AnswerSource interface {
	// OnAnswer calls fn with the decision id of every answer committed;
	// fn does not block.
	OnAnswer(fn func(decisionID string))
}

// waiters wakes requests parked on GET /v1/decisions/{id}?wait=… when
// the decision is answered.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waitEntry
}

type waitEntry struct {
	ch chan struct{}
	n  int
}

func newWaiters() *waiters { return &waiters{m: map[string]*waitEntry{}} }

// watch returns a channel closed when id is answered, and a release func
// the caller must call when it stops waiting.
func (w *waiters) watch(id string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.m[id]
	if e == nil {
		e = &waitEntry{ch: make(chan struct{})}
		w.m[id] = e
	}
	e.n++
	return e.ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		e.n--
		if e.n == 0 && w.m[id] == e {
			delete(w.m, id)
		}
	}
}

// notify wakes every request waiting on id.
func (w *waiters) notify(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.m[id]; e != nil {
		close(e.ch)
		delete(w.m, id)
	}
}
