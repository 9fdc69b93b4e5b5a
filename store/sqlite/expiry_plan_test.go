package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPendingAsksUseTheirIndex: the expiry sweep reads the unanswered
// asks through their own index, in its order, not along every ask of the
// trail. (The query is sqlstore.Store.ExpireAsks'.)
func TestPendingAsksUseTheirIndex(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.read.QueryContext(t.Context(), `EXPLAIN QUERY PLAN SELECT id FROM decisions `+dialect.PendingIndex+` WHERE decision = 'ask' AND answer IS NULL AND time < ? ORDER BY time, id LIMIT ?`,
		formatTime(time.Now()), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "USING INDEX decisions_pending") || strings.Contains(got, "TEMP B-TREE") {
		t.Fatalf("plan of the expiry read: %s", got)
	}
}
