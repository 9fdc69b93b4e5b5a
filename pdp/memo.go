package pdp

import (
	"crypto/sha256"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// memo remembers the outcome of evaluating the answer entry point per
// input document. Rego is deterministic, so under one policy revision the
// same input always gives the same outcome; a new policy gets a new memo,
// which drops every entry at once. The input holds every fact the policy
// sees (session level, mode, rules, grants, shell facts, the danger
// verdict, the parent's decision), so all of them are part of the key.
//
// The memo is bounded in bytes, not entries: a key is the SHA-256 of the
// input's encoding (a 900 KB command costs 32 bytes of key, not 900 KB),
// and each entry counts its key, its outcome's strings and a fixed
// overhead against the budget.
type memo struct {
	limit  atomic.Int64 // bytes the whole memo may hold
	shards [memoShards]memoShard
}

const memoShards = 16

// DefaultMemoBytes is the memo's budget when none is configured (64 MiB).
const DefaultMemoBytes = 64 << 20

// memoShard is a two-generation cache: lookups promote entries from the
// old generation; when the current one is over half the shard's budget
// it becomes the old one. That bounds the shard at its budget and keeps
// what is used.
type memoShard struct {
	mu           sync.Mutex
	current      map[string]outcome
	previous     map[string]outcome
	currentBytes int64
}

func newMemo(limit int64) *memo {
	m := &memo{}
	m.setLimit(limit)
	for i := range m.shards {
		m.shards[i].current = make(map[string]outcome)
	}
	return m
}

// setLimit changes the memo's budget in bytes; 0 or less is the default.
// It applies from the next insert on.
func (m *memo) setLimit(limit int64) {
	if limit <= 0 {
		limit = DefaultMemoBytes
	}
	m.limit.Store(limit)
}

func (m *memo) shard(key string) *memoShard {
	return &m.shards[key[0]%memoShards] // the key is a hash: its bytes are uniform
}

func (m *memo) get(key string) (outcome, bool) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, ok := s.current[key]; ok {
		return out, true
	}
	if out, ok := s.previous[key]; ok {
		s.insert(key, out, m.generationBytes())
		return out, true
	}
	return outcome{}, false
}

func (m *memo) put(key string, out outcome) {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insert(key, out, m.generationBytes())
}

// generationBytes is what one generation of one shard may hold: two
// generations of every shard make the whole budget.
func (m *memo) generationBytes() int64 {
	return max(m.limit.Load()/(2*memoShards), 1)
}

func (s *memoShard) insert(key string, out outcome, budget int64) {
	size := entryBytes(out)
	if size > budget {
		return // larger than a generation: not worth keeping
	}
	if _, ok := s.current[key]; ok {
		return
	}
	if s.currentBytes+size > budget {
		s.previous, s.current, s.currentBytes = s.current, make(map[string]outcome), 0
	}
	s.current[key] = out
	s.currentBytes += size
}

// entryOverhead is what an entry costs besides its strings: the map slot,
// the key, the outcome's struct and its pointers' targets.
const entryOverhead = int64(sha256.Size+16+unsafe.Sizeof(outcome{})) + 64

// entryBytes estimates what an entry keeps alive.
func entryBytes(out outcome) int64 {
	d := out.decision
	n := entryOverhead + int64(len(d.DecisionID)+len(d.Decision)+len(d.Source)+len(d.Rule)+len(d.Reason)+len(d.Revision))
	if d.Capability != nil {
		n += 16 + int64(len(*d.Capability))
	}
	if d.Fingerprint != nil {
		n += 16 + int64(len(*d.Fingerprint))
	}
	if d.Danger != nil {
		n += int64(unsafe.Sizeof(*d.Danger)) + int64(len(d.Danger.Verdict)+len(d.Danger.By))
	}
	for _, step := range d.Trace {
		n += int64(unsafe.Sizeof(step)) + int64(len(step.Step)+len(step.Outcome))
	}
	for k, match := range d.Matches {
		n += 64 + int64(len(k)+len(match.Pattern)+len(match.Action))
	}
	for _, need := range out.needs {
		n += 16 + int64(len(need))
	}
	return n
}

// inputKey is the SHA-256 of an input document's deterministic encoding
// (map keys sorted, a type tag and length for each value, so different
// documents never share an encoding). It handles the types the engine
// builds inputs from.
func inputKey(v any) string {
	sum := sha256.Sum256(appendKey(make([]byte, 0, 512), v))
	return string(sum[:])
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
