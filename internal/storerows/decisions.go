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
