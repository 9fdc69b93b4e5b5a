package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// maxTreeDepth bounds how far a session's parents are followed.
const maxTreeDepth = 32

const sessionColumns = `id, permission_level, mode, execution_mode, workspace, rules, parent_session_id, scope, assessor_model, owner, created_at, updated_at, path_rules`

// CreateSession stores a new session; pdp.ErrExists when the id is taken,
// pdp.ErrNotFound when its parent does not exist.
func (s *Store) CreateSession(ctx context.Context, rec pdp.StoredSession) (pdp.StoredSession, error) {
	now := s.now()
	rec.CreatedAt, rec.UpdatedAt = now, now
	rules, scope, err := encodeRulesScope(rec)
	if err != nil {
		return rec, err
	}
	var parent any
	if rec.ParentSessionID != "" {
		parent = rec.ParentSessionID
	}
	pathRules, err := encodePathRules(rec)
	if err != nil {
		return rec, err
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, rules, parent, scope, rec.AssessorModel, rec.Owner, formatTime(now), formatTime(now), pathRules)
	switch {
	case isConstraint(err, "UNIQUE"), isConstraint(err, "PRIMARY KEY"):
		return rec, fmt.Errorf("session %q: %w", rec.ID, pdp.ErrExists)
	case isConstraint(err, "FOREIGN KEY"):
		return rec, fmt.Errorf("parent session %q: %w", rec.ParentSessionID, pdp.ErrNotFound)
	case err != nil:
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	if len(rec.CommandRules) > 0 {
		if err := storeCommandRules(ctx, s.write, rec.ID, rec.CommandRules); err != nil {
			// A session must not exist without the deny rules it was created with.
			_, _ = s.write.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, rec.ID)
			return rec, err
		}
	}
	s.trees.invalidate()
	return rec, nil
}

// EnsureSession returns the stored session with rec's id, creating it
// from rec when there is none (the first decision of an unknown session).
func (s *Store) EnsureSession(ctx context.Context, rec pdp.StoredSession) (pdp.StoredSession, error) {
	got, err := s.GetSession(ctx, rec.ID)
	if !errors.Is(err, pdp.ErrNotFound) {
		return got, err
	}
	now := s.now()
	rules, scope, err := encodeRulesScope(rec)
	if err != nil {
		return rec, err
	}
	pathRules, err := encodePathRules(rec)
	if err != nil {
		return rec, err
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?,?,?,?,?,?,NULL,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, rules, scope, rec.AssessorModel, rec.Owner, formatTime(now), formatTime(now), pathRules)
	if err != nil {
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	s.trees.invalidate()
	return s.getSession(ctx, s.write, rec.ID)
}

// ClaimWorkspace sets the workspace of a session that has none yet (one
// created before any absolute cwd was known); a set workspace never
// changes.
func (s *Store) ClaimWorkspace(ctx context.Context, id, workspace string) error {
	_, err := s.write.ExecContext(ctx, `UPDATE sessions SET workspace = ?, updated_at = ? WHERE id = ? AND workspace = ''`, workspace, formatTime(s.now()), id)
	if err != nil {
		return fmt.Errorf("setting the workspace of %q: %w", id, err)
	}
	s.trees.invalidate()
	return nil
}

// GetSession returns one session, or pdp.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (pdp.StoredSession, error) {
	return s.getSession(ctx, s.read, id)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) getSession(ctx context.Context, db queryer, id string) (pdp.StoredSession, error) {
	var rec pdp.StoredSession
	var rules, pathRules string
	var parent, scope sql.NullString
	var created, updated string
	err := db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id).Scan(
		&rec.ID, &rec.PermissionLevel, &rec.Mode, &rec.ExecutionMode, &rec.Workspace, &rules, &parent, &scope, &rec.AssessorModel, &rec.Owner, &created, &updated, &pathRules)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, fmt.Errorf("session %q: %w", id, pdp.ErrNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("reading session %q: %w", id, err)
	}
	// Command rules are in their own table (readCommandRules).
	if err := storerows.Session(&rec, storerows.SessionColumns{Rules: rules, PathRules: pathRules, Scope: nullable(scope)}); err != nil {
		return rec, err
	}
	if rec.CommandRules, err = readCommandRules(ctx, db, id); err != nil {
		return rec, err
	}
	rec.ParentSessionID = parent.String
	rec.CreatedAt, rec.UpdatedAt = parseTime(created), parseTime(updated)
	return rec, nil
}

// UpdateSession applies a patch; pdp.ErrNotFound when there is no session.
func (s *Store) UpdateSession(ctx context.Context, id string, p pdp.SessionPatch) (pdp.StoredSession, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return pdp.StoredSession{}, err
	}
	defer tx.Rollback()
	rec, err := s.getSession(ctx, tx, id)
	if err != nil {
		return rec, err
	}
	levelChanged := p.ApplySettings(&rec)
	rec.UpdatedAt = s.now()
	rules, _, err := encodeRulesScope(rec)
	if err != nil {
		return rec, err
	}
	pathRules, err := encodePathRules(rec)
	if err != nil {
		return rec, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET permission_level = ?, mode = ?, rules = ?, path_rules = ?, updated_at = ? WHERE id = ?`,
		rec.PermissionLevel, rec.Mode, rules, pathRules, formatTime(rec.UpdatedAt), id); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	if levelChanged {
		if err := addChange(ctx, tx, rec.UpdatedAt, pdp.ChangeLevel, id, "", &rec); err != nil {
			return rec, err
		}
	}
	if p.CommandRulesSet {
		rec.CommandRules = p.CommandRules
		if err := storeCommandRules(ctx, tx, id, p.CommandRules); err != nil {
			return rec, err
		}
	}
	if err := tx.Commit(); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	s.trees.invalidate()
	return rec, nil
}

// SessionTree returns a session with its parents and the grants of its
// tree's root, ready for the engine. The tree is shared: callers must not
// change it.
func (s *Store) SessionTree(ctx context.Context, id string) (*pdp.Session, error) {
	if tree, ok := s.trees.get(id); ok {
		return tree, nil
	}
	gen := s.trees.generation()
	tree, err := s.loadTree(ctx, id)
	if err != nil {
		return nil, err
	}
	s.trees.put(id, gen, tree)
	return tree, nil
}

func (s *Store) loadTree(ctx context.Context, id string) (*pdp.Session, error) {
	var chain []pdp.StoredSession
	for cur := id; cur != ""; {
		if len(chain) >= maxTreeDepth {
			return nil, fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
		}
		rec, err := s.GetSession(ctx, cur)
		if err != nil {
			return nil, err
		}
		chain = append(chain, rec)
		cur = rec.ParentSessionID
	}
	grants, err := s.Grants(ctx, chain[len(chain)-1].ID)
	if err != nil {
		return nil, err
	}
	tree := make([]pdp.Grant, 0, len(grants))
	for _, g := range grants {
		tree = append(tree, pdp.Grant{Capability: g.Capability, Fingerprint: g.Fingerprint})
	}
	return pdp.AssembleTree(chain, tree), nil
}

// RootID returns the id of the root of the session's tree.
func (s *Store) RootID(ctx context.Context, id string) (string, error) {
	cur := id
	for depth := 0; ; depth++ {
		if depth >= maxTreeDepth {
			return "", fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
		}
		rec, err := s.GetSession(ctx, cur)
		if err != nil {
			return "", err
		}
		if rec.ParentSessionID == "" {
			return rec.ID, nil
		}
		cur = rec.ParentSessionID
	}
}

func encodeRulesScope(rec pdp.StoredSession) (string, any, error) {
	rules := rec.Rules
	if rules == nil {
		rules = map[string]string{}
	}
	rb, err := json.Marshal(rules)
	if err != nil {
		return "", nil, err
	}
	var scope any
	if len(rec.Scope) > 0 {
		sb, err := json.Marshal(rec.Scope)
		if err != nil {
			return "", nil, err
		}
		scope = string(sb)
	}
	return string(rb), scope, nil
}

// encodePathRules is the path_rules column: a JSON object, {} for none.
func encodePathRules(rec pdp.StoredSession) (string, error) {
	rules := rec.PathRules
	if rules == nil {
		rules = map[string]pdp.PathRule{}
	}
	b, err := json.Marshal(rules)
	return string(b), err
}

// ListSessions lists sessions, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, limit int) ([]pdp.StoredSession, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM sessions ORDER BY updated_at DESC, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	out := []pdp.StoredSession{}
	for _, id := range ids {
		rec, err := s.GetSession(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}
