// Package policytest writes the built-in policy, with its data changed,
// as a directory or a bundle, for tests of what a policy change does.
package policytest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/policies"
)

// Files are the built-in policy's files with data.json changed by change.
func Files(t testing.TB, change func(data map[string]any)) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := policies.FS.ReadFile(p)
		if err != nil {
			return err
		}
		if p == "data.json" {
			var data map[string]any
			if err := json.Unmarshal(b, &data); err != nil {
				return err
			}
			change(data)
			if b, err = json.Marshal(data); err != nil {
				return err
			}
		}
		out[p] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Dir writes the changed policy to a new directory.
func Dir(t testing.TB, change func(data map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range Files(t, change) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Bundle packs the changed policy as a bundle (tar.gz).
func Bundle(t testing.TB, change func(data map[string]any)) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, b := range Files(t, change) {
		if err := tw.WriteHeader(&tar.Header{Name: "/" + name, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Rules changes data.rules only.
func Rules(change func(rules map[string]any)) func(data map[string]any) {
	return func(data map[string]any) { change(data["rules"].(map[string]any)) }
}
