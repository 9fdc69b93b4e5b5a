package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

const decisionColumns = storerows.DecisionColumnNames

func scanDecision(r Rows) (api.Event, error) { return storerows.ScanDecision(r) }

// Decision returns one audit event, or pdp.ErrNotFound.
func (s *Store) Decision(ctx context.Context, id string) (api.Event, error) {
	return decision(ctx, s.Read, id)
}

// decision reads one event whole: with the parts of a compound command,
// which lists leave out.
func decision(ctx context.Context, db Conn, id string) (api.Event, error) {
	var parts *string
	rec, err := storerows.ScanDecision(db.QueryRow(ctx, `SELECT `+decisionColumns+`, parts FROM decisions WHERE id = ?`, id), &parts)
	if errors.Is(err, ErrNoRows) {
		return rec, fmt.Errorf("decision %q: %w", id, pdp.ErrNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("reading decision %q: %w", id, err)
	}
	if parts != nil {
		if err := json.Unmarshal([]byte(*parts), &rec.Parts); err != nil {
			return rec, fmt.Errorf("decision %s has unreadable parts: %w", id, err)
		}
	}
	return rec, nil
}

// Decisions lists audit events, newest first.
func (s *Store) Decisions(ctx context.Context, f pdp.DecisionFilter) ([]api.Event, error) {
	if f.Pending {
		return s.pendingDecisions(ctx, f)
	}
	q, args := s.DecisionsQuery(f, "")
	rows, err := s.Read.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing decisions: %w", err)
	}
	return collect(rows, []api.Event{}, scanDecision, "listing decisions")
}

// DecisionsQuery is the SQL of a list. Each combination of the session,
// decision and source filters has an index ending in id, and since and
// before are a range of ids (ids sort as their times do,
// pdp.DecisionIDFloor), so a page reads at most Limit entries of one
// index range, however long the trail. A source without a decision has
// its index under the decision: the three decisions' ranges are read,
// Limit each, and merged. extra is one more condition (tests count the
// rows a query examines with it).
func (d Dialect) DecisionsQuery(f pdp.DecisionFilter, extra string) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) { where, args = append(where, cond), append(args, v) }
	if f.SessionID != "" {
		add("session_id = ?", f.SessionID)
	}
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if !f.Since.IsZero() {
		if floor := pdp.DecisionIDFloor(f.Since); floor != "" {
			add("id >= ?", floor)
		}
		// The time itself too, as a condition, never the index.
		add(d.FilterTime+" >= ?", d.Time(f.Since))
	}
	if f.Before != "" {
		add("id < ?", f.Before)
	}
	if extra != "" {
		where = append(where, extra)
	}
	page := func(decision string) (string, []any) {
		w, a := where, args
		if decision != "" {
			w, a = append(slices.Clip(w), "decision = ?"), append(slices.Clip(a), decision)
		}
		q := `SELECT ` + decisionColumns + ` FROM decisions` + d.ListIndex(f.SessionID != "", decision != "", f.Source != "")
		if len(w) > 0 {
			q += " WHERE " + strings.Join(w, " AND ")
		}
		return q + " ORDER BY id DESC LIMIT ?", append(a, f.Limit)
	}
	if f.Decision != "" || f.Source == "" {
		return page(f.Decision)
	}
	var arms []string
	var all []any
	for _, dec := range []string{api.Allow, api.Ask, api.Deny} {
		q, a := page(dec)
		arms, all = append(arms, d.Arm(q)), append(all, a...)
	}
	return strings.Join(arms, " UNION ALL ") + " ORDER BY id DESC LIMIT ?", append(all, f.Limit)
}

// DecisionsByToolUse returns the decisions made for a call with this
// runtime id, newest first (at most 16: a runtime's ids are unique).
func (s *Store) DecisionsByToolUse(ctx context.Context, toolUseID string) ([]api.Event, error) {
	rows, err := s.Read.Query(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE tool_use_id = ? ORDER BY id DESC LIMIT 16`, toolUseID)
	if err != nil {
		return nil, fmt.Errorf("finding tool use %q: %w", toolUseID, err)
	}
	return collect(rows, nil, scanDecision, fmt.Sprintf("finding tool use %q", toolUseID))
}
