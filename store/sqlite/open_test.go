package sqlite

import (
	"path/filepath"
	"testing"
)

// openTemp opens a new store in a file of the test's own, closed when
// the test ends.
func openTemp(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
