package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/store/sqlstore"
)

// The NOTIFY channels: an answer's payload is its decision id; a change
// to the change log carries none.
const (
	answersChannel = "pdp_answers"
	changesChannel = "pdp_changes"
)

// OnAnswer calls fn with the decision id of every answer committed to the
// database, by this process or any other replica, as PostgreSQL delivers
// the NOTIFY (within milliseconds). The HTTP API subscribes to wake the
// requests waiting on GET /v1/decisions/{id}?wait=. fn must not block.
func (s *Store) OnAnswer(fn func(decisionID string)) {
	s.listener.subscribe(answersChannel, fn)
}

// OnChange calls fn whenever a process commits to the change log (an ask,
// an answer, a level change), and once after the listener reconnects, as
// changes may have been missed meanwhile: the live feed re-reads the log
// (pdp.ChangeListener). fn must not block.
func (s *Store) OnChange(fn func()) {
	s.listener.subscribe(changesChannel, func(string) { fn() })
}

// listener holds one connection of its own LISTENing on the channels and
// reconnects (every second) when it is lost. An answer announced while it
// is disconnected is not heard: a request waiting through an outage wakes
// at the end of its wait instead, and reads the answer then.
type listener struct {
	mu    sync.Mutex
	hooks map[string][]func(string)
	done  chan struct{}
	first chan struct{} // closed after the first attempt to listen
	once  sync.Once
}

// newListener starts listening and returns after the first attempt, so
// what is committed after Open is heard (unless the database was
// unreachable then: the listener keeps trying).
func newListener(ctx context.Context, cfg *pgx.ConnConfig) *listener {
	l := &listener{hooks: map[string][]func(string){}, done: make(chan struct{}), first: make(chan struct{})}
	go l.run(ctx, cfg)
	select {
	case <-l.first:
	case <-ctx.Done():
	}
	return l
}

func (l *listener) attempted() { l.once.Do(func() { close(l.first) }) }

func (l *listener) subscribe(channel string, fn func(string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks[channel] = append(l.hooks[channel], fn)
}

func (l *listener) deliver(channel, payload string) {
	l.mu.Lock()
	hooks := l.hooks[channel]
	l.mu.Unlock()
	for _, fn := range hooks {
		fn(payload)
	}
}

// wait returns once the listener has stopped (its context ended).
func (l *listener) wait() { <-l.done }

func (l *listener) run(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(l.done)
	defer l.attempted()
	for reconnect := false; ctx.Err() == nil; reconnect = true {
		_ = l.listen(ctx, cfg, reconnect)
		l.attempted()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (l *listener) listen(ctx context.Context, cfg *pgx.ConnConfig, reconnect bool) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, channel := range []string{answersChannel, changesChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			return err
		}
	}
	l.attempted()
	if reconnect {
		l.deliver(changesChannel, "")
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.deliver(n.Channel, n.Payload)
	}
}

// announceAnswer tells every replica, at the commit of t, that the
// decision was answered.
func announceAnswer(ctx context.Context, t sqlstore.Tx, decisionID string) error {
	_, err := t.Exec(ctx, `SELECT pg_notify($1, $2)`, answersChannel, decisionID)
	return err
}
