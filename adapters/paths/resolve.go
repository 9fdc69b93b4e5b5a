package paths

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolperm/pdp/pdp"
)

// walker resolves the paths of one call within its budget: a bounded
// number of file-system lookups, each link resolved once.
type walker struct {
	ctx         context.Context
	followLinks bool
	maxElements int
	budget      int                // the call's lookups, for the message
	lookups     int                // lookups left for this call
	seen        map[string]element // what each element looked up in this call is
	steps       int
}

func (r Resolver) walker(ctx context.Context) *walker {
	w := &walker{ctx: ctx, followLinks: r.FollowSymlinks, maxElements: r.MaxElements, lookups: r.MaxLookups}
	if w.maxElements <= 0 {
		w.maxElements = DefaultMaxElements
	}
	if w.lookups <= 0 {
		w.lookups = DefaultMaxLookups
	}
	w.budget = w.lookups
	return w
}

// limit refuses a path over the size limits: bad input, not a decision.
func (w *walker) limit(selector, p string) error {
	if len(p) > MaxPathBytes {
		return pdp.Invalid("path_too_long", "argument %q holds a path of %d bytes; the limit is %d", selector, len(p), MaxPathBytes)
	}
	if n := strings.Count(p, "/") + 1; n > w.maxElements {
		return pdp.Invalid("path_too_long", "argument %q holds a path of %d elements; the limit is %d", selector, n, w.maxElements)
	}
	return nil
}

// root is the resolved workspace. An empty or relative workspace confines
// nothing.
func (w *walker) root(workspace string) (string, bool) {
	if workspace == "" || !filepath.IsAbs(workspace) || strings.ContainsRune(workspace, 0) {
		return "", false
	}
	resolved, ok, err := w.resolve(workspace, "")
	return resolved, ok && err == nil
}

// resolve makes p absolute (relative to base) and resolves it the way the
// kernel walks it. ok is false when p cannot be judged inside anything: a
// path the host would expand or cannot hold (~user, NUL), a link that does
// not resolve, a lookup that fails other than "not found", a
// process-relative path. err is set when the budget or the request's
// context ran out.
func (w *walker) resolve(p, base string) (resolved string, ok bool, err error) {
	if strings.HasPrefix(p, "~") || strings.ContainsRune(p, 0) {
		return p, false, nil
	}
	if !filepath.IsAbs(p) {
		if base == "" || !filepath.IsAbs(base) {
			return p, false, nil
		}
		p = base + "/" + p
	}
	if !w.followLinks {
		clean := filepath.Clean(p)
		return clean, !processRelative(clean), nil
	}
	hops := 0
	return w.walk("/", p, &hops)
}

// walk resolves rel element by element from the resolved directory start:
// ".." is applied to the resolved prefix, so "link/../x" is the parent of
// the link's target; a link's target is resolved from the link's
// directory, once per call. Once an element does not exist nothing below
// it can, and the rest is applied lexically until a ".." climbs back above
// it.
func (w *walker) walk(start, rel string, hops *int) (string, bool, error) {
	cur, missing := start, ""
	depth := strings.Count(start, "/")
	if start == "/" {
		depth = 0
	}
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			depth = max(depth-1, 0)
			if missing != "" && !within(missing, cur) {
				missing = "" // back above what does not exist: look again
			}
			continue
		}
		// Each lookup costs the kernel a walk of the whole path, so the
		// depth of what is looked up is bounded too: a link into a tree
		// thousands of directories deep is outside, not walked.
		if depth++; depth > w.maxElements {
			return cur, false, nil
		}
		next := cur + "/" + part
		if cur == "/" {
			next = "/" + part
		}
		if processRelative(next) {
			return next, false, nil
		}
		if missing != "" {
			cur = next
			continue
		}
		seen, known := w.seen[next]
		if !known {
			var err error
			if seen, err = w.lookup(next, cur, hops); err != nil {
				return next, false, err
			}
		}
		switch seen.kind {
		case elemMissing:
			missing, cur = next, next
		case elemUnresolvable:
			return next, false, nil
		case elemLink:
			if *hops++; *hops > maxLinkHops {
				return next, false, nil
			}
			cur, depth = seen.target, strings.Count(seen.target, "/")
		default:
			cur = next
		}
	}
	return cur, true, nil
}

// element is what one looked-up path element turned out to be.
type element struct {
	kind   int
	target string // a link's resolved target
}

const (
	elemPlain = iota
	elemMissing
	elemUnresolvable
	elemLink
)

// lookup finds what the element next (in the resolved directory dir) is,
// following it when it is a link, and remembers it for the call. A lookup
// that fails other than "not found" (permission denied and the like)
// cannot see what is there, so the element is unresolvable: outside.
func (w *walker) lookup(next, dir string, hops *int) (element, error) {
	if err := w.spend(); err != nil {
		return element{}, err
	}
	var e element
	info, err := os.Lstat(next)
	switch {
	case errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR):
		e.kind = elemMissing
	case err != nil:
		e.kind = elemUnresolvable
	case info.Mode()&os.ModeSymlink != 0:
		e, err = w.follow(next, dir, hops)
		if err != nil {
			return e, err
		}
	}
	if w.seen == nil {
		w.seen = make(map[string]element)
	}
	w.seen[next] = e
	return e, nil
}

// follow resolves the link next from its directory dir.
func (w *walker) follow(next, dir string, hops *int) (element, error) {
	if err := w.spend(); err != nil {
		return element{}, err
	}
	target, err := os.Readlink(next)
	if err != nil {
		return element{kind: elemUnresolvable}, nil
	}
	if *hops+1 > maxLinkHops {
		return element{kind: elemUnresolvable}, nil
	}
	from := dir
	if strings.HasPrefix(target, "/") {
		from = "/"
	}
	inner := *hops + 1
	resolved, ok, err := w.walk(from, target, &inner)
	if err != nil || !ok {
		return element{kind: elemUnresolvable}, err
	}
	return element{kind: elemLink, target: resolved}, nil
}

// spend takes one lookup from the call's budget and checks the request's
// context now and then.
func (w *walker) spend() error {
	if w.lookups--; w.lookups < 0 {
		return pdp.Invalid("too_many_paths", "the call names more paths than one decision resolves (%d file-system lookups); split it", w.budget)
	}
	if w.steps++; w.steps%64 == 0 {
		if err := w.ctx.Err(); err != nil {
			return fmt.Errorf("resolving paths: %w", err)
		}
	}
	return nil
}

// processRelative reports whether p names something the PDP's own process
// would resolve differently from the tool's: /proc/self, /proc/<pid>,
// /dev/fd, /dev/stdin… Such a path is never followed; it is outside.
func processRelative(p string) bool {
	for _, prefix := range []string{"/proc/self", "/proc/thread-self", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok {
		pid, _, _ := strings.Cut(rest, "/")
		return pid != "" && strings.Trim(pid, "0123456789") == ""
	}
	return false
}
