package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolperm/pdp/internal/groupcommit"
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
	st := s.audit.Stats()
	return AuditStats{Events: st.Items, Transactions: st.Transactions, MaxBatch: st.MaxBatch, Errors: st.Errors}
}

type pendingEvent struct {
	ev       pdp.Event
	recorded []byte // ev.Recorded encoded by the caller, off the writer's goroutine
}

// auditWriter owns the writes of decision events: one goroutine takes
// every event waiting, writes them in one transaction, and answers each
// after the commit.
type auditWriter struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	*groupcommit.Writer[pendingEvent]
}

func newAuditWriter(pool *pgxpool.Pool, max int, timeout time.Duration, observer AuditObserver) *auditWriter {
	a := &auditWriter{pool: pool, timeout: timeout}
	opts := groupcommit.Options{MaxBatch: max, Closed: ErrClosed}
	if observer != nil {
		opts.Observe = observer.AuditBatch
	}
	a.Writer = groupcommit.New(a.writeTx, opts)
	return a
}

func (a *auditWriter) record(ctx context.Context, ev pdp.Event) error {
	return a.Submit(ctx, pendingEvent{ev: ev, recorded: pdp.EncodeRecorded(ev.Recorded)})
}

// close stops taking events, writes those queued, and returns when done.
func (a *auditWriter) close() { a.Close() }

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
