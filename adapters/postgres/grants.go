package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/pdp"
)

// Grants lists the grants stored on a session, oldest first.
func (s *Store) Grants(ctx context.Context, sessionID string) ([]pdp.StoredGrant, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, session_id, capability, fingerprint, COALESCE(decision_id, ''), created_at FROM grants WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []pdp.StoredGrant
	for rows.Next() {
		var g pdp.StoredGrant
		var created time.Time
		if err := rows.Scan(&g.ID, &g.SessionID, &g.Capability, &g.Fingerprint, &g.DecisionID, &created); err != nil {
			return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
		}
		g.CreatedAt = created.UTC()
		out = append(out, g)
	}
	return out, rows.Err()
}

// DeleteGrant removes a grant stored on sessionID; pdp.ErrNotFound when there
// is no such grant there. The next decision on any replica reads the tree
// without it.
func (s *Store) DeleteGrant(ctx context.Context, sessionID string, id int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM grants WHERE id = $1 AND session_id = $2`, id, sessionID)
	if err != nil {
		return fmt.Errorf("deleting grant %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("grant %d of session %q: %w", id, sessionID, pdp.ErrNotFound)
	}
	return nil
}
