package pdp

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/open-policy-agent/opa/v1/ast"
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

// inputKey is the SHA-256 of an input document's deterministic encoding:
// object keys in order, a type tag and a length for each value, so
// different documents never share an encoding. It reads the ast.Value the
// policy evaluates, so the document is converted once; a value of a kind
// the engine never builds is an error (and so a deny), never a shared key.
func inputKey(v ast.Value) (string, error) {
	var buf [4096]byte // most documents encode in this, on the stack
	b, err := appendKey(buf[:0], v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), nil
}

func appendKey(b []byte, v ast.Value) ([]byte, error) {
	switch v := v.(type) {
	case ast.Null:
		return append(b, 'n'), nil
	case ast.Boolean:
		if v {
			return append(b, 't'), nil
		}
		return append(b, 'f'), nil
	case ast.String:
		return appendString(append(b, 's'), string(v)), nil
	case ast.Number:
		return appendString(append(b, 'd'), string(v)), nil
	case *ast.Array:
		b = strconv.AppendInt(append(b, '['), int64(v.Len()), 10)
		b = append(b, ':')
		var err error
		for i := 0; i < v.Len() && err == nil; i++ {
			b, err = appendKey(b, v.Elem(i).Value)
		}
		return b, err
	case ast.Object:
		b = strconv.AppendInt(append(b, '{'), int64(v.Len()), 10)
		b = append(b, ':')
		var err error
		for _, k := range v.Keys() { // sorted
			if b, err = appendKey(b, k.Value); err != nil {
				return b, err
			}
			if b, err = appendKey(b, v.Get(k).Value); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, fmt.Errorf("input document holds a %T, which the engine never builds", v)
}

func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}
