package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/toolperm/pdp/store/sqlstore"
)

// runner is what a pool, a pooled connection and a transaction share.
type runner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// conn runs the shared queries, their ? placeholders numbered.
type conn struct{ r runner }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.r.Exec(ctx, sqlstore.Numbered(query), args...)
	return tag.RowsAffected(), err
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.r.Query(ctx, sqlstore.Numbered(query), args...)
	if err != nil {
		return nil, err
	}
	return closer{rows}, nil
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return row{c.r.QueryRow(ctx, sqlstore.Numbered(query), args...)}
}

type row struct{ pgx.Row }

func (r row) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

// closer is pgx's rows with database/sql's Close.
type closer struct{ pgx.Rows }

func (r closer) Close() error {
	r.Rows.Close()
	return r.Rows.Err()
}

// db is a pool or a pooled connection as a sqlstore.DB.
type db struct {
	conn
	begin func(ctx context.Context) (pgx.Tx, error)
}

func (d db) Begin(ctx context.Context) (sqlstore.Tx, error) {
	t, err := d.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx{conn{t}, t}, nil
}

// tx is a transaction as a sqlstore.Tx; pgx keeps it for batches.
type tx struct {
	conn
	pgx pgx.Tx
}

func (t tx) Commit(ctx context.Context) error   { return t.pgx.Commit(ctx) }
func (t tx) Rollback(ctx context.Context) error { return t.pgx.Rollback(ctx) }
