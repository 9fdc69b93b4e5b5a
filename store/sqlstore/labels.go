package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

// InsertLabel adds a flow label to the root of a session tree; a label
// the tree has keeps the call that set it first.
const InsertLabel = `INSERT INTO session_labels (session_id, label, decision_id, set_by, time, summary) VALUES (?,?,?,?,?,?)
	ON CONFLICT (session_id, label) DO NOTHING`

// LabelArgs are the values of InsertLabel for a label of the tree rooted
// at root.
func (d Dialect) LabelArgs(root string, l api.FlowLabel) []any {
	return []any{root, l.Label, l.DecisionID, l.SessionID, d.Time(l.Time), d.Text(l.Summary)}
}

// LabelsQuery reads the labels of a tree's root, in the order they were set.
const LabelsQuery = `SELECT label, decision_id, set_by, time, summary FROM session_labels WHERE session_id = ? ORDER BY time, label`

// Labels are the flow labels of the tree rooted at root.
func (s *Store) Labels(ctx context.Context, root string) ([]api.FlowLabel, error) {
	rows, err := s.Read.Query(ctx, LabelsQuery, root)
	if err != nil {
		return nil, fmt.Errorf("reading the labels of %q: %w", root, err)
	}
	return collect(rows, []api.FlowLabel{}, func(r Rows) (api.FlowLabel, error) {
		var l api.FlowLabel
		var t storerows.Time
		err := r.Scan(&l.Label, &l.DecisionID, &l.SessionID, &t, &l.Summary)
		l.Time = t.T
		return l, err
	}, "reading the labels of "+root)
}

// addLabels adds, in tx, the labels the call of rec carried to the root
// of its tree, as set by rec at now: a person's allow of its ask, or the
// runtime's report that it ran.
func (s *Store) addLabels(ctx context.Context, tx Tx, rec api.Event, extra []string, now time.Time) (bool, error) {
	labels := append(append([]string{}, rec.Labels...), extra...)
	if len(labels) == 0 {
		return false, nil
	}
	root, err := s.FindRoot(ctx, tx, rec.SessionID)
	if err != nil {
		return false, err
	}
	summary := pdp.CallSummary(api.DecideRequest{Tool: rec.Tool, Args: rec.Args})
	for _, l := range labels {
		fl := api.FlowLabel{Label: l, DecisionID: rec.DecisionID, SessionID: rec.SessionID, Time: now, Summary: summary}
		if _, err := tx.Exec(ctx, InsertLabel, s.LabelArgs(root, fl)...); err != nil {
			return false, fmt.Errorf("adding the label %s: %w", l, err)
		}
	}
	return true, nil
}

// LabelsColumn is the decisions.labels value of a call's labels: a JSON
// array, NULL for none.
func (d Dialect) LabelsColumn(labels []string) *string {
	if len(labels) == 0 {
		return nil
	}
	raw, _ := json.Marshal(labels)
	return d.optional(string(raw))
}
