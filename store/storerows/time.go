package storerows

import (
	"fmt"
	"time"
)

// TimeText is how SQLite keeps a time: fixed-width (always nine fraction
// digits, always UTC), so stored times compare as text in time order:
// RFC3339Nano drops trailing zeros, and "…:15.3Z" sorted before "…:15Z".
const TimeText = "2006-01-02T15:04:05.000000000Z07:00"

// Time scans a time column of either backend: SQLite's text in TimeText
// or PostgreSQL's timestamptz, read back in UTC. NULL leaves it invalid.
type Time struct {
	T     time.Time
	Valid bool
}

// Scan implements sql.Scanner. Text that is not a time reads as the zero
// time, as it always has.
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = Time{}
	case time.Time:
		*t = Time{T: v.UTC(), Valid: true}
	case string:
		*t = Time{T: ParseTime(v), Valid: true}
	case []byte:
		*t = Time{T: ParseTime(string(v)), Valid: true}
	default:
		return fmt.Errorf("a time column holds a %T", src)
	}
	return nil
}

// ParseTime reads a time kept as TimeText; anything else is the zero time.
func ParseTime(s string) time.Time {
	t, _ := time.Parse(TimeText, s)
	return t
}
