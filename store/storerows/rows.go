package storerows

// Row is one row, as database/sql and pgx both give it.
type Row interface {
	Scan(dest ...any) error
}

// Rows are the rows of a query, as database/sql and pgx both give them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}
