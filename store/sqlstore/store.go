package sqlstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// Violation names the constraint a failed INSERT broke.
type Violation int

// The constraints a backend tells apart.
const (
	NoViolation Violation = iota
	Unique
	ForeignKey
)

// Dialect is how one database differs in what the shared queries send.
type Dialect struct {
	// Time is a time as a time column takes it.
	Time func(time.Time) any
	// Text is free text as a text column takes it.
	Text func(string) string
	// Violation names the constraint err broke, if any.
	Violation func(err error) Violation
	// ListIndex is what follows "FROM decisions" in a list by the
	// filters it has (an index to walk), or "".
	ListIndex func(session, decision, source bool) string
	// Arm makes one decision's page of a list a part of a UNION ALL.
	Arm func(page string) string
	// FilterTime is the time column in a condition that must not choose
	// the index: the id range does.
	FilterTime string
	// PendingIndex is what follows "FROM decisions" in a read of the
	// unanswered asks (the index of them), or "".
	PendingIndex string
	// LockRow ends the read of a row the transaction updates next.
	LockRow string
}

// Store is the state both backends keep alike. Its methods implement the
// core's store roles; a backend embeds it and adds what it does its own
// way.
type Store struct {
	// Read serves reads, Write every write (the two may be one pool).
	Read, Write DB
	// Audit writes the decision events.
	Audit *AuditWriter
	Dialect
	// Now is the time of a write, as the backend keeps it.
	Now func() time.Time
	// AddChanges appends entries to the change log inside tx.
	AddChanges func(ctx context.Context, tx Tx, entries ...Change) error
	// FindRoot finds the root of a session's tree through db.
	FindRoot func(ctx context.Context, db Conn, id string) (string, error)
	// Answered, when set, runs in the transaction of a person's answer,
	// before it commits (never of a runtime's outcome, which is no answer).
	Answered func(ctx context.Context, tx Tx, decisionID string) error
	// AnswerCommitted, when set, is told of every answer this process
	// committed (a person's or the expiry's), after the commit.
	AnswerCommitted func(decisionID string)

	// instanceID names this process's waits (waiting.go).
	instanceID   string
	instanceOnce sync.Once
	waited       atomic.Bool
	// Changed, when set, is told after every committed write that changes
	// a stored session or the grants: what a tree already read holds. A
	// new session is not such a write: no tree read before holds it (a
	// tree is read only once its session exists, and sessions are never
	// deleted), and agents start sessions all the time.
	Changed func()
}

// Record writes one decision event and returns once it is committed.
// Concurrent calls share transactions (group commit). An event the
// database refuses is an error, so the decision is a 503, never an
// answer without its record.
func (s *Store) Record(ctx context.Context, ev pdp.AuditRecord) error {
	return s.Audit.Record(ctx, ev)
}

// AuditStats returns the counts of the audit writer's work so far.
func (s *Store) AuditStats() AuditStats { return s.Audit.Stats() }

// RootID returns the id of the root of the session's tree.
func (s *Store) RootID(ctx context.Context, id string) (string, error) {
	return s.FindRoot(ctx, s.Read, id)
}

func (s *Store) changed() {
	if s.Changed != nil {
		s.Changed()
	}
}

// Change is one entry to append to the change log.
type Change struct {
	Time       time.Time
	Kind       string
	SessionID  string
	DecisionID string       // of an ask or an answer
	Session    *api.Session // after a level change
}
