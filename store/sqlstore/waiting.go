package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

// endWaitTimeout bounds recording the end of a wait, which runs after
// its request's context may have ended.
const endWaitTimeout = 2 * time.Second

// StartWaiting records a wait on an ask in ask_waiters, in one short
// transaction that also deletes the waits past their end. A waiter that
// still counts on the ask (its last wait ended less than
// pdp.WaitLinger ago: a runtime polling again) keeps its first start.
func (s *Store) StartWaiting(ctx context.Context, decisionID, by string, until time.Time) (func(), error) {
	const doing = "recording a wait"
	s.waited.Store(true)
	now := s.Now()
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `DELETE FROM ask_waiters WHERE ends <= ?`, s.Time(now)); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	var since storerows.Time
	if err := tx.QueryRow(ctx, `SELECT MIN(since) FROM ask_waiters WHERE decision_id = ? AND waiter = ?`, decisionID, by).Scan(&since); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	start := now
	if since.Valid && since.T.Before(now) {
		start = since.T
	}
	var id int64
	if err := tx.QueryRow(ctx, `INSERT INTO ask_waiters (decision_id, waiter, server, since, ends) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		decisionID, by, s.instance(), s.Time(start), s.Time(until)).Scan(&id); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", doing, err)
	}
	return sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), endWaitTimeout)
		defer cancel()
		end := s.Now().Add(pdp.WaitLinger)
		// A failure leaves the wait counting until its end at the latest.
		_, _ = s.Write.Exec(ctx, `UPDATE ask_waiters SET ends = ? WHERE id = ? AND ends > ?`, s.Time(end), id, s.Time(end))
	}), nil
}

// Waiting returns who waits on each decision now, a waiter's waits as
// one (the earliest start), earliest first.
func (s *Store) Waiting(ctx context.Context, decisionIDs []string) (map[string][]api.Waiter, error) {
	out := map[string][]api.Waiter{}
	if len(decisionIDs) == 0 {
		return out, nil
	}
	args := []any{s.Time(s.Now())}
	for _, id := range decisionIDs {
		args = append(args, id)
	}
	rows, err := s.Read.Query(ctx, `SELECT decision_id, waiter, MIN(since) FROM ask_waiters WHERE ends > ? AND decision_id IN (?`+
		strings.Repeat(", ?", len(decisionIDs)-1)+`) GROUP BY decision_id, waiter ORDER BY MIN(since), waiter`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading who waits: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, by string
		var since storerows.Time
		if err := rows.Scan(&id, &by, &since); err != nil {
			return nil, fmt.Errorf("reading who waits: %w", err)
		}
		out[id] = append(out[id], api.Waiter{By: by, Since: since.T})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading who waits: %w", err)
	}
	return out, nil
}

// EndWaits removes this process's waits at once: a server shutting down
// holds none any more. A process that never waited writes nothing.
func (s *Store) EndWaits(ctx context.Context) error {
	if !s.waited.Load() {
		return nil
	}
	if _, err := s.Write.Exec(ctx, `DELETE FROM ask_waiters WHERE server = ?`, s.instance()); err != nil {
		return fmt.Errorf("removing this server's waits: %w", err)
	}
	return nil
}

// pendingDecisions lists unanswered asks through their index, those
// someone waits on first, then newest first. The pending asks are few
// (asks.expire_after bounds them), so each is looked up in ask_waiters.
func (s *Store) pendingDecisions(ctx context.Context, f pdp.DecisionFilter) ([]api.Event, error) {
	q := `SELECT ` + decisionColumns + ` FROM decisions ` + s.PendingIndex + ` WHERE decision = 'ask' AND answer IS NULL`
	var args []any
	add := func(cond string, v any) { q, args = q+" AND "+cond, append(args, v) }
	if f.SessionID != "" {
		add("session_id = ?", f.SessionID)
	}
	if f.Source != "" {
		add("source = ?", f.Source)
	}
	if !f.Since.IsZero() {
		add("time >= ?", s.Time(f.Since))
	}
	if f.Before != "" {
		add("id < ?", f.Before)
	}
	q += ` ORDER BY EXISTS (SELECT 1 FROM ask_waiters w WHERE w.decision_id = decisions.id AND w.ends > ?) DESC, time DESC, id DESC LIMIT ?`
	args = append(args, s.Time(s.Now()), f.Limit)
	rows, err := s.Read.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing pending asks: %w", err)
	}
	return collect(rows, []api.Event{}, scanDecision, "listing pending asks")
}

// instance names this process in ask_waiters.
func (s *Store) instance() string {
	s.instanceOnce.Do(func() {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		s.instanceID = hex.EncodeToString(b)
	})
	return s.instanceID
}
