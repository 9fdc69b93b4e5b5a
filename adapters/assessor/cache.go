package assessor

import (
	"container/list"
	"sync"
	"time"
)

// verdictCache is a bounded LRU of verdicts with a time to live.
type verdictCache struct {
	mu    sync.Mutex
	max   int
	ttl   time.Duration
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type cacheEntry struct {
	key     string
	safe    bool
	expires time.Time
}

func newVerdictCache(max int, ttl time.Duration) *verdictCache {
	return &verdictCache{max: max, ttl: ttl, order: list.New(), items: map[string]*list.Element{}}
}

func (c *verdictCache) get(key string, now time.Time) (safe, ok bool) {
	if c.max <= 0 {
		return false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return false, false
	}
	e := el.Value.(*cacheEntry)
	if now.After(e.expires) {
		c.order.Remove(el)
		delete(c.items, key)
		return false, false
	}
	c.order.MoveToFront(el)
	return e.safe, true
}

func (c *verdictCache) put(key string, safe bool, now time.Time) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value = &cacheEntry{key: key, safe: safe, expires: now.Add(c.ttl)}
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, safe: safe, expires: now.Add(c.ttl)})
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*cacheEntry).key)
	}
}
