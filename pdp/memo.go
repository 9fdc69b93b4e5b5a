package pdp

import (
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"sync"
)

// memo remembers the outcome of evaluating the answer entry point per
// input document. Rego is deterministic, so under one policy revision the
// same input always gives the same outcome; a new policy gets a new memo,
// which drops every entry at once. The input holds every fact the policy
// sees (session level, mode, rules, grants, shell facts, the danger
// verdict, the parent's decision), so all of them are part of the key.
type memo struct {
	seed   maphash.Seed
	shards [memoShards]memoShard
}

const memoShards = 16

// memoShard is a two-generation cache: lookups promote entries from the
// old generation; when the current one is full it becomes the old one.
// That bounds memory at twice the shard size and keeps what is used.
type memoShard struct {
	mu       sync.Mutex
	max      int
	current  map[string]outcome
	previous map[string]outcome
}

func newMemo(size int) *memo {
	m := &memo{seed: maphash.MakeSeed()}
	per := max(size/memoShards, 1)
	for i := range m.shards {
		m.shards[i] = memoShard{max: per, current: make(map[string]outcome)}
	}
	return m
}

func (m *memo) shard(key string) *memoShard {
	return &m.shards[maphash.String(m.seed, key)%memoShards]
}

func (m *memo) get(key string) (outcome, bool) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, ok := s.current[key]; ok {
		return out, true
	}
	if out, ok := s.previous[key]; ok {
		s.insert(key, out)
		return out, true
	}
	return outcome{}, false
}

func (m *memo) put(key string, out outcome) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insert(key, out)
}

func (s *memoShard) insert(key string, out outcome) {
	if len(s.current) >= s.max {
		s.previous, s.current = s.current, make(map[string]outcome, s.max)
	}
	s.current[key] = out
}

// inputKey encodes an input document deterministically (map keys sorted),
// with a type tag and length for each value, so different documents
// never share a key. It handles the types the engine builds inputs from.
func inputKey(v any) string {
	b := make([]byte, 0, 512)
	return string(appendKey(b, v))
}

func appendKey(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if v {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		return append(b, v...)
	case int:
		b = append(b, 'i')
		b = strconv.AppendInt(b, int64(v), 10)
		return append(b, ';')
	case float64:
		b = append(b, 'd')
		b = strconv.AppendUint(b, math.Float64bits(v), 16)
		return append(b, ';')
	case []any:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		for _, item := range v {
			b = appendKey(b, item)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		for _, k := range keys {
			b = appendKey(b, k)
			b = appendKey(b, v[k])
		}
		return b
	}
	// A type the engine does not build inputs from: never shared.
	panic("pdp: inputKey: unsupported type in input document")
}
