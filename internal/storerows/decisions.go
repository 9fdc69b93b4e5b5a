package storerows

import (
	"encoding/json"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// DecisionColumns are a decision row's encoded and nullable columns.
type DecisionColumns struct {
	Args                    string // a JSON object; unreadable reads as {}
	DangerVerdict, DangerBy *string
	Answer, Channel         *string
	AnsweredAt              time.Time
	GrantID                 *int64
	ToolUseID, AnsweredBy   *string
}

// Decision completes rec, scanned from a row, with its other columns.
func Decision(rec *pdp.DecisionEvent, c DecisionColumns) {
	rec.ToolUseID = str(c.ToolUseID)
	rec.NeedApproval = rec.Decision.Decision == pdp.Ask
	if c.DangerVerdict != nil {
		rec.Danger = &pdp.Danger{Verdict: *c.DangerVerdict, By: str(c.DangerBy)}
	}
	if err := json.Unmarshal([]byte(c.Args), &rec.Args); err != nil {
		rec.Args = map[string]any{}
	}
	if c.Answer != nil {
		rec.Answer = &pdp.Answer{Answer: *c.Answer, Channel: str(c.Channel), AnsweredAt: c.AnsweredAt, By: str(c.AnsweredBy)}
		if c.GrantID != nil {
			rec.Answer.GrantID = *c.GrantID
		}
	}
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DecisionColumnNames are the columns of a decision row ScanDecision
// reads, in its order.
const DecisionColumnNames = `id, time, session_id, tool, capability, args, cwd, fingerprint, grantable, decision, source, rule, reason,
	danger_verdict, danger_by, revision, latency_us, answer, answer_channel, answered_at, grant_id, tool_use_id, answered_by`

// ScanDecision reads a row of DecisionColumnNames, then into extra.
func ScanDecision(row Row, extra ...any) (pdp.DecisionEvent, error) {
	var rec pdp.DecisionEvent
	var c DecisionColumns
	var t, answeredAt Time
	dest := append([]any{&rec.DecisionID, &t, &rec.SessionID, &rec.Tool, &rec.Capability, &c.Args, &rec.Cwd, &rec.Fingerprint, &rec.Grantable,
		&rec.Decision.Decision, &rec.Source, &rec.Rule, &rec.Reason, &c.DangerVerdict, &c.DangerBy, &rec.Revision, &rec.LatencyUS,
		&c.Answer, &c.Channel, &answeredAt, &c.GrantID, &c.ToolUseID, &c.AnsweredBy}, extra...)
	if err := row.Scan(dest...); err != nil {
		return rec, err
	}
	rec.Time, c.AnsweredAt = t.T, answeredAt.T
	Decision(&rec, c)
	return rec, nil
}
