package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storetest"
)

// TestOldTimesAreRewrittenInTimeOrder: rows written before times were
// fixed-width ("…:15Z", "…:15.3Z") sort in time order after migration 4,
// and ?since= finds them.
func TestOldTimesAreRewrittenInTimeOrder(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, Options{})
	old := []string{"2026-11-29T10:00:14.999Z", "2026-11-29T10:00:15Z", "2026-11-29T10:00:15.3Z", "2026-11-29T10:00:16.123456789Z"}
	for i, at := range old {
		if _, err := s.write.ExecContext(ctx, `INSERT INTO decisions (id, time, session_id, decision, source, rule, reason) VALUES (?,?,?,?,?,?,?)`,
			"d"+string(rune('a'+i)), at, "s", "allow", "level", "fs.read", "r"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.write.ExecContext(ctx, migrations[4]); err != nil {
		t.Fatalf("migration 4 again: %v", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT time FROM decisions ORDER BY time`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	rows.Close()
	want := []string{"2026-11-29T10:00:14.999000000Z", "2026-11-29T10:00:15.000000000Z", "2026-11-29T10:00:15.300000000Z", "2026-11-29T10:00:16.123456789Z"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("times after migration: %v, want %v", got, want)
		}
	}
	since, _ := time.Parse(time.RFC3339, "2026-11-29T10:00:15Z")
	list, err := s.Decisions(ctx, pdp.DecisionFilter{Since: since, Limit: 10})
	if err != nil || len(list) != 3 {
		t.Fatalf("since 10:00:15Z: %d decisions, %v", len(list), err)
	}
	if !list[0].Time.Equal(time.Date(2026, 11, 29, 10, 0, 16, 123456789, time.UTC)) {
		t.Fatalf("read back %v", list[0].Time)
	}
}

// TestOutcomesRecordedAsAnswersMoveApart: migration 10 moves the
// outcomes earlier versions recorded as answers to the outcome columns.
func TestOutcomesRecordedAsAnswersMoveApart(t *testing.T) {
	s := openTemp(t, Options{})
	storetest.OutcomesMoved(t, s, func(ctx context.Context, sql string) error {
		_, err := s.write.ExecContext(ctx, sql)
		return err
	})
}
