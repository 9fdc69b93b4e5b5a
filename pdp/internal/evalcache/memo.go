package evalcache

import (
	"sync"
	"sync/atomic"
)

// Memo remembers what evaluating an entry point gave per input document
// (its key: InputKey). Rego is deterministic, so under one policy
// revision the same input always gives the same outcome; a new policy
// gets a new memo, which drops every entry at once. The input holds
// every fact the policy sees, so all of them are part of the key.
//
// The memo is bounded in bytes, not entries: a key is the SHA-256 of the
// input's encoding (a 900 KB command costs 32 bytes of key, not 900 KB),
// and each entry counts what its size function says against the budget.
type Memo[V any] struct {
	limit  atomic.Int64 // bytes the whole memo may hold
	size   func(V) int64
	shards [memoShards]memoShard[V]
}

const memoShards = 16

// DefaultMemoBytes is the memo's budget when none is configured (64 MiB).
const DefaultMemoBytes = 64 << 20

// memoShard is a two-generation cache: lookups promote entries from the
// old generation; when the current one is over half the shard's budget
// it becomes the old one. That bounds the shard at its budget and keeps
// what is used.
type memoShard[V any] struct {
	mu           sync.Mutex
	current      map[string]V
	previous     map[string]V
	currentBytes int64
}

// NewMemo makes a memo of limit bytes (0 or less: DefaultMemoBytes);
// size says what an entry keeps alive besides its key.
func NewMemo[V any](limit int64, size func(V) int64) *Memo[V] {
	m := &Memo[V]{size: size}
	m.SetLimit(limit)
	for i := range m.shards {
		m.shards[i].current = make(map[string]V)
	}
	return m
}

// SetLimit changes the memo's budget in bytes; 0 or less is the default.
// It applies from the next insert on.
func (m *Memo[V]) SetLimit(limit int64) {
	if limit <= 0 {
		limit = DefaultMemoBytes
	}
	m.limit.Store(limit)
}

func (m *Memo[V]) shard(key string) *memoShard[V] {
	return &m.shards[key[0]%memoShards] // the key is a hash: its bytes are uniform
}

// Get returns what was put for key, if it is still held.
func (m *Memo[V]) Get(key string) (V, bool) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, ok := s.current[key]; ok {
		return out, true
	}
	if out, ok := s.previous[key]; ok {
		s.insert(key, out, m.entryBytes(out), m.generationBytes())
		return out, true
	}
	var zero V
	return zero, false
}

// Put remembers out for key.
func (m *Memo[V]) Put(key string, out V) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insert(key, out, m.entryBytes(out), m.generationBytes())
}

// generationBytes is what one generation of one shard may hold: two
// generations of every shard make the whole budget.
func (m *Memo[V]) generationBytes() int64 {
	return max(m.limit.Load()/(2*memoShards), 1)
}

// entryOverhead is what an entry costs besides what its size function
// counts: the map slot and the key.
const entryOverhead = int64(32+16) + 64

func (m *Memo[V]) entryBytes(out V) int64 { return entryOverhead + m.size(out) }

func (s *memoShard[V]) insert(key string, out V, size, budget int64) {
	if size > budget {
		return // larger than a generation: not worth keeping
	}
	if _, ok := s.current[key]; ok {
		return
	}
	if s.currentBytes+size > budget {
		s.previous, s.current, s.currentBytes = s.current, make(map[string]V), 0
	}
	s.current[key] = out
	s.currentBytes += size
}
