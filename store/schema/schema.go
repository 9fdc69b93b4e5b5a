// Package schema brings a storage backend's database up to the schema
// this binary knows. The tables both backends declare are written here
// once, with each dialect's words for the column types (Types); each
// backend keeps its own list of migrations, as it shipped them. The
// order, the once-each, the transaction of each and the refusal of a
// newer database are decided here for both (Apply).
package schema

import "fmt"

// Migrate applies the migrations after current, in order, each by
// apply, which runs it and records its version in one transaction;
// migrations[v] is version v (index 0 is unused). A database newer than
// the migrations is refused.
func Migrate(current int, migrations []string, apply func(version int, sql string) error) error {
	if current >= len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d)", current, len(migrations)-1)
	}
	for v := current + 1; v < len(migrations); v++ {
		if err := apply(v, migrations[v]); err != nil {
			return err
		}
	}
	return nil
}
