package pdp

import (
	"context"
	"fmt"
	"strings"
)

// ArgKind says what an argument of a tool holds, so the workspace check
// knows which strings name files.
type ArgKind string

// The argument kinds of the tool catalogue (docs/policy.md).
const (
	// KindPath is one file path (a file:// URI counts).
	KindPath ArgKind = "path"
	// KindPaths is a list of file paths.
	KindPaths ArgKind = "paths"
	// KindGlob is a file glob: every brace alternative's fixed part is a
	// path, and ".." after a wildcard makes it outside.
	KindGlob ArgKind = "glob"
	// KindPatch is a patch (apply_patch's "*** Update File:" lines, unified
	// diff headers): every file it names is a path.
	KindPatch ArgKind = "patch"
	// KindCommand is a shell command: judged by the shell facts, not
	// resolved as a path.
	KindCommand ArgKind = "command"
	// KindStdin is text typed into a running process: not a path; its
	// complete lines are judged as shell commands (pipeline.go, stdin.go).
	KindStdin ArgKind = "stdin"
	// KindData is plain data (file content, a message): not resolved,
	// except a value that is a whole file:// URI.
	KindData ArgKind = "data"
)

var argKinds = map[ArgKind]bool{KindPath: true, KindPaths: true, KindGlob: true, KindPatch: true, KindCommand: true, KindStdin: true, KindData: true}

// ToolEntry is one tool of the catalogue (policy data "tools").
type ToolEntry struct {
	// Capability is what the tool does.
	Capability string
	// Args maps an argument selector — lower-case keys joined by ".",
	// "[]" for the items of an array: "edits[].file_path" — to its kind.
	// A selector covers everything below it.
	Args map[string]ArgKind
	// Other is the kind of every argument Args does not declare: path
	// (the default; every string in it is checked) or data (a tool known
	// to touch no file).
	Other ArgKind
	// Base names a path argument that relative paths of the call also
	// resolve against (a glob tool's search root), besides the cwd.
	Base string
}

// Catalogue maps tool names to what their arguments hold. A tool that is
// not in it has every string argument checked as a path.
type Catalogue map[string]ToolEntry

// KindOf is the declared kind of the argument at selector sel, and
// whether any declaration covers it (the longest declared prefix wins).
func (e ToolEntry) KindOf(sel string) (ArgKind, bool) {
	for s := sel; ; {
		if k, ok := e.Args[s]; ok {
			return k, true
		}
		i := strings.LastIndexAny(s, ".[")
		if i <= 0 {
			return "", false
		}
		s = s[:i]
	}
}

// DecodeCatalogue reads the "tools" table of policy data. Every entry is
// an object with a capability; args and other are optional. A malformed
// entry is an error: the policy is not activated.
func DecodeCatalogue(raw any) (Catalogue, error) {
	if raw == nil {
		return Catalogue{}, nil
	}
	table, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("data.tools must be an object, got %T", raw)
	}
	out := make(Catalogue, len(table))
	for name, v := range table {
		entry, err := decodeToolEntry(v)
		if err != nil {
			return nil, fmt.Errorf("data.tools[%q]: %w", name, err)
		}
		out[name] = entry
	}
	return out, nil
}

func decodeToolEntry(v any) (ToolEntry, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return ToolEntry{}, fmt.Errorf("must be an object with a capability, got %T", v)
	}
	var e ToolEntry
	e.Capability, _ = obj["capability"].(string)
	if !ValidCapability(e.Capability) {
		return e, fmt.Errorf("capability %q is not a dotted id", e.Capability)
	}
	e.Other = KindPath
	if raw, ok := obj["other"]; ok {
		other, _ := raw.(string)
		if ArgKind(other) != KindPath && ArgKind(other) != KindData {
			return e, fmt.Errorf(`other must be "path" or "data", got %v`, raw)
		}
		e.Other = ArgKind(other)
	}
	if raw, ok := obj["base"]; ok {
		if e.Base, ok = raw.(string); !ok {
			return e, fmt.Errorf("base must be an argument name, got %T", raw)
		}
		e.Base = strings.ToLower(e.Base)
	}
	args, _ := obj["args"].(map[string]any)
	if raw, ok := obj["args"]; ok && args == nil {
		return e, fmt.Errorf("args must be an object, got %T", raw)
	}
	e.Args = make(map[string]ArgKind, len(args))
	for sel, k := range args {
		kind, _ := k.(string)
		if !argKinds[ArgKind(kind)] {
			return e, fmt.Errorf("argument %q: kind %v is not one of path, paths, glob, patch, command, data", sel, k)
		}
		norm := strings.ToLower(sel)
		if _, dup := e.Args[norm]; dup {
			return e, fmt.Errorf("argument %q is declared twice (selectors ignore case)", sel)
		}
		e.Args[norm] = ArgKind(kind)
	}
	return e, nil
}

// WorkspaceCall is what the workspace check needs of a tool call.
type WorkspaceCall struct {
	Tool string
	// Entry is the tool's catalogue entry; nil for a tool the catalogue
	// does not know, whose every string argument is checked.
	Entry *ToolEntry
	Args  map[string]any
	// Cwd is where the tool runs; it is checked too, and relative paths
	// resolve against it (against the workspace when it is empty).
	Cwd       string
	Workspace string
	// Words are a shell command's words that may name a file; Bases the
	// directories its cd commands move to. Each word is resolved against
	// the cwd and every base and meets the path rules; a word outside the
	// workspace is not outside the call (shell commands are confined by
	// their cwd, docs/security.md).
	Words []PathWord
	Bases []string
}

// WorkspaceVerdict lists every path of a call, resolved, and those that
// resolve outside the workspace.
type WorkspaceVerdict struct {
	Checked []string
	Outside []string
	// Paths are the checked paths with what the path rules need.
	Paths []CheckedPath
	// CaseInsensitive says the file system ignores case, so path rules
	// match without regard to it (paths.case_insensitive).
	CaseInsensitive bool
}

// CheckedPath is one resolved path of a call.
type CheckedPath struct {
	// Value is the string of the call it came from, as Outside lists it.
	Value string
	// Path is the resolved path (links followed); for a glob, the
	// resolved directory its wildcards start from.
	Path string
	// Rel is Path relative to the workspace ("." for the workspace
	// itself) when Inside.
	Rel    string
	Inside bool
	// Resolved is false when the path could not be judged (~user, NUL, a
	// process-relative path, no workspace): no rule matches it.
	Resolved bool
	// Glob is, for a glob, its wildcard part below Path ("**/*.go").
	Glob string
	// Word is the shell word the path came from, nil for a path of the
	// call's arguments. Possible: the word may name any path (it is not
	// literal, or could not be resolved within the call's limits).
	Word     *PathWord `json:",omitempty"`
	Possible bool      `json:",omitempty"`
}

// Workspace resolves the paths of a call against the session's
// workspace. Bad input (an ambiguous key, a path over the limits) is a
// *Error; the call is refused, never decided.
type Workspace interface {
	Check(ctx context.Context, call WorkspaceCall) (WorkspaceVerdict, error)
}

// Invalid is bad input with a stable code, for adapters that judge a
// request's arguments.
func Invalid(code, format string, args ...any) *Error {
	return invalid(code, format, args...)
}
