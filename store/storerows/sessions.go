package storerows

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// SessionColumns are a session row's encoded columns.
type SessionColumns struct {
	Rules     string  // a JSON object
	PathRules string  // a JSON object
	Scope     *string // a JSON array, or NULL
	// CommandRules is a JSON object, or nil where the backend keeps
	// command rules elsewhere.
	CommandRules *string
}

// Session completes rec, scanned from a row, with its encoded columns.
// A stored value outside the known ones reads as the strict default.
func Session(rec *api.Session, c SessionColumns) error {
	if !slices.Contains(pdp.Levels, rec.PermissionLevel) {
		rec.PermissionLevel = api.ReadOnly
	}
	if !slices.Contains(pdp.Modes, rec.Mode) {
		rec.Mode = api.OnDemand
	}
	if rec.ExecutionMode != api.Cloud {
		rec.ExecutionMode = api.Local
	}
	if err := json.Unmarshal([]byte(c.Rules), &rec.Rules); err != nil {
		return fmt.Errorf("session %q has unreadable rules: %w", rec.ID, err)
	}
	if c.CommandRules != nil {
		rec.CommandRules = map[string]string{}
		if err := json.Unmarshal([]byte(*c.CommandRules), &rec.CommandRules); err != nil {
			return fmt.Errorf("session %q has unreadable command rules: %w", rec.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(c.PathRules), &rec.PathRules); err != nil {
		return fmt.Errorf("session %q has unreadable path rules: %w", rec.ID, err)
	}
	if c.Scope != nil {
		if err := json.Unmarshal([]byte(*c.Scope), &rec.Scope); err != nil {
			return fmt.Errorf("session %q has an unreadable scope: %w", rec.ID, err)
		}
	}
	return nil
}

// SessionColumnNames are the columns of a session row ScanSession reads,
// in its order.
const SessionColumnNames = `id, permission_level, mode, execution_mode, workspace, rules, parent_session_id, scope, assessor_model, owner, created_at, updated_at, path_rules, command_rules`

// ScanSession reads a row of SessionColumnNames, then into extra.
func ScanSession(row Row, extra ...any) (api.Session, error) {
	var rec api.Session
	var c SessionColumns
	var parent *string
	var created, updated Time
	dest := append([]any{&rec.ID, &rec.PermissionLevel, &rec.Mode, &rec.ExecutionMode, &rec.Workspace, &c.Rules, &parent, &c.Scope,
		&rec.AssessorModel, &rec.Owner, &created, &updated, &c.PathRules, &c.CommandRules}, extra...)
	if err := row.Scan(dest...); err != nil {
		return rec, err
	}
	if err := Session(&rec, c); err != nil {
		return rec, err
	}
	rec.ParentSessionID = str(parent)
	rec.CreatedAt, rec.UpdatedAt = created.T, updated.T
	return rec, nil
}

// DecodeLabels reads the flow labels of a tree's root as PostgreSQL's
// tree query aggregates them: a JSON array of [label, decision_id,
// set_by, time, summary]; NULL is none.
func DecodeLabels(raw *string) ([]api.FlowLabel, error) {
	if raw == nil {
		return nil, nil
	}
	var rows [][5]string
	if err := json.Unmarshal([]byte(*raw), &rows); err != nil {
		return nil, err
	}
	out := make([]api.FlowLabel, 0, len(rows))
	for _, r := range rows {
		t, err := time.Parse(time.RFC3339Nano, r[3])
		if err != nil {
			return nil, fmt.Errorf("the time of label %s: %w", r[0], err)
		}
		out = append(out, api.FlowLabel{Label: r[0], DecisionID: r[1], SessionID: r[2], Time: t.UTC(), Summary: r[4]})
	}
	return out, nil
}
