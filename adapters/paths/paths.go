// Package paths finds the file arguments of a tool call and resolves them
// against the session's workspace, so the policy can deny any call that
// reaches outside it.
package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SingleKeys are the argument names that hold one path.
var SingleKeys = []string{
	"path", "file_path", "filepath", "notebook_path", "dir", "directory",
	"source", "destination", "target", "src", "dst", "from", "to",
	"old_path", "new_path", "workdir", "working_directory",
}

// ListKeys are the argument names that hold a list of paths.
var ListKeys = []string{"paths", "file_paths", "files"}

// Resolver resolves path arguments against a workspace.
type Resolver struct {
	// FollowSymlinks resolves symbolic links of the parts of a path that
	// exist on this host, so a link inside the workspace that points
	// outside it counts as outside.
	FollowSymlinks bool
}

// Verdict lists every path argument of a call, resolved, and those that
// resolve outside the workspace.
type Verdict struct {
	Checked []string
	Outside []string
}

// Check resolves every path argument of args. Relative paths resolve
// against cwd, and cwd (when relative or empty) against the workspace. A
// path argument of the wrong type is an error: the caller rejects the call.
func (r Resolver) Check(args map[string]any, cwd, workspace string) (Verdict, error) {
	var v Verdict
	raw, err := pathArguments(args)
	if err != nil || len(raw) == 0 {
		return v, err
	}
	root, rootOK := r.root(workspace)
	base := cwd
	if base == "" {
		base = workspace
	} else if !filepath.IsAbs(base) {
		base = filepath.Join(workspace, base)
	}
	for _, p := range raw {
		resolved, ok := r.resolve(p, base)
		v.Checked = append(v.Checked, resolved)
		if !ok || !rootOK || !within(root, resolved) {
			v.Outside = append(v.Outside, p)
		}
	}
	return v, nil
}

// pathArguments collects the path arguments of a call, in a stable order.
func pathArguments(args map[string]any) ([]string, error) {
	var out []string
	for _, key := range SingleKeys {
		val, ok := args[key]
		if !ok || val == nil {
			continue
		}
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a string path, got %T", key, val)
		}
		out = append(out, s)
	}
	for _, key := range ListKeys {
		val, ok := args[key]
		if !ok || val == nil {
			continue
		}
		list, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a list of string paths, got %T", key, val)
		}
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("argument %q[%d] must be a string path, got %T", key, i, item)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// root is the cleaned (and, when configured, symlink-resolved) workspace.
// An empty or relative workspace confines nothing, so every path is outside.
func (r Resolver) root(workspace string) (string, bool) {
	if workspace == "" || !filepath.IsAbs(workspace) || strings.ContainsRune(workspace, 0) {
		return "", false
	}
	return r.real(filepath.Clean(workspace))
}

// resolve makes p absolute and clean. A path the host would expand or
// cannot hold (~user, NUL) does not resolve.
func (r Resolver) resolve(p, base string) (string, bool) {
	if strings.HasPrefix(p, "~") || strings.ContainsRune(p, 0) {
		return p, false
	}
	if !filepath.IsAbs(p) {
		if base == "" || !filepath.IsAbs(base) {
			return p, false
		}
		p = filepath.Join(base, p)
	}
	return r.real(filepath.Clean(p))
}

// real resolves the symbolic links of the longest existing prefix of p.
// A link that exists but cannot be resolved (dangling, a loop) is not
// followed blindly: the path does not resolve.
func (r Resolver) real(p string) (string, bool) {
	if !r.FollowSymlinks {
		return p, true
	}
	rest := ""
	for cur := p; ; {
		resolved, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(resolved, rest), true
		}
		if _, statErr := os.Lstat(cur); statErr == nil {
			return p, false
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, true
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is root or below it: /w/a is within /w, /wx is not.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}
