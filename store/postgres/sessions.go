package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlstore"
	"github.com/toolperm/pdp/store/storerows"
)

// maxTreeDepth bounds how far a session's parents are followed.
const maxTreeDepth = 32

const sessionColumns = storerows.SessionColumnNames

// treeQuery reads a session and its parents, nearest first, in one round
// trip; the root's row also carries its grants (a JSON array of
// [capability, fingerprint, scope]): those stored on it and the project grants
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
		(SELECT COALESCE(json_agg(json_build_array(g.capability, g.fingerprint, g.scope) ORDER BY g.id), '[]')::text FROM grants g
			WHERE g.session_id = chain.id OR (g.scope = 'project' AND chain.workspace != '' AND g.workspace = chain.workspace AND g.owner = chain.owner))
	END,
	CASE WHEN parent_session_id IS NULL THEN
		(SELECT COALESCE(json_agg(json_build_array(l.label, l.decision_id, l.set_by, l.time, l.summary) ORDER BY l.time, l.label), '[]')::text
			FROM session_labels l WHERE l.session_id = chain.id)
	END
FROM chain ORDER BY depth`

// SessionTree returns a session with its parents and the grants of its
// tree's root, ready for the engine.
func (s *Store) SessionTree(ctx context.Context, id string) (*pdp.SessionTree, error) {
	rows, err := s.pool.Query(ctx, treeQuery, id, maxTreeDepth-1)
	if err != nil {
		return nil, fmt.Errorf("reading the session tree of %q: %w", id, err)
	}
	defer rows.Close()
	var chain []api.Session
	var grants, labels *string
	for rows.Next() {
		var g, l *string
		rec, err := storerows.ScanSession(rows, &g, &l)
		if err != nil {
			return nil, fmt.Errorf("reading the session tree of %q: %w", id, err)
		}
		chain, grants, labels = append(chain, rec), g, l
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
	var pairs [][3]string
	if grants != nil {
		if err := json.Unmarshal([]byte(*grants), &pairs); err != nil {
			return nil, fmt.Errorf("reading the grants of %q: %w", chain[len(chain)-1].ID, err)
		}
	}
	tree := make([]pdp.Grant, 0, len(pairs))
	for _, g := range pairs {
		tree = append(tree, pdp.Grant{Capability: g[0], Fingerprint: g[1], Scope: g[2]})
	}
	flow, err := storerows.DecodeLabels(labels)
	if err != nil {
		return nil, fmt.Errorf("reading the labels of %q: %w", chain[len(chain)-1].ID, err)
	}
	return pdp.AssembleTree(chain, tree, flow), nil
}

// rootID finds the root of the session's tree through db in one query.
func rootID(ctx context.Context, db sqlstore.Conn, id string) (string, error) {
	var root string
	var depth int
	err := db.QueryRow(ctx, `WITH RECURSIVE chain AS (
		SELECT id, parent_session_id, 0 AS depth FROM sessions WHERE id = $1
		UNION ALL
		SELECT s.id, s.parent_session_id, c.depth + 1 FROM sessions s JOIN chain c ON s.id = c.parent_session_id WHERE c.depth < $2
	) SELECT id, depth FROM chain WHERE parent_session_id IS NULL`, id, maxTreeDepth-1).Scan(&root, &depth)
	if errors.Is(err, sqlstore.ErrNoRows) {
		if _, gerr := sqlstore.GetSessionIn(ctx, db, id); gerr != nil {
			return "", gerr
		}
		return "", fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
	}
	if err != nil {
		return "", fmt.Errorf("finding the root of %q: %w", id, err)
	}
	return root, nil
}
