package evalcache

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// flatCache is topdown's virtual-document cache with one hash table per
// frame instead of a tree of hash maps: topdown's own allocates a node and
// often a map for every step of every reference it stores (rules and
// function calls with their arguments), about a tenth of a cold
// evaluation's allocations. Here a frame keeps its references in one
// slice of terms and its entries in another, both grown by appending, and
// indexes them by a hash of the whole reference.
//
// It answers exactly as topdown.NewVirtualCache does (TestFlatCacheAnswersAsTopdowns):
// Get and Put see the top frame only; Push adds an empty frame, Pop drops
// the top one with all it holds; a nil value marks the reference
// undefined, and a later value does not clear that mark.
type flatCache struct {
	frames []cacheFrame
}

type cacheFrame struct {
	index   map[uint64]int32 // hash → the newest entry with it
	entries []cacheEntry
	terms   []*ast.Term // the entries' references, one after the other
}

type cacheEntry struct {
	start, end int32 // the reference: terms[start:end]
	next       int32 // the previous entry with the same hash, or -1
	value      *ast.Term
	undefined  bool
}

var _ topdown.VirtualCache = (*flatCache)(nil)

func newFlatCache() *flatCache {
	c := &flatCache{frames: make([]cacheFrame, 1, 4)}
	return c
}

func (c *flatCache) Push() { c.frames = append(c.frames, cacheFrame{}) }

func (c *flatCache) Pop() {
	top := len(c.frames) - 1
	c.frames[top] = cacheFrame{}
	c.frames = c.frames[:top]
}

func (c *flatCache) top() *cacheFrame { return &c.frames[len(c.frames)-1] }

func (c *flatCache) Get(ref ast.Ref) (*ast.Term, bool) {
	f := c.top()
	e := f.find(ref, hashRef(ref))
	if e == nil {
		return nil, false
	}
	if e.undefined {
		return nil, true
	}
	return e.value, false
}

func (c *flatCache) Put(ref ast.Ref, value *ast.Term) {
	f := c.top()
	h := hashRef(ref)
	e := f.find(ref, h)
	if e == nil {
		if f.index == nil {
			// Sized for one evaluation of the built-in policy (27–61
			// entries, 83–163 terms on the recorded documents): growing
			// by doubling from nothing allocated twice the bytes.
			f.index = make(map[uint64]int32, 48)
			f.entries = make([]cacheEntry, 0, 48)
			f.terms = make([]*ast.Term, 0, 128)
		}
		prev, ok := f.index[h]
		if !ok {
			prev = -1
		}
		start := int32(len(f.terms))
		f.terms = append(f.terms, ref...)
		f.entries = append(f.entries, cacheEntry{start: start, end: int32(len(f.terms)), next: prev})
		f.index[h] = int32(len(f.entries) - 1)
		e = &f.entries[len(f.entries)-1]
	}
	if value != nil {
		e.value = value
	} else {
		e.undefined = true
	}
}

// Keys lists the top frame's references that have a value.
func (c *flatCache) Keys() []ast.Ref {
	f := c.top()
	var keys []ast.Ref
	for _, e := range f.entries {
		if e.value != nil {
			keys = append(keys, ast.Ref(f.terms[e.start:e.end:e.end]).Copy())
		}
	}
	return keys
}

func (f *cacheFrame) find(ref ast.Ref, h uint64) *cacheEntry {
	if f.index == nil {
		return nil
	}
	i, ok := f.index[h]
	if !ok {
		return nil
	}
	for i >= 0 {
		e := &f.entries[i]
		if sameRef(f.terms[e.start:e.end], ref) {
			return e
		}
		i = e.next
	}
	return nil
}

func sameRef(a []*ast.Term, b ast.Ref) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// hashRef mixes the terms' hashes in order (FNV-1a over each hash).
func hashRef(ref ast.Ref) uint64 {
	h := uint64(14695981039346656037)
	for _, t := range ref {
		h ^= uint64(t.Hash())
		h *= 1099511628211
	}
	return h
}
