package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// OnAnswer calls fn with the decision id of every answer committed to the
// database, by this process or any other replica, as PostgreSQL delivers
// the NOTIFY (within milliseconds). The HTTP API subscribes to wake the
// requests waiting on GET /v1/decisions/{id}?wait=. fn must not block.
func (s *Store) OnAnswer(fn func(decisionID string)) { s.answers.subscribe(fn) }

// listener holds one connection of its own LISTENing on a channel and
// reconnects (every second) when it is lost. Notifications sent while it
// is disconnected are not heard: a request waiting through an outage
// wakes at the end of its wait instead, and reads the answer then.
type listener struct {
	mu    sync.Mutex
	hooks []func(string)
	done  chan struct{}
	first chan struct{} // closed after the first attempt to listen
	once  sync.Once
}

// newListener starts listening and returns after the first attempt, so
// an answer committed after Open is heard (unless the database was
// unreachable then: the listener keeps trying).
func newListener(ctx context.Context, cfg *pgx.ConnConfig, channel string) *listener {
	l := &listener{done: make(chan struct{}), first: make(chan struct{})}
	go l.run(ctx, cfg, channel)
	select {
	case <-l.first:
	case <-ctx.Done():
	}
	return l
}

func (l *listener) attempted() { l.once.Do(func() { close(l.first) }) }

func (l *listener) subscribe(fn func(string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, fn)
}

// wait returns once the listener has stopped (its context ended).
func (l *listener) wait() { <-l.done }

func (l *listener) run(ctx context.Context, cfg *pgx.ConnConfig, channel string) {
	defer close(l.done)
	defer l.attempted()
	for ctx.Err() == nil {
		_ = l.listen(ctx, cfg, channel)
		l.attempted()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (l *listener) listen(ctx context.Context, cfg *pgx.ConnConfig, channel string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	l.attempted()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.mu.Lock()
		hooks := l.hooks
		l.mu.Unlock()
		for _, fn := range hooks {
			fn(n.Payload)
		}
	}
}
