package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

const sessionColumns = storerows.SessionColumnNames

// CreateSession stores a new session; pdp.ErrExists when the id is taken,
// pdp.ErrNotFound when its parent does not exist.
func (s *Store) CreateSession(ctx context.Context, rec api.Session) (api.Session, error) {
	now := s.Now()
	rec.CreatedAt, rec.UpdatedAt = now, now
	cols, err := encodeSession(rec)
	if err != nil {
		return rec, err
	}
	var parent *string
	if rec.ParentSessionID != "" {
		parent = &rec.ParentSessionID
	}
	_, err = s.Write.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, cols.rules, parent, cols.scope, rec.AssessorModel, rec.Owner,
		s.Time(now), s.Time(now), cols.pathRules, cols.commandRules)
	switch {
	case err != nil && s.Violation(err) == Unique:
		return rec, fmt.Errorf("session %q: %w", rec.ID, pdp.ErrExists)
	case err != nil && s.Violation(err) == ForeignKey:
		return rec, fmt.Errorf("parent session %q: %w", rec.ParentSessionID, pdp.ErrNotFound)
	case err != nil:
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	return rec, nil // a new session is in no tree read before (Changed)
}

// EnsureSession returns the stored session with rec's id, creating it
// from rec when there is none (the first decision of an unknown session).
// Two writers creating it at once both get the one stored.
func (s *Store) EnsureSession(ctx context.Context, rec api.Session) (api.Session, error) {
	got, err := s.GetSession(ctx, rec.ID)
	if !errors.Is(err, pdp.ErrNotFound) {
		return got, err
	}
	now := s.Now()
	cols, err := encodeSession(rec)
	if err != nil {
		return rec, err
	}
	_, err = s.Write.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?,?,?,?,?,?,NULL,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, cols.rules, cols.scope, rec.AssessorModel, rec.Owner,
		s.Time(now), s.Time(now), cols.pathRules, cols.commandRules)
	if err != nil {
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	return getSession(ctx, s.Write, rec.ID, "")
}

// ClaimWorkspace sets the workspace of a session that has none yet (one
// created before any absolute cwd was known); a set workspace never
// changes.
func (s *Store) ClaimWorkspace(ctx context.Context, id, workspace string) error {
	_, err := s.Write.Exec(ctx, `UPDATE sessions SET workspace = ?, updated_at = ? WHERE id = ? AND workspace = ''`, workspace, s.Time(s.Now()), id)
	if err != nil {
		return fmt.Errorf("setting the workspace of %q: %w", id, err)
	}
	// Also when no row changed: another caller's claim may have committed
	// and not yet told the cache, and the caller reads the tree next
	// (TestResolveAfterLosingAClaimReadsTheClaimedWorkspace).
	s.changed()
	return nil
}

// GetSession returns one session, or pdp.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (api.Session, error) {
	return getSession(ctx, s.Read, id, "")
}

// GetSessionIn is GetSession through db (a transaction).
func GetSessionIn(ctx context.Context, db Conn, id string) (api.Session, error) {
	return getSession(ctx, db, id, "")
}

func getSession(ctx context.Context, db Conn, id, lock string) (api.Session, error) {
	rec, err := storerows.ScanSession(db.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`+lock, id))
	if errors.Is(err, ErrNoRows) {
		return rec, fmt.Errorf("session %q: %w", id, pdp.ErrNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("reading session %q: %w", id, err)
	}
	return rec, nil
}

// UpdateSession applies a patch; pdp.ErrNotFound when there is no session.
// A change of level goes to the change log in the same transaction.
func (s *Store) UpdateSession(ctx context.Context, id string, p pdp.SessionPatch) (api.Session, error) {
	tx, err := s.Write.Begin(ctx)
	if err != nil {
		return api.Session{}, fmt.Errorf("updating session %q: %w", id, err)
	}
	defer tx.Rollback(context.Background())
	rec, err := getSession(ctx, tx, id, s.LockRow)
	if err != nil {
		return rec, err
	}
	levelChanged := p.ApplySettings(&rec)
	if p.CommandRulesSet {
		rec.CommandRules = p.CommandRules
	}
	rec.UpdatedAt = s.Now()
	cols, err := encodeSession(rec)
	if err != nil {
		return rec, err
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET permission_level = ?, mode = ?, rules = ?, path_rules = ?, command_rules = ?, updated_at = ? WHERE id = ?`,
		rec.PermissionLevel, rec.Mode, cols.rules, cols.pathRules, cols.commandRules, s.Time(rec.UpdatedAt), id); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	if levelChanged {
		snapshot := rec
		if err := s.AddChanges(ctx, tx, Change{Time: rec.UpdatedAt, Kind: feed.ChangeLevel, SessionID: id, Session: &snapshot}); err != nil {
			return rec, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	s.changed()
	return rec, nil
}

// ListSessions lists sessions, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, limit int) ([]api.Session, error) {
	rows, err := s.Read.Query(ctx, `SELECT `+sessionColumns+` FROM sessions ORDER BY updated_at DESC, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	return collect(rows, []api.Session{}, func(r Rows) (api.Session, error) { return storerows.ScanSession(r) }, "listing sessions")
}

// sessionJSON is a session's JSON columns, encoded.
type sessionJSON struct {
	rules, pathRules, commandRules string
	scope                          *string
}

// encodeSession encodes every JSON column of a session: objects are {}
// for none, the scope NULL for none.
func encodeSession(rec api.Session) (sessionJSON, error) {
	var c sessionJSON
	var err error
	if c.rules, err = jsonObject(rec.Rules); err != nil {
		return c, err
	}
	if c.pathRules, err = jsonObject(rec.PathRules); err != nil {
		return c, err
	}
	if c.commandRules, err = jsonObject(rec.CommandRules); err != nil {
		return c, err
	}
	if len(rec.Scope) > 0 {
		b, err := json.Marshal(rec.Scope)
		if err != nil {
			return c, err
		}
		scope := string(b)
		c.scope = &scope
	}
	return c, nil
}

// jsonObject encodes a map as a JSON object, {} for nil.
func jsonObject[V any](m map[string]V) (string, error) {
	if m == nil {
		m = map[string]V{}
	}
	b, err := json.Marshal(m)
	return string(b), err
}
