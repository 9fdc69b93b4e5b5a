package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/toolperm/pdp/internal/groupcommit"
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
	st := s.audit.Stats()
	return AuditStats{Events: st.Items, Transactions: st.Transactions, MaxBatch: st.MaxBatch, Errors: st.Errors}
}

type pendingEvent struct {
	ev       pdp.Event
	recorded []byte // ev.Recorded encoded by the caller, off the writer's goroutine
}

// auditWriter owns the writes of decision events: one goroutine takes
// every event waiting, writes them in one transaction, and answers each.
type auditWriter struct {
	db *sql.DB
	*groupcommit.Writer[pendingEvent]
}

func newAuditWriter(db *sql.DB, max int, observer AuditObserver) *auditWriter {
	a := &auditWriter{db: db}
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
