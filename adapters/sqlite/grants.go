package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/pdp"

	"github.com/mattn/go-sqlite3"
)

// projectOf selects the project grants of a root session: those of its
// owner for its workspace (none for a session without one).
const projectOf = `(scope = 'project' AND workspace != '' AND workspace = (SELECT workspace FROM sessions WHERE id = ?) AND owner = (SELECT owner FROM sessions WHERE id = ?))`

// Grants lists the grants that apply to a root session, oldest first:
// those stored on it and the project grants of its workspace and owner.
func (s *Store) Grants(ctx context.Context, sessionID string) ([]pdp.StoredGrant, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, session_id, capability, fingerprint, COALESCE(decision_id, ''), created_at, scope, workspace FROM grants
		WHERE session_id = ? OR `+projectOf+` ORDER BY id`, sessionID, sessionID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []pdp.StoredGrant
	for rows.Next() {
		var g pdp.StoredGrant
		var created string
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Capability, &g.Fingerprint, &g.DecisionID, &created, &g.Scope, &g.Workspace); err != nil {
			return nil, err
		}
		g.CreatedAt = parseTime(created)
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeleteGrant removes a grant that applies to the root session sessionID
// (stored on it, or a project grant of its workspace and owner);
// pdp.ErrNotFound when there is no such grant.
func (s *Store) DeleteGrant(ctx context.Context, sessionID string, id int64) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM grants WHERE id = ? AND (session_id = ? OR `+projectOf+`)`, id, sessionID, sessionID, sessionID)
	if err != nil {
		return fmt.Errorf("deleting grant %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("grant %d of session %q: %w", id, sessionID, pdp.ErrNotFound)
	}
	s.trees.invalidate()
	return nil
}

// isConstraint reports a SQLite constraint violation whose message names kind.
func isConstraint(err error, kind string) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrConstraint {
		return false
	}
	switch kind {
	case "UNIQUE":
		return se.ExtendedCode == sqlite3.ErrConstraintUnique
	case "PRIMARY KEY":
		return se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	case "FOREIGN KEY":
		return se.ExtendedCode == sqlite3.ErrConstraintForeignKey
	}
	return false
}
