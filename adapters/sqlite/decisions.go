package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

const decisionColumns = `id, time, session_id, tool, capability, args, cwd, fingerprint, grantable, decision, source, rule, reason,
	danger_verdict, danger_by, revision, latency_us, answer, answer_channel, answered_at, grant_id, tool_use_id, answered_by`

// Decision returns one audit event, or pdp.ErrNotFound.
func (s *Store) Decision(ctx context.Context, id string) (pdp.DecisionEvent, error) {
	return s.decision(ctx, s.read, id)
}

func (s *Store) decision(ctx context.Context, db queryer, id string) (pdp.DecisionEvent, error) {
	rec, err := scanDecision(db.QueryRowContext(ctx, `SELECT `+decisionColumns+` FROM decisions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return rec, fmt.Errorf("decision %q: %w", id, pdp.ErrNotFound)
	}
	if err == nil {
		rec.Parts, err = readParts(ctx, db, id)
	}
	return rec, err
}

// Decisions lists audit events, newest first.
func (s *Store) Decisions(ctx context.Context, f pdp.DecisionFilter) ([]pdp.DecisionEvent, error) {
	q, args := decisionsQuery(f, "")
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing decisions: %w", err)
	}
	defer rows.Close()
	out := []pdp.DecisionEvent{}
	for rows.Next() {
		rec, err := scanDecision(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// listIndex names the index of a list by which filters it has: the
// planner, without statistics, may prefer a shorter index with a
// two-sided id range to the one that holds every filter.
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

// decisionsQuery is the SQL of a list. Each combination of the session,
// decision and source filters has an index ending in id (migration 5),
// and since and before are a range of ids (ids sort as their times do,
// pdp.DecisionIDFloor), so a page reads at most Limit entries of one
// index range, however long the trail. A source without a decision has
// its index under the decision: the three decisions' ranges are read,
// Limit each, and merged. extra is one more condition (tests count the
// rows a query examines with it).
func decisionsQuery(f pdp.DecisionFilter, extra string) (string, []any) {
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
		// The time itself too ("+": a condition, never the index).
		add("+time >= ?", formatTime(f.Since))
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
		q := `SELECT ` + decisionColumns + ` FROM decisions` + listIndex(f.SessionID != "", decision != "", f.Source != "")
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
	for _, d := range []string{pdp.Allow, pdp.Ask, pdp.Deny} {
		q, a := page(d)
		arms, all = append(arms, `SELECT * FROM (`+q+`)`), append(all, a...)
	}
	return strings.Join(arms, " UNION ALL ") + " ORDER BY id DESC LIMIT ?", append(all, f.Limit)
}

// AnswerDecision records a person's answer to an ask and, for
// allow_session, creates the grant on the root of the session's tree, in
// one transaction. pdp.ErrConflict when the decision was not an ask or is
// already answered; pdp.ErrNotGrantable for allow_session on a call without
// a fingerprint (nothing is written then).
func (s *Store) AnswerDecision(ctx context.Context, id, answer, channel string) (pdp.DecisionEvent, error) {
	rootID := ""
	rec, err := s.Decision(ctx, id)
	if err != nil {
		return rec, err
	}
	if answer == pdp.AllowSession || answer == pdp.AllowProject {
		if rootID, err = s.RootID(ctx, rec.SessionID); err != nil {
			return rec, err
		}
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return rec, err
	}
	defer tx.Rollback()
	if rec, err = s.decision(ctx, tx, id); err != nil {
		return rec, err
	}
	if rec.Decision.Decision != pdp.Ask {
		return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
	}
	if rec.Answer != nil {
		return rec, fmt.Errorf("decision %s was already answered %s: %w", id, rec.Answer.Answer, pdp.ErrConflict)
	}
	now := s.now()
	var grantID any
	if answer == pdp.AllowSession || answer == pdp.AllowProject {
		gid, err := grantParts(ctx, tx, rec, rootID, answer, now)
		if err != nil {
			return rec, err
		}
		grantID = gid
	}
	if _, err := tx.ExecContext(ctx, `UPDATE decisions SET answer = ?, answer_channel = ?, answered_at = ?, grant_id = ? WHERE id = ?`,
		answer, channel, formatTime(now), grantID, id); err != nil {
		return rec, fmt.Errorf("recording the answer: %w", err)
	}
	if err := addChange(ctx, tx, now, pdp.ChangeAnswer, rec.SessionID, id, nil); err != nil {
		return rec, err
	}
	if err := tx.Commit(); err != nil {
		return rec, fmt.Errorf("recording the answer: %w", err)
	}
	if grantID != nil {
		s.trees.invalidate()
	}
	rec.Answer = &pdp.Answer{Answer: answer, Channel: channel, AnsweredAt: now}
	if gid, ok := grantID.(int64); ok {
		rec.Answer.GrantID = gid
	}
	return rec, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanDecision(row scanner) (pdp.DecisionEvent, error) {
	var rec pdp.DecisionEvent
	var t, args string
	var capability, fingerprint, dangerVerdict, dangerBy, answer, channel, answeredAt, toolUseID, answeredBy sql.NullString
	var grantable int
	var grantID sql.NullInt64
	err := row.Scan(&rec.DecisionID, &t, &rec.SessionID, &rec.Tool, &capability, &args, &rec.Cwd, &fingerprint, &grantable,
		&rec.Decision.Decision, &rec.Source, &rec.Rule, &rec.Reason, &dangerVerdict, &dangerBy, &rec.Revision, &rec.LatencyUS,
		&answer, &channel, &answeredAt, &grantID, &toolUseID, &answeredBy)
	if err != nil {
		return rec, err
	}
	rec.Time = parseTime(t)
	rec.Capability = nullable(capability)
	rec.Fingerprint = nullable(fingerprint)
	rec.Grantable = grantable != 0
	c := storerows.DecisionColumns{Args: args, DangerVerdict: nullable(dangerVerdict), DangerBy: nullable(dangerBy),
		Answer: nullable(answer), Channel: nullable(channel), ToolUseID: nullable(toolUseID), AnsweredBy: nullable(answeredBy)}
	if answer.Valid {
		c.AnsweredAt = parseTime(answeredAt.String)
	}
	if grantID.Valid {
		c.GrantID = &grantID.Int64
	}
	storerows.Decision(&rec, c)
	return rec, nil
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
