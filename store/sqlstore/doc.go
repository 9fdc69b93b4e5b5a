// Package sqlstore is the part of the PDP's state that both SQL backends,
// store/sqlite and store/postgres, keep the same way: the queries
// of sessions, grants, decisions, answers, the change log and the access
// log, written once with ? placeholders against a small connection
// interface (DB, Tx). Each backend hands it its connections, rendering
// the placeholders its own way, and what truly differs as a Dialect: how
// a time or a text is stored, which index a list walks, how the change
// log is appended to, how the root of a session's tree is found.
package sqlstore
