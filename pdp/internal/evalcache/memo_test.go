package evalcache

import (
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

// key is InputKey of a Go document, as the pipeline builds it.
func key(t testing.TB, doc any) string {
	t.Helper()
	v, err := ast.InterfaceToValue(doc)
	if err != nil {
		t.Fatal(err)
	}
	k, err := InputKey(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestMemoKeysDoNotKeepTheInput(t *testing.T) {
	huge := strings.Repeat("a|", 450_000)
	k1 := key(t, map[string]any{"command": huge, "n": 1})
	k2 := key(t, map[string]any{"command": huge, "n": 2})
	if len(k1) != 32 || len(k2) != 32 {
		t.Fatalf("key sizes %d, %d: a key must not grow with its input", len(k1), len(k2))
	}
	if k1 == k2 {
		t.Fatal("different inputs share a key")
	}
	// Type tags and lengths keep look-alike documents apart.
	for _, pair := range [][2]any{
		{map[string]any{"a": "1"}, map[string]any{"a": 1}},
		{[]any{"ab", "c"}, []any{"a", "bc"}},
		{map[string]any{"a": nil}, map[string]any{"a": false}},
	} {
		if key(t, pair[0]) == key(t, pair[1]) {
			t.Errorf("%v and %v share a key", pair[0], pair[1])
		}
	}
}

// stringBytes is the size of a remembered string.
func stringBytes(s string) int64 { return int64(len(s)) }

func TestMemoIsBoundedInBytes(t *testing.T) {
	cases := []struct {
		name   string
		limit  int64
		reason int // bytes of each outcome's reason
	}{
		{"many small answers", 256 << 10, 40},
		{"answers that repeat a long command", 1 << 20, 200 << 10},
		{"answers larger than a shard's share", 64 << 10, 100 << 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemo(tc.limit, stringBytes)
			n := 5000
			if tc.reason > 1000 {
				n = 300
			}
			for i := 0; i < n; i++ {
				reason := fmt.Sprintf("%d %s", i, strings.Repeat("r", tc.reason))
				m.Put(key(t, map[string]any{"i": i}), reason)
			}
			var held int64
			entries := 0
			for i := range m.shards {
				for _, gen := range []map[string]string{m.shards[i].current, m.shards[i].previous} {
					for _, out := range gen {
						held += m.entryBytes(out)
						entries++
					}
				}
			}
			if held > tc.limit {
				t.Fatalf("the memo holds %d bytes in %d entries, over its %d-byte budget", held, entries, tc.limit)
			}
			// What was put last is still there (when it fits at all).
			last := key(t, map[string]any{"i": n - 1})
			if _, ok := m.Get(last); !ok && m.entryBytes(strings.Repeat("r", tc.reason)) <= m.generationBytes() {
				t.Fatal("the newest answer was not kept")
			}
		})
	}
}

func TestMemoLimitChangesWithTheEngine(t *testing.T) {
	m := NewMemo(0, stringBytes)
	if m.limit.Load() != DefaultMemoBytes {
		t.Fatalf("default limit %d", m.limit.Load())
	}
	m.SetLimit(1 << 20)
	if m.generationBytes() != (1<<20)/(2*memoShards) {
		t.Fatalf("generation budget %d", m.generationBytes())
	}
}

func TestMemoKeyOfAnUnexpectedValueIsAnError(t *testing.T) {
	doc := ast.NewObject(ast.Item(ast.StringTerm("s"), ast.SetTerm(ast.StringTerm("x"))))
	if _, err := InputKey(doc); err == nil {
		t.Fatal("a set in the input got a key; the engine never builds one, so it must be an error")
	}
}
