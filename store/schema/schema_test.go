package schema_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolperm/pdp/store/schema"
)

func TestMigrate(t *testing.T) {
	migrations := []string{1: "one", 2: "two", 3: "three"}
	broken := errors.New("syntax error")
	cases := []struct {
		name    string
		current int
		failAt  int
		applied string
		wantErr string
	}{
		{name: "empty database", current: 0, applied: "[1 2 3]"},
		{name: "part way", current: 2, applied: "[3]"},
		{name: "up to date", current: 3, applied: "[]"},
		{name: "newer database", current: 4, applied: "[]", wantErr: "database schema version 4 is newer than this binary knows (3)"},
		{name: "a failing migration stops the rest", current: 0, failAt: 2, applied: "[1]", wantErr: broken.Error()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			applied := []int{}
			err := schema.Migrate(c.current, migrations, func(v int, sql string) error {
				if sql != migrations[v] {
					t.Fatalf("version %d ran %q", v, sql)
				}
				if v == c.failAt {
					return broken
				}
				applied = append(applied, v)
				return nil
			})
			if fmt.Sprint(applied) != c.applied {
				t.Fatalf("applied %v, want %s", applied, c.applied)
			}
			if (err == nil) != (c.wantErr == "") || err != nil && err.Error() != c.wantErr {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
		})
	}
}
