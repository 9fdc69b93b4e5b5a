package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// Record writes one decision event and returns once it is committed.
// Concurrent calls share transactions (group commit).
func (s *Store) Record(ctx context.Context, ev pdp.Event) error {
	return s.audit.record(ctx, ev)
}

// AuditStats counts the audit writer's work.
type AuditStats struct {
	Events       int64 // events committed
	Transactions int64 // transactions that carried them
	MaxBatch     int64 // most events in one transaction
	Errors       int64 // transactions that failed
}

// AuditStats returns the counts so far.
func (s *Store) AuditStats() AuditStats {
	a := s.audit
	return AuditStats{Events: a.events.Load(), Transactions: a.txns.Load(), MaxBatch: a.maxBatch.Load(), Errors: a.errors.Load()}
}

type pendingEvent struct {
	ev       pdp.Event
	recorded []byte // ev.Recorded encoded by the caller, off the writer's goroutine
	done     chan error
}

// auditWriter owns the writes of decision events: one goroutine takes
// every event waiting, writes them in one transaction, and answers each.
type auditWriter struct {
	db       *sql.DB
	observer AuditObserver
	queue    chan pendingEvent
	max      int
	closeMu  sync.RWMutex
	closed   bool
	finished chan struct{}

	events, txns, maxBatch, errors atomic.Int64
}

func newAuditWriter(db *sql.DB, max int, observer AuditObserver) *auditWriter {
	a := &auditWriter{db: db, observer: observer, queue: make(chan pendingEvent, 4*max), max: max, finished: make(chan struct{})}
	go a.run()
	return a
}

func (a *auditWriter) record(ctx context.Context, ev pdp.Event) error {
	p := pendingEvent{ev: ev, recorded: pdp.EncodeRecorded(ev.Recorded), done: make(chan error, 1)}
	a.closeMu.RLock()
	if a.closed {
		a.closeMu.RUnlock()
		return ErrClosed
	}
	select {
	case a.queue <- p:
	case <-ctx.Done():
		a.closeMu.RUnlock()
		return ctx.Err()
	}
	a.closeMu.RUnlock()
	// Once queued the event is written whatever the caller does; wait for
	// the outcome so an answer is never sent before its event commits.
	return <-p.done
}

// close stops taking events, writes those queued, and returns when done.
func (a *auditWriter) close() {
	a.closeMu.Lock()
	if !a.closed {
		a.closed = true
		close(a.queue)
	}
	a.closeMu.Unlock()
	<-a.finished
}

func (a *auditWriter) run() {
	defer close(a.finished)
	batch := make([]pendingEvent, 0, a.max)
	for first := range a.queue {
		batch = append(batch[:0], first)
	fill:
		for len(batch) < a.max {
			select {
			case p, ok := <-a.queue:
				if !ok {
					break fill
				}
				batch = append(batch, p)
			default:
				break fill
			}
		}
		err := a.write(batch)
		for _, p := range batch {
			p.done <- err
		}
	}
}

func (a *auditWriter) write(batch []pendingEvent) error {
	start := time.Now()
	err := a.writeTx(batch)
	if a.observer != nil {
		a.observer.AuditBatch(len(batch), time.Since(start), err)
	}
	if err != nil {
		a.errors.Add(1)
		return err
	}
	n := int64(len(batch))
	a.events.Add(n)
	a.txns.Add(1)
	for {
		cur := a.maxBatch.Load()
		if n <= cur || a.maxBatch.CompareAndSwap(cur, n) {
			break
		}
	}
	return nil
}

func (a *auditWriter) writeTx(batch []pendingEvent) error {
	ctx := context.Background()
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO decisions (id, time, session_id, tool, capability, args, cwd, fingerprint, grantable,
		decision, source, rule, reason, danger_verdict, danger_by, revision, latency_us, recorded) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer stmt.Close()
	for _, p := range batch {
		ev := p.ev
		d := ev.Decision
		args, err := json.Marshal(ev.Request.Args)
		if err != nil || ev.Request.Args == nil {
			args = []byte("{}")
		}
		var verdict, by any
		if d.Danger != nil {
			verdict, by = d.Danger.Verdict, d.Danger.By
		}
		grantable := 0
		if d.Grantable {
			grantable = 1
		}
		if _, err := stmt.ExecContext(ctx, d.DecisionID, formatTime(ev.Time), ev.SessionID, ev.Request.Tool, d.Capability, string(args), ev.Request.Cwd,
			d.Fingerprint, grantable, d.Decision, d.Source, d.Rule, d.Reason, verdict, by, d.Revision, ev.Latency.Microseconds(), p.recorded); err != nil {
			return fmt.Errorf("audit: writing decision %s: %w", d.DecisionID, err)
		}
	}
	if err := linkCalls(ctx, tx, batch); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := recordParts(ctx, tx, batch); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: commit: %w", err)
	}
	return nil
}
