package paths

import "strings"

// maxBraceAlternatives bounds the brace expansion of one glob; a glob
// with more alternatives is judged outside rather than expanded.
const maxBraceAlternatives = 256

// globTarget is where one brace alternative of a glob starts: its fixed
// part, and the wildcard part below it ("" for a glob without wildcards).
type globTarget struct {
	base, wild string
}

// globBases are the paths a glob can reach: for every brace alternative
// the fixed part before the first wildcard element. ok is false when the
// glob can reach anywhere: a ".." after a wildcard ("**/../../etc") or
// more alternatives than are expanded.
func globBases(glob string) (targets []globTarget, ok bool) {
	alts, ok := expandBraces(glob, maxBraceAlternatives)
	if !ok {
		return nil, false
	}
	for _, alt := range alts {
		base, wild, ok := globBase(alt)
		if !ok {
			return nil, false
		}
		targets = append(targets, globTarget{base: base, wild: wild})
	}
	return targets, true
}

// globBase is the fixed part of a brace-free glob: the path elements
// before the first one with a wildcard, and the rest. "/etc/*" → "/etc",
// "../../**/*.go" → "../..", "**/*.go" → ".". A ".." after a wildcard
// climbs out of wherever the wildcard matched, so the glob has no base
// (ok false).
func globBase(glob string) (base, wild string, ok bool) {
	parts := strings.Split(glob, "/")
	for i, part := range parts {
		if !strings.ContainsAny(part, "*?[") {
			continue
		}
		for _, later := range parts[i+1:] {
			if later == ".." {
				return "", "", false
			}
		}
		wild = strings.Join(parts[i:], "/")
		if i == 0 {
			return ".", wild, true
		}
		if base := strings.Join(parts[:i], "/"); base != "" {
			return base, wild, true
		}
		return "/", wild, true
	}
	return glob, "", true
}

// expandBraces expands {a,b} alternatives (nested too), at most max
// results; ok is false past that. An unbalanced brace is literal text.
func expandBraces(s string, max int) ([]string, bool) {
	open, close, alts := findBraces(s)
	if open < 0 {
		return []string{s}, true
	}
	prefix, suffix := s[:open], s[close+1:]
	var out []string
	for _, alt := range alts {
		rest, ok := expandBraces(prefix+alt+suffix, max-len(out))
		if !ok {
			return nil, false
		}
		out = append(out, rest...)
		if len(out) > max {
			return nil, false
		}
	}
	return out, true
}

// findBraces finds the first balanced {…} group with a top-level comma
// and splits it into its alternatives; open is -1 when there is none.
func findBraces(s string) (open, close int, alts []string) {
	for start := 0; start < len(s); start++ {
		if s[start] != '{' {
			continue
		}
		depth, last := 0, start+1
		var parts []string
		for i := start; i < len(s); i++ {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					if parts == nil {
						i = len(s) // "{x}" is no alternative; look further
						break
					}
					return start, i, append(parts, s[last:i])
				}
			case ',':
				if depth == 1 {
					parts = append(parts, s[last:i])
					last = i + 1
				}
			}
		}
	}
	return -1, -1, nil
}
