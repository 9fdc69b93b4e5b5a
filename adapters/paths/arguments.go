package paths

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// candidate is one string of a call that may name a file, and how to
// read it.
type candidate struct {
	selector string // where it was found, for messages: "edits[0].file_path"
	value    string
	glob     bool // a glob: check each brace alternative's fixed part
	declared bool // the catalogue names it a path: over the limits it is bad input
}

// collector walks a call's arguments and gathers every string that may
// name a file, as the catalogue declares or, where it is silent, strictly.
type collector struct {
	entry *pdp.ToolEntry
	out   []candidate
	base  []string // values of the entry's Base argument
}

// collect returns the path candidates of a call's arguments. Two keys of
// one object that are equal ignoring case are bad input: which of them a
// tool reads is its own business, so neither can be trusted.
func collect(entry *pdp.ToolEntry, args map[string]any) (*collector, error) {
	c := &collector{entry: entry}
	if err := c.object("", "", args); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *collector) object(sel, shown string, obj map[string]any) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable order: the first outside path is the one reported
	seen := make(map[string]string, len(keys))
	for _, k := range keys {
		lower, folded := strings.ToLower(k), api.FoldKey(k)
		if other, dup := seen[folded]; dup {
			return pdp.Invalid("ambiguous_argument", "arguments %q and %q differ only in case", join(shown, other), join(shown, k))
		}
		seen[folded] = k
		if err := c.value(join(sel, lower), join(shown, k), obj[k]); err != nil {
			return err
		}
	}
	return nil
}

func join(sel, key string) string {
	if sel == "" {
		return key
	}
	return sel + "." + key
}

// value gathers the candidates of one argument value at selector sel.
func (c *collector) value(sel, shown string, v any) error {
	kind, declared := pdp.KindPath, false
	if c.entry != nil {
		if kind, declared = c.entry.KindOf(sel); !declared {
			kind = c.entry.Other
		}
	}
	if declared && kind != pdp.KindData && kind != pdp.KindCommand && kind != pdp.KindStdin {
		// A declared path holds a string (a path list: strings); anything
		// else is bad input, not something to guess at.
		_, isList := v.([]any)
		if _, isString := v.(string); !isString && v != nil && !(isList && kind == pdp.KindPaths && !strings.HasSuffix(sel, "[]")) {
			return pdp.Invalid("invalid_args", "argument %q must be a string %s, got %T", shown, kindNoun(kind), v)
		}
	}
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return c.object(sel, shown, v)
	case []any:
		for i, item := range v {
			if err := c.value(sel+"[]", fmt.Sprintf("%s[%d]", shown, i), item); err != nil {
				return err
			}
		}
		return nil
	case string:
		if c.entry != nil && c.entry.Base != "" && sel == c.entry.Base {
			c.base = append(c.base, v)
		}
		return c.text(shown, kind, declared, v)
	default:
		return nil // numbers and booleans name no file
	}
}

func kindNoun(k pdp.ArgKind) string {
	switch k {
	case pdp.KindPaths:
		return "path (or a list of them)"
	case pdp.KindGlob:
		return "glob"
	case pdp.KindPatch:
		return "patch"
	}
	return "path"
}

// text gathers the candidates of one string by its kind.
func (c *collector) text(shown string, kind pdp.ArgKind, declared bool, s string) error {
	if s == "" {
		return nil
	}
	add := func(v string, glob bool) {
		c.out = append(c.out, candidate{selector: shown, value: v, glob: glob, declared: declared})
	}
	switch kind {
	case pdp.KindPath, pdp.KindPaths:
		if declared {
			add(fileURI(s), false)
			return nil
		}
		c.undeclared(shown, s)
	case pdp.KindGlob:
		add(fileURI(s), true)
	case pdp.KindPatch:
		for _, f := range patchFiles(s) {
			add(fileURI(f), false)
		}
	case pdp.KindCommand, pdp.KindStdin, pdp.KindData:
		// Not a path, unless the whole value is a file URI: a fetch tool
		// given file:///etc/shadow reads a file.
		if isFileURI(s) {
			add(fileURI(s), false)
		}
	}
	return nil
}

// undeclared gathers what an argument the catalogue does not declare may
// name: the whole string (when it could be one path), every path-looking
// token in it, and every file a patch in it names.
func (c *collector) undeclared(shown, s string) {
	add := func(v string) { c.out = append(c.out, candidate{selector: shown, value: v}) }
	// The whole string, as it is and without surrounding space, when it
	// could be one path ("~ 5 minutes" is text, not a home directory).
	for _, whole := range []string{s, strings.TrimSpace(s)} {
		if whole == "" || strings.ContainsAny(whole, "\n\r") || len(whole) > MaxPathBytes {
			continue
		}
		if strings.HasPrefix(whole, "~") && !tildePath(whole) {
			continue
		}
		add(fileURI(whole))
	}
	// Its path-looking words, and the parts of a host:/path or PATH list
	// (a single word too).
	for _, tok := range pathTokens(s) {
		add(tok)
	}
	// A tool may expand a glob it is given: judge every alternative.
	if strings.ContainsAny(s, "*?[{") {
		for _, word := range strings.Fields(s) {
			if strings.ContainsAny(word, "*?[{") {
				c.out = append(c.out, candidate{selector: shown, value: word, glob: true})
			}
		}
	}
	if strings.Contains(s, "\n") {
		for _, f := range patchFiles(s) {
			add(fileURI(f))
		}
	}
}

// tokenBreaks separate words in free text.
const tokenBreaks = " \t\r\n\"'`,;=|&<>(){}[]"

// pathTokens are the words of free text that may name a file: those with
// a "/" (so "~/x" too), "..", and file URIs. Other URLs are not paths.
func pathTokens(s string) []string {
	var out []string
	for _, word := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(tokenBreaks, r) }) {
		if isFileURI(word) {
			out = append(out, fileURI(word))
			continue
		}
		if i := strings.Index(word, "://"); i > 0 && isScheme(word[:i]) {
			continue // a URL of another scheme names no local file
		}
		// host:/path and PATH lists: each part on its own.
		for _, part := range strings.Split(word, ":") {
			if strings.Contains(part, "/") || part == ".." {
				out = append(out, part)
			}
		}
	}
	return out
}

// tildePath reports whether s is a home-directory path a tool may
// expand: "~", "~/x", "~user/x".
func tildePath(s string) bool {
	if !strings.HasPrefix(s, "~") {
		return false
	}
	name, _, _ := strings.Cut(s[1:], "/")
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

func isScheme(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") == ""
}

func isLetter(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }

// isFileURI reports whether s is a file: URI (any case), read the way
// URL parsers read it: surrounding space and C0 controls ignored, tabs
// and newlines anywhere dropped, an "<URL:…>" wrapper taken off.
func isFileURI(s string) bool {
	s = urlText(s)
	return len(s) >= 5 && strings.EqualFold(s[:5], "file:")
}

// urlText is s as a URL parser sees it (WHATWG: leading and trailing C0
// controls and spaces trimmed, ASCII tab and newline removed anywhere;
// RFC 3986 appendix C: an "<URL:…>" or "<…>" wrapper).
func urlText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") {
		s = strings.TrimFunc(s[1:len(s)-1], func(r rune) bool { return r <= ' ' })
		if len(s) >= 4 && strings.EqualFold(s[:4], "URL:") {
			s = strings.TrimFunc(s[4:], func(r rune) bool { return r <= ' ' })
		}
	}
	return s
}

// fileURI turns a file: URI into the path it names (percent-decoded;
// file://host/p names /p on a host we cannot see, which is judged as /p);
// any other string is returned as it is.
func fileURI(s string) string {
	if !isFileURI(s) {
		return s
	}
	rest := urlText(s)[5:]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = "/"
		}
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if decoded, err := url.PathUnescape(rest); err == nil {
		rest = decoded
	}
	if rest == "" {
		return "/"
	}
	return rest
}

// patchFiles lists every file a patch names: apply_patch's "*** Add
// File:", "*** Update File:", "*** Delete File:" and "*** Move to:"
// lines, unified diff "---"/"+++" headers (with and without the a/ b/
// prefix), and git's "diff --git", "rename"/"copy" lines.
func patchFiles(patch string) []string {
	var out []string
	for _, line := range strings.Split(patch, "\n") {
		// Patch tools forgive padding around their markers, so the PDP
		// reads the line as they do.
		line = strings.TrimSpace(line)
		for _, prefix := range []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:", "rename from ", "rename to ", "copy from ", "copy to "} {
			if strings.HasPrefix(line, prefix) {
				out = append(out, strings.TrimSpace(line[len(prefix):]))
			}
		}
		for _, prefix := range []string{"--- ", "+++ "} {
			if !strings.HasPrefix(line, prefix) {
				continue
			}
			name := line[len(prefix):]
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i] // a timestamp follows the name
			}
			name = strings.TrimSpace(name)
			if name == "/dev/null" || name == "" {
				continue
			}
			out = append(out, name)
			if rest, ok := cutDiffPrefix(name); ok {
				out = append(out, rest)
			}
		}
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			for _, name := range strings.Fields(rest) {
				out = append(out, name)
				if r, ok := cutDiffPrefix(name); ok {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

func cutDiffPrefix(name string) (string, bool) {
	if len(name) > 2 && (name[0] == 'a' || name[0] == 'b') && name[1] == '/' {
		return name[2:], true
	}
	return "", false
}
