package storerows

import (
	"encoding/json"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// DecisionColumns are a decision row's encoded and nullable columns.
type DecisionColumns struct {
	Args                    string // a JSON object; unreadable reads as {}
	DangerVerdict, DangerBy *string
	Answer, Channel         *string
	AnswerToken             *string
	AnswerSubject           *string
	AnsweredAt              time.Time
	GrantID                 *int64
	ToolUseID               *string
	// The runtime's outcome, kept apart from the person's answer.
	Outcome, OutcomeChannel, OutcomeBy *string
	OutcomeAt                          time.Time
	// Parts is the JSON array of a compound command's parts; NULL for
	// any other call, and unreadable reads as none.
	Parts *string
	// Labels is the JSON array of the flow labels the call carried;
	// NULL for none, and unreadable reads as none.
	Labels *string
}

// Decision completes rec, scanned from a row, with its other columns.
func Decision(rec *api.Event, c DecisionColumns) {
	rec.ToolUseID = str(c.ToolUseID)
	rec.NeedApproval = rec.Decision.Decision == api.Ask
	if c.DangerVerdict != nil {
		rec.Danger = &api.Danger{Verdict: *c.DangerVerdict, By: str(c.DangerBy)}
	}
	if err := json.Unmarshal([]byte(c.Args), &rec.Args); err != nil {
		rec.Args = map[string]any{}
	}
	if c.Answer != nil {
		rec.Answer = &api.Answer{Answer: *c.Answer, Channel: str(c.Channel), AnsweredAt: c.AnsweredAt, AnsweredBy: str(c.AnswerToken), AnsweredBySubject: str(c.AnswerSubject)}
		if c.GrantID != nil {
			rec.Answer.GrantID = *c.GrantID
		}
	}
	if c.Outcome != nil {
		rec.Outcome = &api.Outcome{Answer: *c.Outcome, Channel: str(c.OutcomeChannel), By: str(c.OutcomeBy), RecordedAt: c.OutcomeAt}
	}
	if c.Parts != nil && json.Unmarshal([]byte(*c.Parts), &rec.Parts) != nil {
		rec.Parts = nil
	}
	rec.Labels = []string{}
	if c.Labels != nil && json.Unmarshal([]byte(*c.Labels), &rec.Labels) != nil {
		rec.Labels = []string{}
	}
	// would_grant is not stored: it follows from the recorded
	// fingerprint, grantable and parts, as the answer's grant does.
	rec.WouldGrant = pdp.WouldGrant(rec.Decision)
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// DecisionColumnNames are the columns of a decision row ScanDecision
// reads, in its order: every list, the export and a single read show a
// decision alike, a compound command's parts included.
const DecisionColumnNames = `id, time, session_id, tool, capability, args, cwd, fingerprint, grantable, decision, source, rule, reason,
	danger_verdict, danger_by, revision, latency_us, answer, answer_channel, answered_at, grant_id, tool_use_id,
	outcome, outcome_channel, outcome_at, outcome_by, answer_token, parts, labels, answer_subject`

// ScanDecision reads a row of DecisionColumnNames, then into extra.
func ScanDecision(row Row, extra ...any) (api.Event, error) {
	var rec api.Event
	var c DecisionColumns
	var t, answeredAt, outcomeAt Time
	dest := append([]any{&rec.DecisionID, &t, &rec.SessionID, &rec.Tool, &rec.Capability, &c.Args, &rec.Cwd, &rec.Fingerprint, &rec.Grantable,
		&rec.Decision.Decision, &rec.Source, &rec.Rule, &rec.Reason, &c.DangerVerdict, &c.DangerBy, &rec.Revision, &rec.LatencyUS,
		&c.Answer, &c.Channel, &answeredAt, &c.GrantID, &c.ToolUseID, &c.Outcome, &c.OutcomeChannel, &outcomeAt, &c.OutcomeBy, &c.AnswerToken, &c.Parts, &c.Labels, &c.AnswerSubject}, extra...)
	if err := row.Scan(dest...); err != nil {
		return rec, err
	}
	rec.Time, c.AnsweredAt, c.OutcomeAt = t.T, answeredAt.T, outcomeAt.T
	Decision(&rec, c)
	return rec, nil
}
