// Package sqlite keeps the PDP's state in one SQLite file (WAL): sessions,
// grants, and the audit trail of decision events with the answers people
// gave. Audit events from concurrent decisions are written in one
// transaction (group commit), and Record returns only once its event is
// committed.
package sqlite
