package hookconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Change is what Install or Remove did to a file.
type Change struct {
	File string
	// Added and Removed are the events whose PDP hook was added or taken
	// out; both empty when the file needed no change.
	Added, Removed []string
	// Backup is where the file as it was is kept, "" when it did not
	// exist or was not changed.
	Backup string
}

// Changed says whether the file was written.
func (c Change) Changed() bool { return len(c.Added)+len(c.Removed) > 0 }

// String says what changed, for a person.
func (c Change) String() string {
	switch {
	case !c.Changed():
		return c.File + ": unchanged (the PDP's hooks are already as asked)"
	case len(c.Added) > 0:
		s := c.File + ": added the PDP's hook for " + strings.Join(c.Added, ", ")
		if c.Backup != "" {
			s += "; the file as it was is in " + c.Backup
		}
		return s
	}
	s := c.File + ": removed the PDP's hook from " + strings.Join(c.Removed, ", ")
	if c.Backup != "" {
		s += "; the file as it was is in " + c.Backup
	}
	return s
}

// Install adds the PDP's hook to every event of the agent in file,
// unless the event has it already. Nothing else in the file changes.
func Install(a Agent, file string, h Hook) (Change, error) {
	handler, err := a.handler(h)
	if err != nil {
		return Change{File: file}, err
	}
	return edit(a, file, func(root *object) ([]string, []string, error) {
		if a.Version != 0 {
			switch v, ok := root.get("version"); {
			case !ok:
				root.set("version", json.Number(fmt.Sprint(a.Version)))
			case fmt.Sprint(v) != fmt.Sprint(a.Version):
				return nil, nil, fmt.Errorf(`"version" is %v, not the %d this hook configuration is written for`, v, a.Version)
			}
		}
		if off, _ := root.get(a.OffSwitch); a.OffSwitch != "" && off == true {
			return nil, nil, fmt.Errorf(`%q is true, so %s would run no hook of this file`, a.OffSwitch, a.Name)
		}
		hooks, err := hooksOf(root, true)
		if err != nil {
			return nil, nil, err
		}
		var added []string
		for _, event := range a.Events {
			entries, err := eventEntries(hooks, event)
			if err != nil {
				return nil, nil, err
			}
			if a.hasExactly(entries, handler) {
				continue
			}
			var entry any = handler
			if !a.Flat {
				group := newObject()
				if a.Matcher != "" {
					group.set("matcher", a.Matcher)
				}
				group.set("hooks", []any{handler})
				entry = group
			}
			hooks.set(event, append(entries, entry))
			added = append(added, event)
		}
		return added, nil, nil
	})
}

// Remove takes the PDP's hooks out of file — exactly those, and a
// matcher group or event left empty by it — and nothing else.
func Remove(a Agent, file string) (Change, error) {
	return edit(a, file, func(root *object) ([]string, []string, error) {
		hooks, err := hooksOf(root, false)
		if err != nil || hooks == nil {
			return nil, nil, err
		}
		var removed []string
		for _, event := range append([]string(nil), hooks.keys...) {
			entries, err := eventEntries(hooks, event)
			if err != nil {
				return nil, nil, err
			}
			kept, took := a.without(entries)
			if !took {
				continue
			}
			removed = append(removed, event)
			if len(kept) == 0 {
				hooks.del(event)
			} else {
				hooks.set(event, kept)
			}
		}
		if len(removed) > 0 && len(hooks.keys) == 0 {
			root.del("hooks")
		}
		return nil, removed, nil
	})
}

func hooksOf(root *object, create bool) (*object, error) {
	v, ok := root.get("hooks")
	if !ok {
		if !create {
			return nil, nil
		}
		h := newObject()
		root.set("hooks", h)
		return h, nil
	}
	h, ok := v.(*object)
	if !ok {
		return nil, errors.New(`"hooks" is not an object`)
	}
	return h, nil
}

func eventEntries(hooks *object, event string) ([]any, error) {
	v, ok := hooks.get(event)
	if !ok {
		return nil, nil
	}
	entries, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"hooks.%s" is not an array`, event)
	}
	return entries, nil
}

// guarded says whether an event's entries run the PDP's hook on every
// tool: in a group with the matcher pdp init writes, and for Cursor
// with failClosed.
func (a Agent) guarded(entries []any) bool {
	for _, e := range entries {
		if a.Flat {
			if o, ok := e.(*object); ok && a.ours(o) && o.vals["failClosed"] == true {
				return true
			}
			continue
		}
		g, ok := e.(*object)
		if !ok {
			continue
		}
		if m, has := g.vals["matcher"]; (a.Matcher == "" && has) || (a.Matcher != "" && m != a.Matcher) {
			continue
		}
		if inner, ok := g.vals["hooks"].([]any); ok {
			for _, h := range inner {
				if a.ours(h) {
					return true
				}
			}
		}
	}
	return false
}

// hasExactly says whether an event's entries hold the very entry
// Install writes (in a group with its matcher). An entry that only looks
// like the PDP's hook — another matcher, a timeout, a wrapped command,
// another URL, no failClosed — may guard nothing, so it does not count:
// Install adds its own beside it.
func (a Agent) hasExactly(entries []any, handler *object) bool {
	for _, e := range entries {
		if a.Flat {
			if same(e, handler) {
				return true
			}
			continue
		}
		g, ok := e.(*object)
		if !ok {
			continue
		}
		m, hasMatcher := g.vals["matcher"]
		if (a.Matcher == "" && hasMatcher) || (a.Matcher != "" && m != a.Matcher) {
			continue
		}
		if inner, ok := g.vals["hooks"].([]any); ok {
			for _, h := range inner {
				if same(h, handler) {
					return true
				}
			}
		}
	}
	return false
}

// same says whether two decoded JSON values are equal, members in any
// order.
func same(x, y any) bool {
	switch x := x.(type) {
	case *object:
		y, ok := y.(*object)
		if !ok || len(x.vals) != len(y.vals) {
			return false
		}
		for k, v := range x.vals {
			w, ok := y.vals[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := y.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return x == y
}

// without is entries less the PDP's hooks, and whether there were any.
func (a Agent) without(entries []any) ([]any, bool) {
	var kept []any
	took := false
	for _, e := range entries {
		if a.Flat {
			if a.ours(e) {
				took = true
				continue
			}
			kept = append(kept, e)
			continue
		}
		g, ok := e.(*object)
		var inner []any
		if ok {
			inner, ok = g.vals["hooks"].([]any)
		}
		if !ok {
			kept = append(kept, e)
			continue
		}
		var left []any
		for _, h := range inner {
			if a.ours(h) {
				took = true
				continue
			}
			left = append(left, h)
		}
		switch {
		case len(left) == len(inner):
			kept = append(kept, e)
		case len(left) > 0:
			g.set("hooks", left)
			kept = append(kept, g)
		}
	}
	return kept, took
}

// Configured says whether file has the PDP's hook for the agent on every
// event pdp init installs it for, guarding every tool.
func Configured(a Agent, file string) (bool, error) {
	raw, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	root, err := parse(raw)
	if err != nil {
		return false, fmt.Errorf("%s does not parse: %w", file, err)
	}
	hooks, err := hooksOf(root, false)
	if err != nil || hooks == nil {
		return false, err
	}
	for _, event := range a.Events {
		entries, err := eventEntries(hooks, event)
		if err != nil || !a.guarded(entries) {
			return false, nil
		}
	}
	return true, nil
}

// edit reads file (none is an empty object), applies change and, when it
// changed anything, writes the file atomically with a backup beside it.
func edit(a Agent, file string, change func(*object) (added, removed []string, err error)) (Change, error) {
	c := Change{File: file}
	raw, err := os.ReadFile(file)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
		raw = nil
	case err != nil:
		return c, err
	}
	root := newObject()
	if len(bytes.TrimSpace(raw)) > 0 {
		if root, err = parse(raw); err != nil {
			return c, fmt.Errorf("%s does not parse as JSON, so it is left as it is: %w", file, err)
		}
	}
	added, removed, err := change(root)
	if err != nil {
		return c, fmt.Errorf("%s: %w; the file is left as it is", file, err)
	}
	c.Added, c.Removed = added, removed
	if !c.Changed() {
		return c, nil
	}
	var buf bytes.Buffer
	if err := encode(&buf, root, ""); err != nil {
		return c, err
	}
	buf.WriteByte('\n')
	mode := fs.FileMode(0o644)
	if exists {
		if st, err := os.Stat(file); err == nil {
			mode = st.Mode().Perm()
		}
		c.Backup = file + ".pdp-backup"
		if err := writeAtomic(c.Backup, raw, mode); err != nil {
			return c, fmt.Errorf("keeping a backup of %s: %w", file, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return c, err
	}
	return c, writeAtomic(file, buf.Bytes(), mode)
}

// writeAtomic writes a file through a temporary one beside it, so a
// reader sees the old file or the new one, never half of one.
func writeAtomic(file string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
