// Package paths finds every string of a tool call that may name a file —
// as the policy's tool catalogue declares, and strictly where it is silent
// — and resolves each against the session's workspace, so the policy can
// deny any call that reaches outside it. It implements pdp.Workspace.
package paths

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// The default limits of one call's resolution (docs/security.md).
const (
	// MaxPathBytes is the longest path resolved (the kernel's PATH_MAX):
	// a declared path argument over it is bad input.
	MaxPathBytes = 4096
	// DefaultMaxElements bounds the elements of one path argument (past it
	// the call is bad input) and the depth of what it resolves to (past it
	// the path is outside): real paths have tens.
	DefaultMaxElements = 256
	// DefaultMaxLookups bounds the file-system lookups (lstat, readlink)
	// of one call, over all its paths; past it the call is bad input.
	// Each lookup walks at most DefaultMaxElements elements in the kernel,
	// so one call costs at most about two million element steps.
	DefaultMaxLookups = 8192
	// maxLinkHops bounds the symbolic links followed in one path, as the
	// kernel does (ELOOP); more is outside.
	maxLinkHops = 40
)

// Resolver resolves the path arguments of a call against a workspace.
type Resolver struct {
	// FollowSymlinks resolves symbolic links of the parts of a path that
	// exist on this host, so a link inside the workspace that points
	// outside it counts as outside.
	FollowSymlinks bool
	// MaxElements and MaxLookups override the defaults when positive.
	MaxElements int
	MaxLookups  int
	// CaseInsensitive says the file system ignores case (macOS and
	// Windows by default), so path rules must too: ".ENV" is ".env".
	CaseInsensitive bool
}

// Check resolves the call's working directory and every string of its
// arguments that may name a file. A session without an absolute workspace
// confines nothing, so every path is outside. Bad input — keys equal but
// for case, a declared path of the wrong type, a path over the limits —
// is a *pdp.Error.
func (r Resolver) Check(ctx context.Context, c pdp.WorkspaceCall) (pdp.WorkspaceVerdict, error) {
	v := pdp.WorkspaceVerdict{CaseInsensitive: r.CaseInsensitive}
	col, err := collect(c.Entry, c.Args)
	if err != nil {
		return v, err
	}
	if err := windowsPaths(c, col); err != nil {
		return v, err
	}
	cands := col.out
	if c.Cwd != "" {
		cands = append(cands, candidate{selector: "cwd", value: c.Cwd})
	}
	if len(cands) == 0 && len(c.Words) == 0 {
		return v, nil
	}
	w := r.walker(ctx)
	root, rootOK := w.root(c.Workspace)
	bases := []string{c.Cwd}
	if c.Cwd == "" {
		bases[0] = c.Workspace
	} else if !filepath.IsAbs(c.Cwd) {
		bases[0] = filepath.Join(c.Workspace, c.Cwd)
	}
	for _, b := range col.base {
		if filepath.IsAbs(b) {
			bases = append(bases, b)
		} else if filepath.IsAbs(bases[0]) {
			bases = append(bases, filepath.Join(bases[0], b))
		}
	}
	seen := make(map[string]bool, len(cands))
	for _, cand := range cands {
		if seen[cand.value+"\x00"+boolKey(cand.glob)] {
			continue // each distinct path is resolved once
		}
		seen[cand.value+"\x00"+boolKey(cand.glob)] = true
		if api.WindowsPath(cand.value) {
			// Free text that may be a Windows path (a declared one is
			// refused above): never resolved as a POSIX path, so outside.
			v.Outside = append(v.Outside, cand.value)
			continue
		}
		targets := []globTarget{{base: cand.value}}
		if cand.glob {
			var ok bool
			if targets, ok = globBases(cand.value); !ok {
				v.Outside = append(v.Outside, cand.value)
				continue
			}
		}
		// Every target is resolved, also past one outside: a path rule
		// may let an outside place through, but only when it covers all.
		outside := false
		for _, t := range targets {
			if err := w.limit(cand.selector, t.base); err != nil {
				if cand.declared || cand.selector == "cwd" {
					return pdp.WorkspaceVerdict{}, err
				}
				// Free text too long to be one path is judged strictly.
				v.Outside = append(v.Outside, truncate(cand.value))
				outside = false
				break
			}
			for _, base := range relativeBases(t.base, bases) {
				resolved, ok, err := w.resolve(t.base, base)
				if err != nil {
					return pdp.WorkspaceVerdict{}, err
				}
				v.Checked = append(v.Checked, resolved)
				inside := rootOK && ok && within(root, resolved)
				outside = outside || !inside
				v.Paths = append(v.Paths, checkedPath(cand.value, resolved, root, inside, ok, t.wild))
			}
		}
		if outside {
			v.Outside = append(v.Outside, cand.value)
		}
	}
	words, err := w.words(c.Words, root, rootOK, shellBases(bases[0], c.Bases))
	if err != nil {
		return pdp.WorkspaceVerdict{}, err
	}
	v.Paths = append(v.Paths, words...)
	return v, nil
}

// windowsPaths refuses a call whose workspace, cwd, base directory or
// declared path argument is a Windows path (C:\…, \\server\share,
// /C:/…): read as POSIX paths they would be relative, resolved within the
// workspace. They are not supported yet, so the call is bad input, which
// every caller answers with a deny that says so.
func windowsPaths(c pdp.WorkspaceCall, col *collector) error {
	refuse := func(what, value string) error {
		return pdp.Invalid("windows_path", "%s %q is a Windows path. %s.", what, value, api.WindowsPathsUnsupported)
	}
	switch {
	case api.WindowsPath(c.Workspace):
		return refuse("the session's workspace", c.Workspace)
	case api.WindowsPath(c.Cwd):
		return refuse("the call's cwd", c.Cwd)
	}
	for _, b := range col.base {
		if api.WindowsPath(b) {
			return refuse("the base directory", b)
		}
	}
	for _, cand := range col.out {
		if cand.declared && api.WindowsPath(cand.value) {
			return refuse(fmt.Sprintf("argument %q", cand.selector), cand.value)
		}
	}
	return nil
}

// shellBases are the directories a shell command's relative words
// resolve against: its cwd, and where each of its cd commands moves,
// one after the other.
func shellBases(cwd string, cds []string) []string {
	out := []string{cwd}
	cur := cwd
	for _, d := range cds {
		if filepath.IsAbs(d) {
			cur = d
		} else if filepath.IsAbs(cur) {
			cur = filepath.Join(cur, d)
		} else {
			continue
		}
		out = append(out, cur)
	}
	return out
}

// words resolves a shell command's words for the path rules. A word is
// never outside the call: the policy judges it by the path rules alone.
// A word the limits do not let the walk resolve (too long, too deep, the
// call's lookups spent) may name any path; only the request's end is an
// error.
func (w *walker) words(words []pdp.PathWord, root string, rootOK bool, bases []string) ([]pdp.CheckedPath, error) {
	var out []pdp.CheckedPath
	spent := false
	for i := range words {
		word := &words[i]
		possible := func() { out = append(out, pdp.CheckedPath{Value: word.Value, Word: word, Possible: true}) }
		targets := []globTarget{{base: word.Value}}
		if word.Glob {
			var ok bool
			if targets, ok = globBases(word.Value); !ok {
				possible()
				continue
			}
		}
		if word.Possible || spent {
			possible()
			continue
		}
		var found []pdp.CheckedPath
		unjudged := false
	targets:
		for _, t := range targets {
			if w.limit("", t.base) != nil {
				unjudged = true
				break
			}
			for _, base := range relativeBases(t.base, bases) {
				if base == "" && !filepath.IsAbs(t.base) {
					// No directory to resolve against (no cwd, no
					// workspace): the word is judged by its own names.
					c := checkedPath(word.Value, filepath.Clean(t.base), root, false, true, t.wild)
					c.Word = word
					found = append(found, c)
					continue
				}
				name := t.base
				if strings.HasPrefix(name, "~") {
					// A shell word judged here is literal: the shell
					// expands no tilde in it ("~Q" quoted is the name ~Q).
					name = "./" + name
				}
				resolved, ok, err := w.resolve(name, base)
				if err != nil {
					if cerr := w.ctx.Err(); cerr != nil {
						return nil, err
					}
					spent, unjudged = true, true
					break targets
				}
				if !ok {
					// Not judged (a process-relative path such as
					// /proc/self/cwd/.env, ~user, NUL): it may be any path.
					unjudged = true
					break targets
				}
				c := checkedPath(word.Value, resolved, root, rootOK && within(root, resolved), ok, t.wild)
				c.Word = word
				found = append(found, c)
			}
		}
		if unjudged || found == nil {
			possible()
			continue
		}
		out = append(out, found...)
	}
	return out, nil
}

// checkedPath is one resolved path as the path rules see it.
func checkedPath(value, resolved, root string, inside, ok bool, wild string) pdp.CheckedPath {
	c := pdp.CheckedPath{Value: value, Path: resolved, Inside: inside, Resolved: ok, Glob: wild}
	if inside {
		c.Rel, _ = filepath.Rel(root, resolved)
	}
	return c
}

// truncate shortens a value reported as outside to what a reason can show.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func boolKey(b bool) string {
	if b {
		return "g"
	}
	return "p"
}

// relativeBases are the directories p is resolved against: none for an
// absolute path, else every base of the call (the cwd, and the search
// root a glob tool names).
func relativeBases(p string, bases []string) []string {
	if filepath.IsAbs(p) {
		return []string{""}
	}
	return bases
}

// within reports whether p is root or below it: /w/a is within /w, /wx is not.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../"))
}
