package storerows

import (
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// RecordedColumns are the columns EachRecorded reads, in its order.
const RecordedColumns = `id, session_id, decision, rule, recorded, answer, outcome`

// EachRecorded calls fn with each row of RecordedColumns, what the
// decision was judged on decoded (nil when it is missing or unreadable:
// such a decision is skipped by a replay like an unrecorded one).
func EachRecorded(rows Rows, fn func(pdp.RecordedDecision) error) error {
	for rows.Next() {
		var rd pdp.RecordedDecision
		var recorded []byte
		var answer, outcome *string
		if err := rows.Scan(&rd.DecisionID, &rd.SessionID, &rd.Decision, &rd.Rule, &recorded, &answer, &outcome); err != nil {
			return fmt.Errorf("reading recorded decisions: %w", err)
		}
		// The call ran: the PDP allowed it, a person allowed its ask, or
		// the runtime reported it ran.
		rd.Ran = rd.Decision == api.Allow || (&api.Answer{Answer: str(answer)}).Allows() || str(outcome) == api.AllowOnce
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
