package policysource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/toolperm/pdp/pdp"
)

// LoadFS compiles the policy files of fsys: every .rego file except tests,
// and .json data files, each loaded under the path of its directory as
// OPA's loader and bundles do (rules/data.json is data.rules). The
// revision is a hash of their content.
func LoadFS(ctx context.Context, fsys fs.FS, source string) (*pdp.Policy, error) {
	files, err := policyFiles(fsys, source)
	if err != nil {
		return nil, err
	}
	notPolicy := func(p string, info fs.FileInfo, _ int) bool { return !info.IsDir() && !isPolicyFile(p) }
	loaded, err := loader.NewFileLoader().WithFS(fsys).Filtered([]string{"."}, notPolicy)
	if err != nil {
		return nil, fmt.Errorf("loading policy %s: %w", source, err)
	}
	revision, err := contentRevision(fsys, files)
	if err != nil {
		return nil, err
	}
	p, err := pdp.Compile(ctx, loaded.ParsedModules(), loaded.Documents, source, revision)
	if problems := pdp.DataProblems(err); problems != nil {
		nameDataFiles(fsys, files, problems)
		return nil, fmt.Errorf("policy %s: %w", source, &pdp.DataError{Problems: problems})
	}
	return p, err
}

// nameDataFiles says, for each problem of the policy's data, which data
// file holds the value: the file under whose directory's path the
// problem's document is, and in which it is written.
func nameDataFiles(fsys fs.FS, files []string, problems []pdp.DataProblem) {
	for _, f := range files {
		if path.Ext(f) != ".json" {
			continue
		}
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			continue
		}
		var doc any
		if json.Unmarshal(raw, &doc) != nil {
			continue
		}
		var prefix []string
		if dir := path.Dir(f); dir != "." {
			prefix = strings.Split(dir, "/")
		}
		for i := range problems {
			p := &problems[i]
			if p.File == "" && len(p.Path) >= len(prefix) && slices.Equal(p.Path[:len(prefix)], prefix) && holds(doc, p.Path[len(prefix):]) {
				p.File = f
			}
		}
	}
}

// holds: doc has a value at path (object keys, list indices).
func holds(doc any, path []string) bool {
	for _, k := range path {
		switch v := doc.(type) {
		case map[string]any:
			next, ok := v[k]
			if !ok {
				return false
			}
			doc = next
		case []any:
			i, ok := pdp.ListIndex(k)
			if !ok || i >= len(v) {
				return false
			}
			doc = v[i]
		default:
			return false
		}
	}
	return true
}

// ContentRevision is the revision LoadFS gives the policy files of fsys,
// computed without compiling them: a watcher compares it to tell a
// changed policy from an unchanged one.
func ContentRevision(fsys fs.FS, source string) (string, error) {
	files, err := policyFiles(fsys, source)
	if err != nil {
		return "", err
	}
	return contentRevision(fsys, files)
}

func policyFiles(fsys fs.FS, source string) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isPolicyFile(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading policy %s: %w", source, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("policy %s has no .rego files", source)
	}
	sort.Strings(files)
	return files, nil
}

// LoadDir compiles the policy in a directory on disk.
func LoadDir(ctx context.Context, dir string) (*pdp.Policy, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("policy directory: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("policy %s is not a directory", dir)
	}
	return LoadFS(ctx, os.DirFS(dir), dir)
}

func isPolicyFile(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(base, "."):
		return false
	case strings.HasSuffix(base, "_test.rego"):
		return false
	case strings.HasSuffix(base, ".rego"), strings.HasSuffix(base, ".json"):
		return true
	}
	return false
}

// contentRevision hashes the names and content of the policy files, so
// the same policy always has the same revision wherever it is loaded.
func contentRevision(fsys fs.FS, files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", f, err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16], nil
}
