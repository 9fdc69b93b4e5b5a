package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
)

// ErrNoRows is the error of a Row that found nothing, whichever the
// driver.
var ErrNoRows = errors.New("no rows in result set")

// Row is the one row of QueryRow.
type Row interface{ Scan(dest ...any) error }

// Rows are the rows of Query; Close reports the error that ended them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Conn runs statements: a pool, one connection or a transaction. Queries
// are written with ? placeholders; a Conn renders them as its database
// wants.
type Conn interface {
	// Exec runs a statement and says how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// DB is a Conn that begins transactions.
type DB interface {
	Conn
	Begin(ctx context.Context) (Tx, error)
}

// Tx is a transaction; Rollback after Commit does nothing.
type Tx interface {
	Conn
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

var numbered sync.Map // query with ? → query with $1, $2, …

// Numbered renders the ? placeholders of query as $1, $2, … (PostgreSQL);
// the queries of this package hold no ? of their own.
func Numbered(query string) string {
	if q, ok := numbered.Load(query); ok {
		return q.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteString("$" + strconv.Itoa(n))
	}
	numbered.Store(query, b.String())
	return b.String()
}

// SQL is a database/sql pool as a DB; its driver takes ? as it is.
func SQL(db *sql.DB) DB { return sqlDB{sqlConn{db}, db} }

// sqlRunner is what a database/sql pool and transaction share.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlConn struct{ r sqlRunner }

func (c sqlConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.r.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c sqlConn) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return c.r.QueryContext(ctx, query, args...)
}

func (c sqlConn) QueryRow(ctx context.Context, query string, args ...any) Row {
	return sqlRow{c.r.QueryRowContext(ctx, query, args...)}
}

type sqlRow struct{ *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoRows
	}
	return err
}

type sqlDB struct {
	sqlConn
	db *sql.DB
}

func (d sqlDB) Begin(ctx context.Context) (Tx, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return SQLTx(tx), nil
}

// SQLTx is a database/sql transaction as a Tx.
func SQLTx(tx *sql.Tx) Tx { return sqlTx{sqlConn{tx}, tx} }

type sqlTx struct {
	sqlConn
	tx *sql.Tx
}

func (t sqlTx) Commit(context.Context) error { return t.tx.Commit() }

func (t sqlTx) Rollback(context.Context) error {
	if err := t.tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}
