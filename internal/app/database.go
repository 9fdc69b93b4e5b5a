package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/postgres"
	"github.com/toolperm/pdp/store/sqlite"
)

// Store is the store pdp serve and the commands that read the trail
// work on: a SQLite file, or a PostgreSQL database that replicas share
// (db.path a postgres:// or postgresql:// URL).
type Store interface {
	httpapi.Store
	pdp.AuditLog
	pdp.RecordedDecisions
	pdp.TrailPruner
	feed.ChangeLog
	// EachDecision streams the events at or after since, oldest first.
	EachDecision(ctx context.Context, since time.Time, fn func(api.Event) error) error
	Close() error
}

// changeSource is a store that hears of the changes other processes
// commit to the change log (PostgreSQL, through NOTIFY).
type changeSource interface {
	OnChange(fn func())
}

// auditObserver is told of every audit transaction (metrics).
type auditObserver interface {
	AuditBatch(events int, took time.Duration, err error)
}

// Serving is how pdp serve opens its database, unlike the commands that
// read or maintain one beside it.
type Serving struct {
	// DecisionTimeout bounds SQLite's busy wait (server.decision_timeout).
	DecisionTimeout time.Duration
	Logger          *slog.Logger
}

// OpenDatabase opens db.path, creating a SQLite file or migrating a
// PostgreSQL database as needed. observer may be nil; serve is nil but
// for pdp serve, which takes the SQLite file's lock.
func OpenDatabase(ctx context.Context, cfg config.DB, observer auditObserver, serve *Serving) (Store, error) {
	if postgres.IsURL(cfg.Path) {
		if cfg.MaxConns < 0 || cfg.MaxConns > 1<<16 {
			return nil, fmt.Errorf("config db.max_conns %d: want 1 to 65536 (0: 10)", cfg.MaxConns)
		}
		opts := postgres.Options{MaxConns: int32(cfg.MaxConns)}
		if observer != nil {
			opts.Observer = observer
		}
		return postgres.Open(ctx, cfg.Path, opts)
	}
	var opts sqlite.Options
	if observer != nil {
		opts.Observer = observer
	}
	if serve != nil {
		opts.Exclusive, opts.BusyTimeout, opts.Logger = true, serve.DecisionTimeout, serve.Logger
	}
	return sqlite.Open(ctx, cfg.Path, opts)
}

// auditStats counts an audit writer's work, whichever the backend.
type auditStats struct {
	Events       int64 // events committed
	Transactions int64 // transactions that carried them
	MaxBatch     int64 // most events in one transaction
	Errors       int64 // transactions that failed
}

func auditStatsOf(db Store) auditStats {
	switch s := db.(type) {
	case *sqlite.Store:
		return auditStats(s.AuditStats())
	case *postgres.Store:
		return auditStats(s.AuditStats())
	}
	return auditStats{}
}

// DBLabel is db.path for logs and messages: a URL without its password.
func DBLabel(path string) string {
	if !postgres.IsURL(path) {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}
