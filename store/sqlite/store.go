package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
	"github.com/toolperm/pdp/store/sqlstore"
	"github.com/toolperm/pdp/store/storerows"
)

// ErrClosed is the error of a store used after Close.
var ErrClosed = errors.New("store is closed")

// Options tune the store; the zero value is sane.
type Options struct {
	// MaxBatch bounds how many audit events one transaction carries.
	MaxBatch int
	// Synchronous is SQLite's synchronous pragma: FULL (default) makes
	// every committed event survive a power loss, NORMAL a process crash.
	Synchronous string
	// Observer is told of every audit transaction (metrics); may be nil.
	Observer AuditObserver
	// BusyTimeout is how long a write waits for a lock held elsewhere
	// (default 5s).
	BusyTimeout time.Duration
	// Pragmas are extra PRAGMA settings for the write connection, applied
	// after the migrations, e.g. "max_page_count = 262144" to cap the
	// file's size.
	Pragmas []string
	// Exclusive takes the lock beside the file (LockPath) for as long as
	// the store is open, and refuses to open when another process holds
	// it: a serving process must be the file's only server.
	Exclusive bool
	// WatchInterval is how often the store checks that its path still
	// names the file it opened (default 250ms).
	WatchInterval time.Duration
	// Logger is told of file faults; may be nil.
	Logger *slog.Logger
}

// AuditObserver is told of every audit transaction: how many events it
// carried, how long it took, and whether it failed.
type AuditObserver = sqlstore.AuditObserver

// AuditStats counts the audit writer's work.
type AuditStats = sqlstore.AuditStats

// shared names the embedded queries both backends keep alike.
type shared = sqlstore.Store

// Store is the SQLite state of the PDP. It is safe for concurrent use.
type Store struct {
	*shared
	write *sql.DB // one connection: SQLite has one writer
	read  *sql.DB // a pool of readers (WAL lets them run beside the writer)
	trees *treeCache
	// answers are told of every answer committed (OnAnswer).
	answers answerHooks
	// incremental: the file gives deleted events' pages back
	// (auto_vacuum INCREMENTAL, vacuum.go).
	incremental atomic.Bool

	path      string
	fileID    fileID
	health    *sqlstore.Health
	lock      *lockFile
	log       *slog.Logger
	stopWatch context.CancelFunc
	watched   chan struct{}
	// busy is the connections' busy timeout, which an audit batch with a
	// nearer deadline lowers for its own transaction.
	busy time.Duration
}

// Open opens (creating if needed) the database at path and applies the
// migrations it lacks.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 512
	}
	if opts.Synchronous == "" {
		opts.Synchronous = "FULL"
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}
	var held *lockFile
	if opts.Exclusive {
		var err error
		if held, err = lock(path); err != nil {
			return nil, err
		}
	}
	s, err := open(ctx, path, opts, busy)
	if err != nil {
		held.release()
		return nil, err
	}
	s.lock = held
	return s, nil
}

func open(ctx context.Context, path string, opts Options, busy time.Duration) (*Store, error) {
	dsn := func(mode string) string {
		q := url.Values{}
		q.Set("_journal_mode", "WAL")
		q.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
		q.Set("_foreign_keys", "on")
		q.Set("_synchronous", opts.Synchronous)
		q.Set("_txlock", "immediate")
		// Each connection keeps its recent prepared statements: the audit
		// writer runs the same few per decision, and preparing them anew
		// showed in serve's CPU profile (docs/performance.md).
		q.Set("_stmt_cache_size", "64")
		q.Set("mode", mode)
		return "file:" + path + "?" + q.Encode()
	}
	write, err := sql.Open("sqlite3", dsn("rwc"))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	incremental, err := switchToIncrementalVacuum(ctx, write, smallDatabaseBytes)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := migrate(ctx, write); err != nil {
		write.Close()
		return nil, fmt.Errorf("migrating %s: %w", path, err)
	}
	for _, p := range opts.Pragmas {
		if _, err := write.ExecContext(ctx, "PRAGMA "+p); err != nil {
			write.Close()
			return nil, fmt.Errorf("PRAGMA %s: %w", p, err)
		}
	}
	read, err := sql.Open("sqlite3", dsn("ro"))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("opening %s for reading: %w", path, err)
	}
	read.SetMaxOpenConns(8)
	id, err := identify(path)
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.WatchInterval <= 0 {
		opts.WatchInterval = 250 * time.Millisecond
	}
	s := &Store{write: write, read: read, trees: newTreeCache(), path: path, fileID: id, health: sqlstore.NewHealth(),
		log: opts.Logger, watched: make(chan struct{}), busy: busy}
	s.shared = &sqlstore.Store{Read: sqlstore.SQL(read), Write: sqlstore.SQL(write), Dialect: dialect, Now: time.Now,
		AddChanges: addChanges, FindRoot: rootID, Changed: s.trees.invalidate, AnswerCommitted: s.answers.deliver}
	s.incremental.Store(incremental)
	s.Audit = sqlstore.NewAuditWriter(s.writeTx, opts.MaxBatch, opts.Observer, ErrClosed)
	wctx, stop := context.WithCancel(context.Background())
	s.stopWatch = stop
	go s.watch(wctx, opts.WatchInterval)
	return s, nil
}

// Close flushes the pending audit events, closes the database and then
// gives up the lock.
func (s *Store) Close() error {
	s.Audit.Close()
	s.endWaits()
	s.stopWatch()
	<-s.watched
	err := errors.Join(s.read.Close(), s.write.Close())
	return errors.Join(err, s.lock.release())
}

// Writable checks that the database accepts writes now.
func (s *Store) Writable(ctx context.Context) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database is not writable: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_migrations SET version = version WHERE 0`); err != nil {
		tx.Rollback()
		return fmt.Errorf("database is not writable: %w", err)
	}
	return tx.Rollback()
}

// formatTime is a time as SQLite keeps it (storerows.TimeText).
func formatTime(t time.Time) string { return t.UTC().Format(storerows.TimeText) }

// dialect is what SQLite's queries send of their own.
var dialect = sqlstore.Dialect{
	Time:       func(t time.Time) any { return formatTime(t) },
	Text:       func(s string) string { return s },
	Violation:  violation,
	ListIndex:  listIndex,
	Arm:        func(page string) string { return `SELECT * FROM (` + page + `)` },
	FilterTime: "+time", // "+": a condition, never the index
	// Without statistics SQLite would walk every ask of decisions_decision.
	PendingIndex: "INDEXED BY decisions_pending",
}
