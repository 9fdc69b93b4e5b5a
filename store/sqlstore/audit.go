package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/groupcommit"
)

// AuditObserver is told of every audit transaction: how many events it
// carried, how long it took, and whether it failed.
type AuditObserver interface {
	AuditBatch(events int, took time.Duration, err error)
}

// AuditStats counts the audit writer's work.
type AuditStats struct {
	Events       int64 // events committed
	Transactions int64 // transactions that carried them
	MaxBatch     int64 // most events in one transaction
	Errors       int64 // transactions that failed
}

// PendingEvent is a decision event waiting for its transaction.
type PendingEvent struct {
	Event    pdp.AuditRecord
	Recorded []byte // Event.Recorded encoded by the caller, off the writer's goroutine
}

// AuditWriter owns the writes of decision events: one goroutine takes
// every event waiting, writes them in one transaction of the backend's,
// and answers each after the commit.
type AuditWriter struct {
	w *groupcommit.Writer[PendingEvent]
}

// NewAuditWriter starts a writer committing batches of at most max events
// by write; Record returns closed once it is closed.
func NewAuditWriter(write func(ctx context.Context, batch []PendingEvent) error, max int, observer AuditObserver, closed error) *AuditWriter {
	opts := groupcommit.Options{MaxBatch: max, Closed: closed}
	if observer != nil {
		opts.Observe = observer.AuditBatch
	}
	return &AuditWriter{w: groupcommit.New(write, opts)}
}

// Record writes one decision event and returns once it is committed.
// Concurrent calls share transactions (group commit).
func (a *AuditWriter) Record(ctx context.Context, ev pdp.AuditRecord) error {
	return a.w.Submit(ctx, PendingEvent{Event: ev, Recorded: pdp.EncodeRecorded(ev.Recorded)})
}

// Close stops taking events, writes those queued, and returns when done.
func (a *AuditWriter) Close() { a.w.Close() }

// Stats returns the counts so far.
func (a *AuditWriter) Stats() AuditStats {
	st := a.w.Stats()
	return AuditStats{Events: st.Items, Transactions: st.Transactions, MaxBatch: st.MaxBatch, Errors: st.Errors}
}

// InsertDecision writes one event; EventArgs are its values.
const InsertDecision = `INSERT INTO decisions (id, time, session_id, tool, capability, args, cwd, fingerprint, grantable,
	decision, source, rule, reason, danger_verdict, danger_by, revision, latency_us, recorded, tool_use_id, parts, labels)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// EventArgs are the values of InsertDecision for p.
func (d Dialect) EventArgs(p PendingEvent) ([]any, error) {
	ev := p.Event
	dec := ev.Decision
	args, err := json.Marshal(ev.Request.Args)
	if err != nil || ev.Request.Args == nil {
		args = []byte("{}")
	}
	var parts *string
	if len(dec.Parts) > 0 {
		raw, err := json.Marshal(dec.Parts)
		if err != nil {
			return nil, fmt.Errorf("the parts of %s: %w", dec.DecisionID, err)
		}
		parts = d.optional(string(raw))
	}
	var verdict, by *string
	if dec.Danger != nil {
		verdict, by = d.optional(dec.Danger.Verdict), d.optional(dec.Danger.By)
	}
	var capability, fingerprint *string
	if dec.Capability != nil {
		capability = d.optional(*dec.Capability)
	}
	if dec.Fingerprint != nil {
		fingerprint = d.optional(*dec.Fingerprint)
	}
	var toolUseID *string
	if ev.Request.ToolUseID != "" {
		toolUseID = d.optional(ev.Request.ToolUseID)
	}
	return []any{dec.DecisionID, d.Time(ev.Time), ev.SessionID, d.Text(ev.Request.Tool), capability, string(args),
		d.Text(ev.Request.Cwd), fingerprint, dec.Grantable, dec.Decision, dec.Source, d.Text(dec.Rule), d.Text(dec.Reason),
		verdict, by, d.Text(dec.Revision), ev.Latency.Microseconds(), p.Recorded, toolUseID, parts, d.LabelsColumn(dec.Labels)}, nil
}

// optional is text for a nullable column.
func (d Dialect) optional(s string) *string {
	s = d.Text(s)
	return &s
}
