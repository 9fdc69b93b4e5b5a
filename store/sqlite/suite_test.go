package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/store/sqlite"
	"github.com/toolperm/pdp/store/storetest"
)

// TestStoreSuite runs the suite every storage backend passes.
func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
