package sqlite

import (
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
// caller's claim may have committed without invalidating yet. It
// assumes this process is the database's only writer.
type treeCache struct {
	gen atomic.Uint64
	mu  sync.RWMutex
	m   map[string]treeEntry
}

type treeEntry struct {
	gen  uint64
	tree *pdp.Session
}

// maxCachedTrees bounds the cache; past it, it starts over.
const maxCachedTrees = 100_000

func newTreeCache() *treeCache { return &treeCache{m: map[string]treeEntry{}} }

// generation is read before loading, so a tree loaded across a write is
// stored under the old generation and never served.
func (c *treeCache) generation() uint64 { return c.gen.Load() }

func (c *treeCache) get(id string) (*pdp.Session, bool) {
	c.mu.RLock()
	e, ok := c.m[id]
	c.mu.RUnlock()
	if !ok || e.gen != c.gen.Load() {
		return nil, false
	}
	return e.tree, true
}

func (c *treeCache) put(id string, gen uint64, tree *pdp.Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedTrees {
		c.m = map[string]treeEntry{}
	}
	c.m[id] = treeEntry{gen: gen, tree: tree}
}

// invalidate is called after every committed write to sessions or grants.
func (c *treeCache) invalidate() { c.gen.Add(1) }
