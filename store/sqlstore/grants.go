package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

// projectOf selects the project grants of a root session, its id given
// twice: those of its owner for its workspace (none for a session without
// one).
const projectOf = `(scope = 'project' AND workspace != '' AND workspace = (SELECT workspace FROM sessions WHERE id = ?) AND owner = (SELECT owner FROM sessions WHERE id = ?))`

// Grants lists the grants that apply to a root session, oldest first:
// those stored on it and the project grants of its workspace and owner.
func (s *Store) Grants(ctx context.Context, sessionID string) ([]api.Grant, error) {
	rows, err := s.Read.Query(ctx, `SELECT id, session_id, capability, fingerprint, COALESCE(decision_id, ''), created_at, scope, workspace FROM grants
		WHERE session_id = ? OR `+projectOf+` ORDER BY id`, sessionID, sessionID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("reading grants of %q: %w", sessionID, err)
	}
	return collect(rows, nil, func(r Rows) (api.Grant, error) {
		var g api.Grant
		var created storerows.Time
		err := r.Scan(&g.ID, &g.SessionID, &g.Capability, &g.Fingerprint, &g.DecisionID, &created, &g.Scope, &g.Workspace)
		g.CreatedAt = created.T
		return g, err
	}, fmt.Sprintf("reading grants of %q", sessionID))
}

// DeleteGrant removes a grant that applies to the root session sessionID
// (stored on it, or a project grant of its workspace and owner);
// pdp.ErrNotFound when there is no such grant. The next decision reads
// the tree without it.
func (s *Store) DeleteGrant(ctx context.Context, sessionID string, id int64) error {
	n, err := s.Write.Exec(ctx, `DELETE FROM grants WHERE id = ? AND (session_id = ? OR `+projectOf+`)`, id, sessionID, sessionID, sessionID)
	if err != nil {
		return fmt.Errorf("deleting grant %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("grant %d of session %q: %w", id, sessionID, pdp.ErrNotFound)
	}
	s.changed()
	return nil
}

// grantParts stores the grants an allow_session or allow_project answer
// gives, on the root of the session's tree; a project grant also names
// the root's workspace and owner, which every session of that owner with
// that workspace shares. It returns the first grant's id.
func (s *Store) grantParts(ctx context.Context, tx Tx, rec api.Event, rootID, answer string, now time.Time) (int64, error) {
	fingerprints, err := pdp.GrantFingerprints(rec)
	if err != nil {
		return 0, err
	}
	scope, workspace, owner := "session", "", ""
	if answer == api.AllowProject {
		scope = "project"
		if err := tx.QueryRow(ctx, `SELECT workspace, owner FROM sessions WHERE id = ?`, rootID).Scan(&workspace, &owner); err != nil {
			return 0, fmt.Errorf("reading the project of %q: %w", rootID, err)
		}
		if workspace == "" {
			return 0, fmt.Errorf("%w: the session has no workspace, so there is no project to grant for", pdp.ErrNotGrantable)
		}
	}
	var first int64
	for i, fp := range fingerprints {
		var gid int64
		err := tx.QueryRow(ctx, `INSERT INTO grants (session_id, capability, fingerprint, decision_id, created_at, scope, workspace, owner) VALUES (?,?,?,?,?,?,?,?)
			ON CONFLICT (session_id, capability, fingerprint) DO UPDATE SET decision_id = excluded.decision_id,
				scope = CASE WHEN excluded.scope = 'project' THEN 'project' ELSE grants.scope END,
				workspace = CASE WHEN excluded.scope = 'project' THEN excluded.workspace ELSE grants.workspace END,
				owner = CASE WHEN excluded.scope = 'project' THEN excluded.owner ELSE grants.owner END
			RETURNING id`,
			rootID, *rec.Capability, s.Text(fp), rec.DecisionID, s.Time(now), scope, workspace, owner).Scan(&gid)
		if err != nil {
			return 0, fmt.Errorf("creating the grant: %w", err)
		}
		if i == 0 {
			first = gid
		}
	}
	return first, nil
}
