package storerows

import (
	"fmt"

	"github.com/toolperm/pdp/pdp"
)

// EachRecorded calls fn with each row of `SELECT id, session_id,
// decision, rule, recorded`, what the decision was judged on decoded
// (nil when it is missing or unreadable: such a decision is skipped by
// a replay like an unrecorded one).
func EachRecorded(rows Rows, fn func(pdp.RecordedDecision) error) error {
	for rows.Next() {
		var rd pdp.RecordedDecision
		var recorded []byte
		if err := rows.Scan(&rd.DecisionID, &rd.SessionID, &rd.Decision, &rd.Rule, &recorded); err != nil {
			return fmt.Errorf("reading recorded decisions: %w", err)
		}
		if len(recorded) > 0 {
			var err error
			if rd.Recorded, err = pdp.DecodeRecorded(recorded); err != nil {
				rd.Recorded = nil
			}
		}
		if err := fn(rd); err != nil {
			return err
		}
	}
	return rows.Err()
}
