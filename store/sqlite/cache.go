package sqlite

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/toolperm/pdp/pdp"
)

// treeCache keeps the session trees decisions need, so the decide path
// reads no SQL once a session is warm. Every write that changes a stored
// session or the grants moves the generation on, which makes every cached
// tree stale: such writes are rare next to decisions, and a stale read
// can never happen. Creating a session changes no tree already read
// (sqlstore.Store.Changed), so new sessions keep the others warm; a
// workspace claim invalidates even when it changes no row, since another
// caller's claim may have committed without invalidating yet.
//
// A tree is also stored with the database's tree version (migration 11),
// read before every use: a write this process did not make (the sqlite3
// shell, a second process) moves it, so no cached tree outlives it.
type treeCache struct {
	gen atomic.Uint64
	mu  sync.RWMutex
	m   map[string]treeEntry
}

type treeEntry struct {
	gen, version uint64
	tree         *pdp.SessionTree
}

// maxCachedTrees bounds the cache; past it, it starts over.
const maxCachedTrees = 100_000

func newTreeCache() *treeCache { return &treeCache{m: map[string]treeEntry{}} }

// generation is read before loading, so a tree loaded across a write is
// stored under the old generation and never served.
func (c *treeCache) generation() uint64 { return c.gen.Load() }

func (c *treeCache) get(id string, version uint64) (*pdp.SessionTree, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() || e.version != version {
		return nil, false
	}
	return e.tree, true
}

func (c *treeCache) put(id string, gen, version uint64, tree *pdp.SessionTree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedTrees {
		c.m = map[string]treeEntry{}
	}
	c.m[id] = treeEntry{gen: gen, version: version, tree: tree}
}

// treeVersion is the database's count of changes to sessions, grants and flow labels,
// as committed now.
func (s *Store) treeVersion(ctx context.Context) (uint64, error) {
	var n int64
	if err := s.read.QueryRowContext(ctx, `SELECT n FROM tree_version WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the tree version: %w", err)
	}
	return uint64(n), nil
}

// cachedTree is the session tree of id, from the cache when neither this
// process nor any other changed a session, a grant or a flow label since it was read.
func (s *Store) cachedTree(ctx context.Context, id string) (*pdp.SessionTree, error) {
	if err := s.health.Fault(); err != nil {
		return nil, err
	}
	version, err := s.treeVersion(ctx)
	if err != nil {
		return nil, err
	}
	if tree, ok := s.trees.get(id, version); ok {
		return tree, nil
	}
	gen := s.trees.generation()
	tree, err := s.loadTree(ctx, id)
	if err != nil {
		return nil, err
	}
	s.trees.put(id, gen, version, tree)
	return tree, nil
}

// invalidate is called after every committed write to sessions or grants.
func (c *treeCache) invalidate() { c.gen.Add(1) }
