package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// recordParts stores the parts of each compound command of a batch with
// its decision, so that an answer can grant each part.
func recordParts(ctx context.Context, tx *sql.Tx, batch []pendingEvent) error {
	for _, p := range batch {
		d := p.ev.Decision
		if len(d.Parts) == 0 {
			continue
		}
		b, err := json.Marshal(d.Parts)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE decisions SET parts = ? WHERE id = ?`, string(b), d.DecisionID); err != nil {
			return fmt.Errorf("writing the parts of %s: %w", d.DecisionID, err)
		}
	}
	return nil
}

// readParts reads the parts recorded with a decision; nil for none.
func readParts(ctx context.Context, db queryer, id string) ([]api.Part, error) {
	var raw sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT parts FROM decisions WHERE id = ?`, id).Scan(&raw); err != nil {
		return nil, fmt.Errorf("reading the parts of %s: %w", id, err)
	}
	if !raw.Valid {
		return nil, nil
	}
	var parts []api.Part
	if err := json.Unmarshal([]byte(raw.String), &parts); err != nil {
		return nil, fmt.Errorf("decision %s has unreadable parts: %w", id, err)
	}
	return parts, nil
}

// grantParts stores the grants an allow_session or allow_project answer
// gives, on the root of the session's tree; a project grant also names
// the root's workspace and owner, which every session of that owner with
// that workspace shares. It returns the first grant's id.
func grantParts(ctx context.Context, tx *sql.Tx, rec pdp.DecisionEvent, rootID, answer string, now time.Time) (int64, error) {
	fingerprints, err := pdp.GrantFingerprints(rec)
	if err != nil {
		return 0, err
	}
	scope, workspace, owner := "session", "", ""
	if answer == pdp.AllowProject {
		scope = "project"
		if err := tx.QueryRowContext(ctx, `SELECT workspace, owner FROM sessions WHERE id = ?`, rootID).Scan(&workspace, &owner); err != nil {
			return 0, fmt.Errorf("reading the project of %q: %w", rootID, err)
		}
		if workspace == "" {
			return 0, fmt.Errorf("%w: the session has no workspace, so there is no project to grant for", pdp.ErrNotGrantable)
		}
	}
	var first int64
	for i, fp := range fingerprints {
		var gid int64
		err := tx.QueryRowContext(ctx, `INSERT INTO grants (session_id, capability, fingerprint, decision_id, created_at, scope, workspace, owner) VALUES (?,?,?,?,?,?,?,?)
			ON CONFLICT (session_id, capability, fingerprint) DO UPDATE SET decision_id = excluded.decision_id,
				scope = CASE WHEN excluded.scope = 'project' THEN 'project' ELSE grants.scope END,
				workspace = CASE WHEN excluded.scope = 'project' THEN excluded.workspace ELSE grants.workspace END,
				owner = CASE WHEN excluded.scope = 'project' THEN excluded.owner ELSE grants.owner END
			RETURNING id`,
			rootID, *rec.Capability, fp, rec.DecisionID, formatTime(now), scope, workspace, owner).Scan(&gid)
		if err != nil {
			return 0, fmt.Errorf("creating the grant: %w", err)
		}
		if i == 0 {
			first = gid
		}
	}
	return first, nil
}
