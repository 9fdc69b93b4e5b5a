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

// SingleKeys are the argument names that hold one path (matched without
// regard to case).
var SingleKeys = []string{
	"path", "file_path", "filepath", "file", "filename", "notebook_path", "dir", "directory",
	"source", "destination", "target", "src", "dst", "from", "to",
	"old_path", "new_path", "workdir", "working_directory", "cwd",
}

// ListKeys are the argument names that hold a list of paths.
var ListKeys = []string{"paths", "file_paths", "files", "filenames"}

// GlobKeys hold file globs: their fixed part (up to the first wildcard)
// must stay in the workspace.
var GlobKeys = []string{"glob"}

// globTools are the tools whose "pattern" argument is a file glob (for
// grep tools it is a regular expression, not a path).
var globTools = map[string]bool{"Glob": true, "glob_search": true, "fs.glob": true}

// Resolver resolves path arguments against a workspace.
type Resolver struct {
	// FollowSymlinks resolves symbolic links of the parts of a path that
	// exist on this host, so a link inside the workspace that points
	// outside it counts as outside.
	FollowSymlinks bool
}

// Verdict lists every path of a call, resolved, and those that resolve
// outside the workspace.
type Verdict struct {
	Checked []string
	Outside []string
}

// Call is what the resolver needs of a tool call.
type Call struct {
	Tool       string
	Capability string
	Args       map[string]any
	// Cwd is where the tool runs; it is checked too, and relative paths
	// resolve against it (against the workspace when it is empty).
	Cwd string
}

// Check resolves the call's working directory and every path argument.
// A session without an absolute workspace confines nothing, so every path
// is outside. A path argument of the wrong type is an error: the caller
// rejects the call.
func (r Resolver) Check(c Call, workspace string) (Verdict, error) {
	var v Verdict
	raw, err := pathArguments(c)
	if err != nil {
		return v, err
	}
	if c.Cwd != "" {
		raw = append(raw, c.Cwd)
	}
	if len(raw) == 0 {
		return v, nil
	}
	root, rootOK := r.root(workspace)
	base := c.Cwd
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

// pathArguments collects the path arguments of a call in a stable order:
// single paths, lists, then the fixed parts of globs.
func pathArguments(c Call) ([]string, error) {
	byKey := make(map[string]any, len(c.Args))
	for k, v := range c.Args {
		if v != nil {
			byKey[strings.ToLower(k)] = v
		}
	}
	var out []string
	str := func(key string, val any) (string, error) {
		s, ok := val.(string)
		if !ok {
			return "", fmt.Errorf("argument %q must be a string path, got %T", key, val)
		}
		return s, nil
	}
	for _, key := range SingleKeys {
		if val, ok := byKey[key]; ok {
			s, err := str(key, val)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	for _, key := range ListKeys {
		val, ok := byKey[key]
		if !ok {
			continue
		}
		list, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("argument %q must be a list of string paths, got %T", key, val)
		}
		for i, item := range list {
			s, err := str(fmt.Sprintf("%s[%d]", key, i), item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	globs := GlobKeys
	if globTools[c.Tool] || (c.Tool == "" && c.Capability == "fs.glob") {
		globs = append([]string{"pattern"}, globs...)
	}
	for _, key := range globs {
		if val, ok := byKey[key]; ok {
			s, err := str(key, val)
			if err != nil {
				return nil, err
			}
			out = append(out, globBase(s))
		}
	}
	return out, nil
}

// globBase is the fixed part of a glob: the path elements before the
// first one with a wildcard. "/etc/*" → "/etc", "../../**/*.go" → "../..",
// "**/*.go" → ".".
func globBase(glob string) string {
	parts := strings.Split(glob, "/")
	for i, part := range parts {
		if strings.ContainsAny(part, "*?[{") {
			if i == 0 {
				return "."
			}
			if base := strings.Join(parts[:i], "/"); base != "" {
				return base
			}
			return "/"
		}
	}
	return glob
}

// root is the (symlink-resolved, when configured) workspace. An empty or
// relative workspace confines nothing.
func (r Resolver) root(workspace string) (string, bool) {
	if workspace == "" || !filepath.IsAbs(workspace) || strings.ContainsRune(workspace, 0) {
		return "", false
	}
	return r.real(workspace)
}

// resolve makes p absolute. A path the host would expand or cannot hold
// (~user, NUL) does not resolve.
func (r Resolver) resolve(p, base string) (string, bool) {
	if strings.HasPrefix(p, "~") || strings.ContainsRune(p, 0) {
		return p, false
	}
	if !filepath.IsAbs(p) {
		if base == "" || !filepath.IsAbs(base) {
			return p, false
		}
		p = base + string(filepath.Separator) + p
	}
	return r.real(p)
}

// real resolves p the way the kernel walks it: element by element, with
// ".." applied to the resolved prefix, so "link/../x" is the parent of
// the link's target, not of the link. Without FollowSymlinks it is the
// lexical clean. A link that exists but does not resolve (dangling, a
// loop) makes the path unresolvable.
func (r Resolver) real(p string) (string, bool) {
	if !r.FollowSymlinks {
		return filepath.Clean(p), true
	}
	cur := string(filepath.Separator)
	for _, part := range strings.Split(p, string(filepath.Separator)) {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		info, err := os.Lstat(next)
		switch {
		case err != nil:
			cur = next // does not exist (yet): nothing to follow
		case info.Mode()&os.ModeSymlink != 0:
			resolved, err := filepath.EvalSymlinks(next)
			if err != nil {
				return p, false
			}
			cur = resolved
		default:
			cur = next
		}
	}
	return cur, true
}

// within reports whether p is root or below it: /w/a is within /w, /wx is not.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}
