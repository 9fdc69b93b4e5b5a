package sqlite

import (
	"context"
	"fmt"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlstore"
)

// maxTreeDepth bounds how far a session's parents are followed.
const maxTreeDepth = 32

// SessionTree returns a session with its parents and the grants of its
// tree's root, ready for the engine. The tree is shared: callers must not
// change it.
func (s *Store) SessionTree(ctx context.Context, id string) (*pdp.SessionTree, error) {
	return s.cachedTree(ctx, id)
}

func (s *Store) loadTree(ctx context.Context, id string) (*pdp.SessionTree, error) {
	var chain []api.Session
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
		tree = append(tree, pdp.Grant{Capability: g.Capability, Fingerprint: g.Fingerprint, Scope: g.Scope})
	}
	labels, err := s.Labels(ctx, chain[len(chain)-1].ID)
	if err != nil {
		return nil, err
	}
	return pdp.AssembleTree(chain, tree, labels), nil
}

// rootID returns the id of the root of the session's tree, following the
// parents through db.
func rootID(ctx context.Context, db sqlstore.Conn, id string) (string, error) {
	cur := id
	for depth := 0; ; depth++ {
		if depth >= maxTreeDepth {
			return "", fmt.Errorf("session %q: parents nest deeper than %d", id, maxTreeDepth)
		}
		rec, err := sqlstore.GetSessionIn(ctx, db, cur)
		if err != nil {
			return "", err
		}
		if rec.ParentSessionID == "" {
			return rec.ID, nil
		}
		cur = rec.ParentSessionID
	}
}
