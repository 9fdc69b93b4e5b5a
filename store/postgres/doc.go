// Package postgres keeps the PDP's state — sessions, grants, the audit
// trail, refused requests — in PostgreSQL, so several replicas of pdp
// serve behave as one decision point. It implements the core's store
// roles as store/sqlite does, with the same behaviour: versioned
// migrations, the audit trail committed before each answer (group
// commit), exactly one answer per ask (a conditional UPDATE), grants on
// the root session. It keeps no cache of sessions or grants, so a change
// made on one replica applies to the very next decision on every replica;
// answers are announced with NOTIFY, so a request waiting on another
// replica wakes at once.
package postgres
