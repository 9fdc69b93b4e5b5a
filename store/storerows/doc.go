// Package storerows turns the rows both storage backends read into the
// core's records: the columns are the same in store/sqlite and
// store/postgres, so what a value means is decided here once. Each
// backend keeps its SQL and scans its own column types; these functions
// take the scanned values.
package storerows
