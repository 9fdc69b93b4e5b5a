package sqlite

import "github.com/toolperm/pdp/pdp"

// listIndex names the index of a list by which filters it has: the
// planner, without statistics, may prefer a shorter index with a
// two-sided id range to the one that holds every filter. Each
// combination has its index ending in id (migration 5).
func listIndex(session, decision, source bool) string {
	switch {
	case session && source:
		return " INDEXED BY decisions_session_source_decision"
	case source:
		return " INDEXED BY decisions_source_decision"
	case session && decision:
		return " INDEXED BY decisions_session_decision"
	case session:
		return " INDEXED BY decisions_session"
	case decision:
		return " INDEXED BY decisions_decision"
	}
	return ""
}

// decisionsQuery is the SQL of a list as SQLite gets it; extra is one
// more condition.
func decisionsQuery(f pdp.DecisionFilter, extra string) (string, []any) {
	return dialect.DecisionsQuery(f, extra)
}
