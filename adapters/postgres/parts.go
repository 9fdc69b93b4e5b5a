package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/toolperm/pdp/pdp"
)

// grantParts stores the grants an allow_session or allow_project answer
// gives, on the root of the session's tree; a project grant also names
// the root's workspace and owner, which every session of that owner with
// that workspace shares. It returns the first grant's id.
func grantParts(ctx context.Context, tx pgx.Tx, rec pdp.DecisionEvent, rootID, answer string, now time.Time) (int64, error) {
	fingerprints, err := pdp.GrantFingerprints(rec)
	if err != nil {
		return 0, err
	}
	scope, workspace, owner := "session", "", ""
	if answer == pdp.AllowProject {
		scope = "project"
		if err := tx.QueryRow(ctx, `SELECT workspace, owner FROM sessions WHERE id = $1`, rootID).Scan(&workspace, &owner); err != nil {
			return 0, fmt.Errorf("reading the project of %q: %w", rootID, err)
		}
		if workspace == "" {
			return 0, fmt.Errorf("%w: the session has no workspace, so there is no project to grant for", pdp.ErrNotGrantable)
		}
	}
	var first int64
	for i, fp := range fingerprints {
		var gid int64
		err := tx.QueryRow(ctx, `INSERT INTO grants (session_id, capability, fingerprint, decision_id, created_at, scope, workspace, owner) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
			ON CONFLICT (session_id, capability, fingerprint) DO UPDATE SET decision_id = excluded.decision_id,
				scope = CASE WHEN excluded.scope = 'project' THEN 'project' ELSE grants.scope END,
				workspace = CASE WHEN excluded.scope = 'project' THEN excluded.workspace ELSE grants.workspace END,
				owner = CASE WHEN excluded.scope = 'project' THEN excluded.owner ELSE grants.owner END
			RETURNING id`,
			rootID, *rec.Capability, noNUL(fp), rec.DecisionID, now, scope, workspace, owner).Scan(&gid)
		if err != nil {
			return 0, fmt.Errorf("creating the grant: %w", err)
		}
		if i == 0 {
			first = gid
		}
	}
	return first, nil
}
