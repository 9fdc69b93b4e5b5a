package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/internal/storerows"
	"github.com/toolperm/pdp/pdp"
)

// maxTreeDepth bounds how far a session's parents are followed.
const maxTreeDepth = 32

const sessionColumns = `id, permission_level, mode, execution_mode, workspace, rules, parent_session_id, scope, assessor_model, owner, created_at, updated_at, path_rules, command_rules`

// CreateSession stores a new session; pdp.ErrExists when the id is taken,
// pdp.ErrNotFound when its parent does not exist.
func (s *Store) CreateSession(ctx context.Context, rec pdp.StoredSession) (pdp.StoredSession, error) {
	now := utc(s.now())
	rec.CreatedAt, rec.UpdatedAt = now, now
	cols, err := encodeSessionJSON(rec)
	if err != nil {
		return rec, err
	}
	var parent *string
	if rec.ParentSessionID != "" {
		parent = &rec.ParentSessionID
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, cols.rules, parent, cols.scope, rec.AssessorModel, rec.Owner, now, now, cols.pathRules, cols.commandRules)
	switch {
	case pgCode(err) == uniqueViolation:
		return rec, fmt.Errorf("session %q: %w", rec.ID, pdp.ErrExists)
	case pgCode(err) == foreignKeyViolation:
		return rec, fmt.Errorf("parent session %q: %w", rec.ParentSessionID, pdp.ErrNotFound)
	case err != nil:
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	return rec, nil
}

// EnsureSession returns the stored session with rec's id, creating it
// from rec when there is none (the first decision of an unknown session).
// Two replicas creating it at once both get the one stored.
func (s *Store) EnsureSession(ctx context.Context, rec pdp.StoredSession) (pdp.StoredSession, error) {
	got, err := s.GetSession(ctx, rec.ID)
	if !errors.Is(err, pdp.ErrNotFound) {
		return got, err
	}
	now := utc(s.now())
	cols, err := encodeSessionJSON(rec)
	if err != nil {
		return rec, err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES ($1,$2,$3,$4,$5,$6,NULL,$7,$8,$9,$10,$11,$12,$13) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.PermissionLevel, rec.Mode, rec.ExecutionMode, rec.Workspace, cols.rules, cols.scope, rec.AssessorModel, rec.Owner, now, now, cols.pathRules, cols.commandRules)
	if err != nil {
		return rec, fmt.Errorf("creating session %q: %w", rec.ID, err)
	}
	return s.GetSession(ctx, rec.ID)
}

// ClaimWorkspace sets the workspace of a session that has none yet (one
// created before any absolute cwd was known); a set workspace never
// changes.
func (s *Store) ClaimWorkspace(ctx context.Context, id, workspace string) error {
	_, err := s.pool.Exec(ctx, `UPDATE sessions SET workspace = $1, updated_at = $2 WHERE id = $3 AND workspace = ''`, workspace, utc(s.now()), id)
	if err != nil {
		return fmt.Errorf("setting the workspace of %q: %w", id, err)
	}
	return nil
}

// GetSession returns one session, or pdp.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (pdp.StoredSession, error) {
	return getSession(ctx, s.pool, id, "")
}

type queryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getSession(ctx context.Context, db queryer, id, lock string) (pdp.StoredSession, error) {
	rec, err := scanSession(db.QueryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return rec, fmt.Errorf("session %q: %w", id, pdp.ErrNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("reading session %q: %w", id, err)
	}
	return rec, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(row scanner, extra ...any) (pdp.StoredSession, error) {
	var rec pdp.StoredSession
	var rules, pathRules, commandRules string
	var parent, scope *string
	var created, updated time.Time
	dest := append([]any{&rec.ID, &rec.PermissionLevel, &rec.Mode, &rec.ExecutionMode, &rec.Workspace, &rules, &parent, &scope,
		&rec.AssessorModel, &rec.Owner, &created, &updated, &pathRules, &commandRules}, extra...)
	if err := row.Scan(dest...); err != nil {
		return rec, err
	}
	if err := storerows.Session(&rec, storerows.SessionColumns{Rules: rules, PathRules: pathRules, Scope: scope, CommandRules: &commandRules}); err != nil {
		return rec, err
	}
	if parent != nil {
		rec.ParentSessionID = *parent
	}
	rec.CreatedAt, rec.UpdatedAt = created.UTC(), updated.UTC()
	return rec, nil
}

// UpdateSession applies a patch; pdp.ErrNotFound when there is no session.
func (s *Store) UpdateSession(ctx context.Context, id string, p pdp.SessionPatch) (pdp.StoredSession, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return pdp.StoredSession{}, fmt.Errorf("updating session %q: %w", id, err)
	}
	defer tx.Rollback(context.Background())
	rec, err := getSession(ctx, tx, id, " FOR UPDATE")
	if err != nil {
		return rec, err
	}
	levelChanged := p.ApplySettings(&rec)
	if p.CommandRulesSet {
		rec.CommandRules = p.CommandRules
	}
	rec.UpdatedAt = utc(s.now())
	cols, err := encodeSessionJSON(rec)
	if err != nil {
		return rec, err
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET permission_level = $1, mode = $2, rules = $3, path_rules = $4, command_rules = $5, updated_at = $6 WHERE id = $7`,
		rec.PermissionLevel, rec.Mode, cols.rules, cols.pathRules, cols.commandRules, rec.UpdatedAt, id); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	if levelChanged {
		snapshot := rec
		if err := addChanges(ctx, tx, change{time: rec.UpdatedAt, kind: pdp.ChangeLevel, sessionID: id, session: &snapshot}); err != nil {
			return rec, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return rec, fmt.Errorf("updating session %q: %w", id, err)
	}
	return rec, nil
}

// treeQuery reads a session and its parents, nearest first, in one round
// trip; the root's row also carries its grants (a JSON array of
// [capability, fingerprint]): those stored on it and the project grants
// of its workspace and owner. Nothing is cached: every decision reads the
// tree as committed, whichever replica changed it.
const treeQuery = `WITH RECURSIVE chain AS (
	SELECT ` + sessionColumns + `, 0 AS depth FROM sessions WHERE id = $1
	UNION ALL
	SELECT s.id, s.permission_level, s.mode, s.execution_mode, s.workspace, s.rules, s.parent_session_id, s.scope, s.assessor_model,
		s.owner, s.created_at, s.updated_at, s.path_rules, s.command_rules, c.depth + 1
	FROM sessions s JOIN chain c ON s.id = c.parent_session_id WHERE c.depth < $2
)
SELECT ` + sessionColumns + `,
	CASE WHEN parent_session_id IS NULL THEN
		(SELECT COALESCE(json_agg(json_build_array(g.capability, g.fingerprint) ORDER BY g.id), '[]')::text FROM grants g
			WHERE g.session_id = chain.id OR (g.scope = 'project' AND chain.workspace != '' AND g.workspace = chain.workspace AND g.owner = chain.owner))
	END
FROM chain ORDER BY depth`

// SessionTree returns a session with its parents and the grants of its
// tree's root, ready for the engine.
func (s *Store) SessionTree(ctx context.Context, id string) (*pdp.Session, error) {
	rows, err := s.pool.Query(ctx, treeQuery, id, maxTreeDepth-1)
	if err != nil {
		return nil, fmt.Errorf("reading the session tree of %q: %w", id, err)
	}
	defer rows.Close()
	var chain []pdp.StoredSession
	var grants *string
	for rows.Next() {
		var g *string
		rec, err := scanSession(rows, &g)
		if err != nil {
			return nil, fmt.Errorf("reading the session tree of %q: %w", id, err)
		}
		chain, grants = append(chain, rec), g
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the session tree of %q: %w", id, err)
	}
	switch {
	case len(chain) == 0:
		return nil, fmt.Errorf("session %q: %w", id, pdp.ErrNotFound)
	case chain[len(chain)-1].ParentSessionID != "" && len(chain) >= maxTreeDepth:
		return nil, fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
	case chain[len(chain)-1].ParentSessionID != "":
		return nil, fmt.Errorf("session %q: %w", chain[len(chain)-1].ParentSessionID, pdp.ErrNotFound)
	}
	var pairs [][2]string
	if grants != nil {
		if err := json.Unmarshal([]byte(*grants), &pairs); err != nil {
			return nil, fmt.Errorf("reading the grants of %q: %w", chain[len(chain)-1].ID, err)
		}
	}
	tree := make([]pdp.Grant, 0, len(pairs))
	for _, g := range pairs {
		tree = append(tree, pdp.Grant{Capability: g[0], Fingerprint: g[1]})
	}
	return pdp.AssembleTree(chain, tree), nil
}

// RootID returns the id of the root of the session's tree.
func (s *Store) RootID(ctx context.Context, id string) (string, error) {
	return rootID(ctx, s.pool, id)
}

func rootID(ctx context.Context, db queryer, id string) (string, error) {
	var root string
	var depth int
	err := db.QueryRow(ctx, `WITH RECURSIVE chain AS (
		SELECT id, parent_session_id, 0 AS depth FROM sessions WHERE id = $1
		UNION ALL
		SELECT s.id, s.parent_session_id, c.depth + 1 FROM sessions s JOIN chain c ON s.id = c.parent_session_id WHERE c.depth < $2
	) SELECT id, depth FROM chain WHERE parent_session_id IS NULL`, id, maxTreeDepth-1).Scan(&root, &depth)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, gerr := getSession(ctx, db, id, ""); gerr != nil {
			return "", gerr
		}
		return "", fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
	}
	if err != nil {
		return "", fmt.Errorf("finding the root of %q: %w", id, err)
	}
	return root, nil
}

// sessionJSON is a session's JSON columns, encoded.
type sessionJSON struct {
	rules, pathRules, commandRules string
	scope                          *string
}

// encodeSessionJSON encodes every JSON column of a session once.
func encodeSessionJSON(rec pdp.StoredSession) (sessionJSON, error) {
	var c sessionJSON
	var err error
	if c.rules, c.scope, err = encodeRulesScope(rec); err != nil {
		return c, err
	}
	if c.pathRules, err = encodePathRules(rec); err != nil {
		return c, err
	}
	c.commandRules, err = encodeCommandRules(rec.CommandRules)
	return c, err
}

func encodeRulesScope(rec pdp.StoredSession) (string, *string, error) {
	rules := rec.Rules
	if rules == nil {
		rules = map[string]string{}
	}
	rb, err := json.Marshal(rules)
	if err != nil {
		return "", nil, err
	}
	var scope *string
	if len(rec.Scope) > 0 {
		sb, err := json.Marshal(rec.Scope)
		if err != nil {
			return "", nil, err
		}
		s := string(sb)
		scope = &s
	}
	return string(rb), scope, nil
}

// encodeCommandRules is the command_rules column: a JSON object, {} for
// none.
func encodeCommandRules(rules map[string]string) (string, error) {
	if rules == nil {
		rules = map[string]string{}
	}
	b, err := json.Marshal(rules)
	return string(b), err
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
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+` FROM sessions ORDER BY updated_at DESC, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	defer rows.Close()
	out := []pdp.StoredSession{}
	for rows.Next() {
		rec, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("listing sessions: %w", err)
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}
