package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolperm/pdp/pdp"
)

// Record writes one decision event and returns once it is committed.
// Concurrent calls share transactions (group commit). When the database
// cannot be reached the event is refused with an error, so the decision
// is a 503, never an answer without its record.
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
// every event waiting, writes them in one transaction, and answers each
// after the commit.
type auditWriter struct {
	pool     *pgxpool.Pool
	observer AuditObserver
	queue    chan pendingEvent
	max      int
	timeout  time.Duration
	closeMu  sync.RWMutex
	closed   bool
	finished chan struct{}

	events, txns, maxBatch, errors atomic.Int64
}

func newAuditWriter(pool *pgxpool.Pool, max int, timeout time.Duration, observer AuditObserver) *auditWriter {
	a := &auditWriter{pool: pool, observer: observer, queue: make(chan pendingEvent, 4*max), max: max, timeout: timeout, finished: make(chan struct{})}
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

const insertDecision = `INSERT INTO decisions (id, time, session_id, tool, capability, args, cwd, fingerprint, grantable,
	decision, source, rule, reason, danger_verdict, danger_by, revision, latency_us, recorded, tool_use_id, parts)
	VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20)`

// writeTx sends the batch's inserts, and the change log entries of its
// asks, in one round trip run as one implicit transaction: the server
// commits it at the batch's end (synchronous_commit makes that durable)
// and only then answers, after which every caller of the batch is
// answered. An error anywhere rolls all of it back.
func (a *auditWriter) writeTx(batch []pendingEvent) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	var b pgx.Batch
	var asks []change
	for _, p := range batch {
		ev := p.ev
		d := ev.Decision
		args, err := json.Marshal(ev.Request.Args)
		if err != nil || ev.Request.Args == nil {
			args = []byte("{}")
		}
		var parts *string
		if len(d.Parts) > 0 {
			raw, err := json.Marshal(d.Parts)
			if err != nil {
				return fmt.Errorf("audit: the parts of %s: %w", d.DecisionID, err)
			}
			parts = text(string(raw))
		}
		var verdict, by *string
		if d.Danger != nil {
			verdict, by = text(d.Danger.Verdict), text(d.Danger.By)
		}
		b.Queue(insertDecision, d.DecisionID, utc(ev.Time), ev.SessionID, noNUL(ev.Request.Tool), optional(d.Capability), string(args),
			noNUL(ev.Request.Cwd), optional(d.Fingerprint), d.Grantable, d.Decision, d.Source, noNUL(d.Rule), noNUL(d.Reason),
			verdict, by, noNUL(d.Revision), ev.Latency.Microseconds(), p.recorded, optional(toolUseID(ev)), parts)
		if d.Decision == pdp.Ask {
			asks = append(asks, change{time: ev.Time, kind: pdp.ChangeAsk, sessionID: ev.SessionID, decisionID: d.DecisionID})
		}
	}
	// Asks go to the change log in the same transaction, last: the
	// counter's lock is held only from there to the commit.
	if err := queueChanges(&b, asks...); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := a.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("audit: writing %d decisions: %w", len(batch), err)
	}
	return nil
}

// noNUL replaces NUL characters, which PostgreSQL's text refuses: one
// event carrying one must not fail the batch of everyone else's.
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// toolUseID is the runtime's id of the call, or nil.
func toolUseID(ev pdp.Event) *string {
	if ev.Request.ToolUseID == "" {
		return nil
	}
	return &ev.Request.ToolUseID
}

func text(s string) *string { s = noNUL(s); return &s }

func optional(s *string) *string {
	if s == nil {
		return nil
	}
	return text(*s)
}
