package policysource_test

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

// A data file in a subdirectory is that document, as in `opa test DIR`
// and in a bundle: rules/data.json adds to data.rules.
func TestNestedDataFileIsItsDirectorysDocument(t *testing.T) {
	files := fstest.MapFS{"rules/data.json": {Data: []byte(`{"fs.read": "deny"}`)}}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(policies.FS, p)
		files[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := policysource.LoadFS(context.Background(), files, "builtin+rules")
	if err != nil {
		t.Fatal(err)
	}
	e := pdp.New(p, pdp.Components{Shell: shell.Parser{}, Workspace: paths.Resolver{}})
	d := decision(t, e)
	if d.Decision != api.Deny || d.Rule != "fs.read" {
		t.Fatalf("a read with rules/data.json {\"fs.read\": \"deny\"}: %s by %q, want deny by fs.read", d.Decision, d.Rule)
	}
}
