package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/toolperm/pdp/store/sqlstore"
)

// ErrClosed is the error of a store used after Close.
var ErrClosed = errors.New("store is closed")

// Options tune the store; the zero value is sane.
type Options struct {
	// MaxConns bounds the connections of this process (default 10): the
	// audit writer holds one at a time, the listener one of its own, the
	// rest serve reads, session writes and answers.
	MaxConns int32
	// MaxBatch bounds how many audit events one transaction carries.
	MaxBatch int
	// WriteTimeout bounds one audit transaction (default 10s): past it the
	// events of the batch are refused (a 503), never answered unrecorded.
	WriteTimeout time.Duration
	// Observer is told of every audit transaction (metrics); may be nil.
	Observer AuditObserver
}

// AuditObserver is told of every audit transaction: how many events it
// carried, how long it took, and whether it failed.
type AuditObserver = sqlstore.AuditObserver

// AuditStats counts the audit writer's work.
type AuditStats = sqlstore.AuditStats

// shared names the embedded queries both backends keep alike.
type shared = sqlstore.Store

// Store is the PostgreSQL state of the PDP. It is safe for concurrent use,
// by any number of processes on the same database. It keeps no session
// cache: one query reads a tree as committed, whichever replica changed
// it.
type Store struct {
	*shared
	pool     *pgxpool.Pool
	listener *listener
	closeCtx context.CancelFunc
	health   *sqlstore.Health
	probed   chan struct{}
}

// IsURL reports whether a db.path names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsURL(path string) bool {
	return strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://")
}

// Open connects to the database at url and applies the migrations it
// lacks. Replicas starting together migrate one at a time.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = 10
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 512
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("db.path: %w", err)
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	// UTC everywhere: timestamptz comes back in the session's zone.
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	// A connection the pool drops because it broke (the server went away
	// or stalled past a deadline) makes the store unhealthy at once; the
	// probe then watches it come back.
	health := sqlstore.NewHealth()
	cfg.BeforeClose = func(c *pgx.Conn) {
		if c.IsClosed() {
			health.Wrote(errors.New("a connection to PostgreSQL broke"))
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrating the PostgreSQL database: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	conn := db{conn{pool}, pool.Begin}
	s := &Store{pool: pool, closeCtx: cancel, health: health, probed: make(chan struct{}), shared: &sqlstore.Store{Read: conn, Write: conn, Dialect: dialect,
		Now: func() time.Time { return utc(time.Now()) }, AddChanges: addChanges, FindRoot: rootID, Answered: announceAnswer}}
	s.Audit = sqlstore.NewAuditWriter(func(ctx context.Context, batch []sqlstore.PendingEvent) error {
		err := writeTx(ctx, pool, opts.WriteTimeout, batch)
		s.health.Wrote(err)
		return err
	}, opts.MaxBatch, opts.Observer, ErrClosed)
	s.listener = newListener(lctx, cfg.ConnConfig.Copy())
	go s.probe(lctx)
	return s, nil
}

// probe checks, while audit batches fail or none succeeded for a while,
// that the database takes writes, until ctx ends; GET /ready reads the
// results and never waits on the database.
func (s *Store) probe(ctx context.Context) {
	defer close(s.probed)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.health.Failing() || s.health.Idle(5*time.Second) {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			err := s.Writable(pctx)
			cancel()
			if ctx.Err() == nil {
				s.health.Wrote(err)
			}
		}
	}
}

// Health is why the audit trail cannot be written now, or nil: the
// result of the last audit batches and probes. It never waits on the
// database.
func (s *Store) Health() error {
	if err := s.health.Err(); err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}

// Close flushes the pending audit events, stops listening and closes the
// pool.
func (s *Store) Close() error {
	s.Audit.Close()
	s.endWaits()
	s.closeCtx()
	s.listener.wait()
	<-s.probed
	s.pool.Close()
	return nil
}

// Writable checks that the database accepts writes now (not a standby,
// reachable).
func (s *Store) Writable(ctx context.Context) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `UPDATE schema_migrations SET version = version WHERE false`); err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	return nil
}

// utc is how times are stored and returned: PostgreSQL keeps
// microseconds, so a time read back equals the one written truncated to
// them.
func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// dialect is what PostgreSQL's queries send of their own.
var dialect = sqlstore.Dialect{
	Time:       func(t time.Time) any { return utc(t) },
	Text:       noNUL,
	Violation:  violation,
	ListIndex:  func(session, decision, source bool) string { return "" },
	Arm:        func(page string) string { return `(` + page + `)` },
	FilterTime: "time",
	LockRow:    " FOR UPDATE",
}

// violation names the constraint a PostgreSQL error broke, by its
// SQLSTATE.
func violation(err error) sqlstore.Violation {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return sqlstore.NoViolation
	}
	switch pe.Code {
	case "23505":
		return sqlstore.Unique
	case "23503":
		return sqlstore.ForeignKey
	}
	return sqlstore.NoViolation
}
