package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// examined counts the rows the condition "examined(rowid)" sees: the rows
// a list query reads past its index range.
var examined atomic.Int64

var registerExamined = sync.OnceFunc(func() {
	sql.Register("sqlite3_examined", &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		return c.RegisterFunc("examined", func(int64) int64 { examined.Add(1); return 1 }, false)
	}})
})

// listFilters are the filter combinations the API and the console offer:
// each of session, decision and source set or not, with and without
// since and before.
func listFilters(session, source, decision, before string, since time.Time) map[string]pdp.DecisionFilter {
	out := map[string]pdp.DecisionFilter{}
	for mask := 0; mask < 32; mask++ {
		var f pdp.DecisionFilter
		var name []string
		if mask&1 != 0 {
			f.SessionID, name = session, append(name, "session")
		}
		if mask&2 != 0 {
			f.Decision, name = decision, append(name, "decision")
		}
		if mask&4 != 0 {
			f.Source, name = source, append(name, "source")
		}
		if mask&8 != 0 {
			f.Since, name = since, append(name, "since")
		}
		if mask&16 != 0 {
			f.Before, name = before, append(name, "before")
		}
		f.Limit = 50
		if len(name) == 0 {
			name = []string{"none"}
		}
		out[strings.Join(name, "+")] = f
	}
	return out
}

// writeTrail records n decisions through the store, times spread over the
// hour before end: sessions s0…s19, sources level, rule and grant (grant
// only ever allows), every decision.
func writeTrail(t testing.TB, s *Store, n int, end time.Time) {
	t.Helper()
	sources := []string{"level", "rule", "grant"}
	decisions := []string{api.Allow, api.Ask, api.Deny}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 64 {
				at := end.Add(-time.Hour + time.Duration(i)*time.Hour/time.Duration(n))
				src, dec := sources[i%3], decisions[(i/3)%3]
				if src == "grant" {
					dec = api.Allow
				}
				ev := pdp.AuditRecord{Time: at, SessionID: fmt.Sprintf("s%d", i%20),
					Request:  api.DecideRequest{SessionID: fmt.Sprintf("s%d", i%20), Tool: "shell", Args: map[string]any{"command": "git status"}},
					Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: dec, Source: src, Rule: "r", Reason: "because"}}
				if err := s.Record(context.Background(), ev); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// rowsExamined runs f's list query with the counting condition and
// returns how many rows it read and how many it returned.
func rowsExamined(t *testing.T, db *sql.DB, f pdp.DecisionFilter) (read, returned int64) {
	t.Helper()
	q, args := decisionsQuery(f, "examined(decisions.rowid)")
	examined.Store(0)
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	for rows.Next() {
		returned++
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	return examined.Load(), returned
}

// TestListQueriesReadOnlyTheirPage: every filter combination reads at
// most its page (three pages for a source without a decision), and a
// query that matches nothing reads nothing, on a trail and on one twice
// as big. Rows are counted, not timed.
func TestListQueriesReadOnlyTheirPage(t *testing.T) {
	registerExamined()
	path := filepath.Join(t.TempDir(), "pdp.db")
	s, err := Open(t.Context(), path, Options{Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite3_examined", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	end := time.Now().Add(-time.Minute)
	const n = 3000
	writeTrail(t, s, n, end)
	oldest := pdp.DecisionIDFloor(end.Add(-2 * time.Hour))
	cases := []struct {
		name          string
		filters       map[string]pdp.DecisionFilter
		wantNone      bool
		before, since bool
	}{
		{name: "matching", filters: listFilters("s3", "rule", api.Ask, pdp.DecisionIDFloor(end.Add(-10*time.Minute)), end.Add(-30*time.Minute))},
		{name: "unknown session", filters: listFilters("nobody", "rule", api.Ask, "", end.Add(-30*time.Minute)), wantNone: true},
		{name: "grant never denies", filters: listFilters("s3", "grant", api.Deny, "", end.Add(-30*time.Minute)), wantNone: true},
		{name: "since the future", filters: listFilters("s3", "rule", api.Ask, "", end.Add(time.Hour)), wantNone: true},
		{name: "before the oldest", filters: listFilters("s3", "rule", api.Ask, oldest, end.Add(-30*time.Minute)), wantNone: true},
	}
	measure := func() map[string][2]int64 {
		out := map[string][2]int64{}
		for _, c := range cases {
			for name, f := range c.filters {
				read, got := rowsExamined(t, db, f)
				out[c.name+"/"+name] = [2]int64{read, got}
			}
		}
		return out
	}
	small := measure()
	writeTrail(t, s, n, end.Add(-time.Hour))
	big := measure()
	for _, c := range cases {
		for name, f := range c.filters {
			key := c.name + "/" + name
			t.Run(key, func(t *testing.T) {
				read, got := big[key][0], big[key][1]
				limit := int64(f.Limit)
				if f.Source != "" && f.Decision == "" {
					limit *= 3
				}
				if read > limit {
					t.Errorf("read %d rows for a page of %d", read, f.Limit)
				}
				hasNone := strings.Contains(c.name, "unknown") || (c.name == "grant never denies" && strings.Contains(name, "decision") && strings.Contains(name, "source")) ||
					(c.name == "since the future" && strings.Contains(name, "since")) || (c.name == "before the oldest" && strings.Contains(name, "before"))
				if c.name == "unknown session" && !strings.Contains(name, "session") {
					hasNone = false
				}
				if hasNone {
					if got != 0 || read != 0 {
						t.Errorf("matches nothing, but read %d rows and returned %d", read, got)
					}
				}
				if hasNone && small[key] != big[key] {
					t.Errorf("a trail twice as big: read %v, was %v", big[key], small[key])
				}
			})
		}
	}
}

// TestListQueryPlansUseIndexes: EXPLAIN QUERY PLAN names an index for
// every read of the table and never sorts an arm of the query.
func TestListQueryPlansUseIndexes(t *testing.T) {
	s := openTemp(t, Options{})
	for name, f := range listFilters("s1", "rule", api.Ask, "18ecce8f3f077e501a2eab61", time.Now().Add(-time.Hour)) {
		t.Run(name, func(t *testing.T) {
			q, args := decisionsQuery(f, "")
			rows, err := s.read.Query("EXPLAIN QUERY PLAN "+q, args...)
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
			for _, line := range plan {
				if strings.Contains(line, "decisions") && !strings.Contains(line, "USING INDEX") && !strings.Contains(line, "USING COVERING INDEX") {
					t.Errorf("reads the table without an index: %q in %q", line, plan)
				}
				if strings.HasPrefix(line, "SEARCH decisions") || strings.HasPrefix(line, "SCAN decisions") {
					for _, cond := range []struct {
						set  bool
						term string
					}{{f.SessionID != "", "session_id=?"}, {f.Source != "", "source=?"}, {f.Decision != "" || f.Source != "", "decision=?"}} {
						if cond.set && !strings.Contains(line, cond.term) {
							t.Errorf("the index does not hold %s: %q", cond.term, line)
						}
					}
				}
				if strings.Contains(line, "decisions_time") {
					t.Errorf("walks the time index: %q", plan)
				}
				if strings.Contains(line, "TEMP B-TREE") && (f.Decision != "" || f.Source == "") {
					t.Errorf("sorts: %q", plan)
				}
			}
			t.Logf("%s: %q", name, plan)
		})
	}
}
