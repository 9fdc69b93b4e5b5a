package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// projectOf selects the project grants of the root session $1: those of
// its owner for its workspace (none for a session without one).
const projectOf = `(scope = 'project' AND workspace != '' AND workspace = (SELECT workspace FROM sessions WHERE id = $1) AND owner = (SELECT owner FROM sessions WHERE id = $1))`

// Grants lists the grants that apply to a root session, oldest first:
// those stored on it and the project grants of its workspace and owner.
func (s *Store) Grants(ctx context.Context, sessionID string) ([]api.Grant, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, session_id, capability, fingerprint, COALESCE(decision_id, ''), created_at, scope, workspace FROM grants
		WHERE session_id = $1 OR `+projectOf+` ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []api.Grant
	for rows.Next() {
		var g api.Grant
		var created time.Time
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Capability, &g.Fingerprint, &g.DecisionID, &created, &g.Scope, &g.Workspace); err != nil {
			return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
		}
		g.CreatedAt = created.UTC()
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeleteGrant removes a grant that applies to the root session sessionID
// (stored on it, or a project grant of its workspace and owner);
// pdp.ErrNotFound when there is no such grant. The next decision on any
// replica reads the tree without it.
func (s *Store) DeleteGrant(ctx context.Context, sessionID string, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM grants WHERE id = $2 AND (session_id = $1 OR `+projectOf+`)`, sessionID, id)
	if err != nil {
		return fmt.Errorf("deleting grant %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("grant %d of session %q: %w", id, sessionID, pdp.ErrNotFound)
	}
	return nil
}
