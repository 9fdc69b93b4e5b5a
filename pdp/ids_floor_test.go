package pdp

import (
	"testing"
	"time"
)

// TestDecisionIDFloor: ids made at or after t sort at or above the
// floor of t, ids made before it below.
func TestDecisionIDFloor(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 15, 300, time.UTC)
	floor := DecisionIDFloor(at)
	for _, c := range []struct {
		name  string
		made  time.Time
		above bool
	}{
		{"same nanosecond", at, true},
		{"a nanosecond later", at.Add(1), true},
		{"a year later", at.AddDate(1, 0, 0), true},
		{"a nanosecond earlier", at.Add(-1), false},
		{"a year earlier", at.AddDate(-1, 0, 0), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if id := NewDecisionID(c.made); (id >= floor) != c.above {
				t.Errorf("id %s, floor %s: above = %v, want %v", id, floor, id >= floor, c.above)
			}
		})
	}
	if DecisionIDFloor(time.Unix(-1, 0)) != "" {
		t.Error("a time before 1970 has a floor")
	}
	if f := DecisionIDFloor(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); f <= NewDecisionID(time.Now()) {
		t.Errorf("the year 3000's floor %s is below today's ids", f)
	}
}
