package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

const decisionColumns = `id, time, session_id, tool, capability, args, cwd, fingerprint, grantable, decision, source, rule, reason,
	danger_verdict, danger_by, revision, latency_us, answer, answer_channel, answered_at, grant_id, tool_use_id, answered_by`

// Decision returns one audit event, or pdp.ErrNotFound.
func (s *Store) Decision(ctx context.Context, id string) (pdp.DecisionEvent, error) {
	return decision(ctx, s.pool, id)
}

// decision reads one event whole: with the parts of a compound command,
// which lists leave out.
func decision(ctx context.Context, db queryer, id string) (pdp.DecisionEvent, error) {
	var parts *string
	rec, err := scanDecision(db.QueryRow(ctx, `SELECT `+decisionColumns+`, parts FROM decisions WHERE id = $1`, id), &parts)
	if errors.Is(err, pgx.ErrNoRows) {
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
func (s *Store) Decisions(ctx context.Context, f pdp.DecisionFilter) ([]pdp.DecisionEvent, error) {
	q, args := decisionsQuery(f)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing decisions: %w", err)
	}
	defer rows.Close()
	out := []pdp.DecisionEvent{}
	for rows.Next() {
		rec, err := scanDecision(rows)
		if err != nil {
			return nil, fmt.Errorf("listing decisions: %w", err)
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// decisionsQuery is the SQL of a list: as adapters/sqlite's, each filter
// combination has an index ending in id and since and before are a range
// of ids, so a page reads at most its own rows; a source without a
// decision reads the three decisions' ranges and merges them.
func decisionsQuery(f pdp.DecisionFilter) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
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
		add("time >= ?", utc(f.Since))
	}
	if f.Before != "" {
		add("id < ?", f.Before)
	}
	page := func(decision string) string {
		w := where
		if decision != "" {
			args = append(args, decision)
			w = append(slices.Clip(w), "decision = $"+strconv.Itoa(len(args)))
		}
		q := `SELECT ` + decisionColumns + ` FROM decisions`
		if len(w) > 0 {
			q += " WHERE " + strings.Join(w, " AND ")
		}
		args = append(args, f.Limit)
		return q + " ORDER BY id DESC LIMIT $" + strconv.Itoa(len(args))
	}
	if f.Decision != "" || f.Source == "" {
		return page(f.Decision), args
	}
	var arms []string
	for _, d := range []string{pdp.Allow, pdp.Ask, pdp.Deny} {
		arms = append(arms, `(`+page(d)+`)`)
	}
	args = append(args, f.Limit)
	return strings.Join(arms, " UNION ALL ") + " ORDER BY id DESC LIMIT $" + strconv.Itoa(len(args)), args
}

// AnswerDecision records a person's answer to an ask and, for
// allow_session, creates the grant on the root of the session's tree, in
// one transaction. The answer is a conditional UPDATE (… WHERE answer IS
// NULL), so of two answers at once, on any replicas, exactly one is
// recorded: the other is pdp.ErrConflict, as is an answer to a decision
// that was not an ask. pdp.ErrNotGrantable for allow_session on a call
// without a fingerprint (nothing is written then). Every replica hears of
// the answer through NOTIFY once it commits.
func (s *Store) AnswerDecision(ctx context.Context, id, answer, channel string) (pdp.DecisionEvent, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return pdp.DecisionEvent{}, fmt.Errorf("recording the answer: %w", err)
	}
	defer tx.Rollback(context.Background())
	now := utc(s.now())
	tag, err := tx.Exec(ctx, `UPDATE decisions SET answer = $1, answer_channel = $2, answered_at = $3
		WHERE id = $4 AND decision = 'ask' AND answer IS NULL`, answer, channel, now, id)
	if err != nil {
		return pdp.DecisionEvent{}, fmt.Errorf("recording the answer: %w", err)
	}
	rec, err := decision(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	if tag.RowsAffected() == 0 {
		if rec.Decision.Decision != pdp.Ask {
			return rec, fmt.Errorf("decision %s was %s, not ask: %w", id, rec.Decision.Decision, pdp.ErrConflict)
		}
		answered := "already"
		if rec.Answer != nil {
			answered = rec.Answer.Answer
		}
		return rec, fmt.Errorf("decision %s was already answered %s: %w", id, answered, pdp.ErrConflict)
	}
	if answer == pdp.AllowSession || answer == pdp.AllowProject {
		root, err := rootID(ctx, tx, rec.SessionID)
		if err != nil {
			return rec, err
		}
		gid, err := grantParts(ctx, tx, rec, root, answer, now)
		if err != nil {
			return rec, err
		}
		if _, err := tx.Exec(ctx, `UPDATE decisions SET grant_id = $1 WHERE id = $2`, gid, id); err != nil {
			return rec, fmt.Errorf("recording the answer: %w", err)
		}
		rec.Answer.GrantID = gid
	}
	if err := addChanges(ctx, tx, change{time: now, kind: pdp.ChangeAnswer, sessionID: rec.SessionID, decisionID: id}); err != nil {
		return rec, err
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, answersChannel, id); err != nil {
		return rec, fmt.Errorf("recording the answer: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("recording the answer: %w", err)
	}
	return rec, nil
}

func scanDecision(row scanner, extra ...any) (pdp.DecisionEvent, error) {
	var rec pdp.DecisionEvent
	var t time.Time
	var args string
	var dangerVerdict, dangerBy, answer, channel, toolUseID, answeredBy *string
	var answeredAt *time.Time
	var grantID *int64
	dest := append([]any{&rec.DecisionID, &t, &rec.SessionID, &rec.Tool, &rec.Capability, &args, &rec.Cwd, &rec.Fingerprint, &rec.Grantable,
		&rec.Decision.Decision, &rec.Source, &rec.Rule, &rec.Reason, &dangerVerdict, &dangerBy, &rec.Revision, &rec.LatencyUS,
		&answer, &channel, &answeredAt, &grantID, &toolUseID, &answeredBy}, extra...)
	err := row.Scan(dest...)
	if err != nil {
		return rec, err
	}
	rec.Time = t.UTC()
	c := storerows.DecisionColumns{Args: args, DangerVerdict: dangerVerdict, DangerBy: dangerBy, Answer: answer, Channel: channel,
		GrantID: grantID, ToolUseID: toolUseID, AnsweredBy: answeredBy}
	if answeredAt != nil {
		c.AnsweredAt = answeredAt.UTC()
	}
	storerows.Decision(&rec, c)
	return rec, nil
}
