package pdp

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/toolperm/pdp/api"
)

// api.PathRule is what one path pattern does to each access kind (read,
// write): "deny" for both, or {"write": "ask"}.

// The access kinds of a path.
const (
	AccessRead  = "read"
	AccessWrite = "write"
)

// maxPathPattern bounds the bytes of one path pattern (PATH_MAX).
const maxPathPattern = 4096

// A pattern's wildcards are bounded: matching a glob word against a
// pattern costs with their product, and a rule that needs more names
// nothing a person could check.
const (
	maxPatternWildcards = 16 // *, ? and [ in one pattern
	maxPatternRecursive = 4  // ** elements in one pattern
)

// PathRules is one layer of path rules — policy data "paths", or a
// session's path_rules — mapping a gitignore-style pattern to a PathRule.
// It compiles into a lookup structure once, on first use, and keeps it
// for as long as the rules live (a policy, a cached session tree), so a
// decision looks rules up rather than compiling or scanning them.
type PathRules struct {
	rules map[string]api.PathRule
	once  sync.Once
	index [2]*pathIndex // case-sensitive, case-insensitive
	err   error
}

// NewPathRules wraps a pattern→rule table; nil or empty is no rules.
func NewPathRules(m map[string]api.PathRule) *PathRules {
	if len(m) == 0 {
		return nil
	}
	return &PathRules{rules: m}
}

// Map is the pattern→rule table (nil for no rules). Callers must not
// change it.
func (r *PathRules) Map() map[string]api.PathRule {
	if r == nil {
		return nil
	}
	return r.rules
}

// Len is the number of rules.
func (r *PathRules) Len() int { return len(r.Map()) }

// MarshalJSON writes the table.
func (r *PathRules) MarshalJSON() ([]byte, error) {
	m := r.Map()
	if m == nil {
		m = map[string]api.PathRule{}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a table; patterns and actions are checked by
// Validate.
func (r *PathRules) UnmarshalJSON(b []byte) error {
	var m map[string]api.PathRule
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = PathRules{rules: m}
	return nil
}

// Validate checks every pattern and action; the result is kept, so a
// cached session's rules are checked once.
func (r *PathRules) Validate() error {
	if r == nil {
		return nil
	}
	r.compile()
	if r.err != nil {
		return invalid("invalid_path_rule", "%v", r.err)
	}
	return nil
}

func (r *PathRules) compile() {
	r.once.Do(func() {
		for fold := range 2 {
			r.index[fold], r.err = compilePathIndex(r.rules, fold == 1)
			if r.err != nil {
				return
			}
		}
	})
}

// lookup is the compiled index for the file system's case rule; nil when
// there are no rules or they are invalid (Validate reports that first).
func (r *PathRules) lookup(foldCase bool) *pathIndex {
	if r == nil {
		return nil
	}
	r.compile()
	if r.err != nil {
		return nil
	}
	if foldCase {
		return r.index[1]
	}
	return r.index[0]
}

// DecodePathRules reads the "paths" table of policy data: an object from
// a pattern to an action or an object of actions per access. A malformed
// table fails the policy's activation.
func DecodePathRules(raw any) (*PathRules, error) {
	if raw == nil {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("data.paths: %w", err)
	}
	var r PathRules
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("data.paths must be an object of path rules: %w", err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("data.paths: %w", err)
	}
	if r.Len() == 0 {
		return nil, nil
	}
	return &r, nil
}

// validPathAction: a path rule allows, asks or denies; assess is for
// shell commands.
func validPathAction(a string) bool { return a == api.Allow || a == api.Ask || a == api.Deny }

// anchor says what a pattern is matched against.
type anchor int

const (
	// anchorWorkspace: a relative pattern with a "/", matched against the
	// path relative to the session's workspace (inside paths only).
	anchorWorkspace anchor = iota
	// anchorHost: an absolute pattern, a place on the host.
	anchorHost
	// anchorName: a pattern without "/", matched against the names at any
	// depth (below the workspace for inside paths, anywhere otherwise).
	anchorName
)

// pathPattern is one compiled rule.
type pathPattern struct {
	text   string // as written: what the answer names
	rule   api.PathRule
	anchor anchor
	segs   []string // folded when case is ignored; "**" any run of names
	exact  bool     // no wildcard anywhere
}

// action is the rule's action for an access kind, "" when not covered.
func (p *pathPattern) action(access string) string {
	if access == AccessRead {
		return p.rule.Read
	}
	return p.rule.Write
}

// parsePathPattern checks and splits one pattern. A trailing "/" and a
// leading "./" are dropped; "." and ".." elements, "~" and NUL are
// refused (a pattern names places, it does not walk).
func parsePathPattern(text string, rule api.PathRule, foldCase bool) (*pathPattern, error) {
	if text == "" || len(text) > maxPathPattern || strings.ContainsRune(text, 0) || strings.HasPrefix(text, "~") {
		return nil, fmt.Errorf("path pattern %q must be 1-%d bytes, without NUL or a leading ~", truncate(text), maxPathPattern)
	}
	for kind, a := range map[string]string{AccessRead: rule.Read, AccessWrite: rule.Write} {
		if a != "" && !validPathAction(a) {
			return nil, fmt.Errorf("path rule %q has %s action %q; want allow, ask or deny", truncate(text), kind, truncate(a))
		}
	}
	if rule.Read == "" && rule.Write == "" {
		return nil, fmt.Errorf("path rule %q has no action", truncate(text))
	}
	if n := strings.Count(text, "*") + strings.Count(text, "?") + strings.Count(text, "["); n > maxPatternWildcards {
		return nil, fmt.Errorf("path pattern %q has %d wildcards; at most %d", truncate(text), n, maxPatternWildcards)
	}
	if n := strings.Count("/"+text+"/", "/**/"); n > maxPatternRecursive {
		return nil, fmt.Errorf("path pattern %q has %d ** elements; at most %d", truncate(text), n, maxPatternRecursive)
	}
	p := &pathPattern{text: text, rule: rule, exact: !strings.ContainsAny(text, "*?[")}
	body := strings.TrimRight(text, "/")
	switch {
	case body == "" && text != "":
		p.anchor, body = anchorHost, ""
	case strings.HasPrefix(body, "/"):
		p.anchor, body = anchorHost, body[1:]
	default:
		body = strings.TrimPrefix(body, "./")
		p.anchor = anchorWorkspace
		if !strings.Contains(body, "/") {
			p.anchor = anchorName
		}
	}
	if foldCase {
		body = strings.ToLower(body)
	}
	if body != "" {
		for _, seg := range strings.Split(body, "/") {
			switch {
			case seg == "" || seg == "." || seg == "..":
				return nil, fmt.Errorf("path pattern %q has an empty, . or .. element", truncate(text))
			case seg != "**" && strings.Contains(seg, "**"):
				seg = collapseStars(seg)
			}
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("path pattern %q: bad wildcard in %q", truncate(text), truncate(seg))
			}
			p.segs = append(p.segs, seg)
		}
	}
	return p, nil
}

// collapseStars makes "a**b" the "a*b" it means inside one name.
func collapseStars(seg string) string {
	for strings.Contains(seg, "**") {
		seg = strings.ReplaceAll(seg, "**", "*")
	}
	return seg
}

// ValidatePathRules checks a pattern→rule table (a session's path_rules).
func ValidatePathRules(m map[string]api.PathRule) error {
	return NewPathRules(m).Validate()
}

// pathFacts are the checked paths of a call as the policy sees them:
// each resolved path, where it is relative to the workspace, and for each
// access kind the rule each layer (policy data, the session, the
// project) resolved to. Matching happens here, against the compiled
// layers, so the policy reads one fact per path and layer whatever the
// number of rules. The project layer only tightens: a path its most
// specific rule allows (an exception to its own broader rule) gets no
// project fact, so its allow never lets a path through.
func (p *Policy) pathFacts(v WorkspaceVerdict, session, project *PathRules) []any {
	layers := []struct {
		name string
		ix   *pathIndex
	}{{"policy", p.paths.lookup(v.CaseInsensitive)}, {"session", session.lookup(v.CaseInsensitive)}, {"project", project.lookup(v.CaseInsensitive)}}
	out := make([]any, 0, len(v.Paths))
	// One budget for matching every glob of the call (pathmatch.go):
	// forty glob words cost what one does.
	work := maxGlobWork
	for _, c := range v.Paths {
		fact := map[string]any{"value": c.Value, "path": c.Path, "rel": nil, "inside": c.Inside}
		if c.Inside {
			fact["rel"] = c.Rel
		}
		if c.Glob != "" {
			fact["glob"] = c.Glob
		}
		if c.Word != nil {
			fact["shell"] = shellWordFact(c.Word)
		}
		byAccess := map[string]any{}
		// Every layer's index, and the tags', split paths alike (one
		// case rule per call): the target is made once.
		var t pathTarget
		if c.Resolved && !c.Possible {
			t = newTarget(c, v.CaseInsensitive)
			if t.work != nil {
				t.work = &work
			}
		}
		for _, layer := range layers {
			if layer.ix == nil || (!c.Resolved && !c.Possible) {
				continue
			}
			var hits map[int]bool
			if !c.Possible {
				hits = layer.ix.matching(t)
			}
			for _, access := range []string{AccessRead, AccessWrite} {
				var m *pathPattern
				possible := c.Possible
				switch {
				case c.Possible:
					m = layer.ix.strictestStop(access)
				case t.glob != nil && c.Word != nil:
					m, possible = layer.ix.resolveShellGlob(t, hits, access)
				case t.glob != nil:
					m = layer.ix.resolveGlob(t, hits, access)
				default:
					m = layer.ix.resolve(hits, access)
				}
				if m == nil || (layer.name == "project" && m.action(access) == api.Allow) {
					continue
				}
				kind, _ := byAccess[access].(map[string]any)
				if kind == nil {
					kind = map[string]any{}
					byAccess[access] = kind
				}
				rule := map[string]any{"pattern": m.text, "action": m.action(access), "place": m.anchor == anchorHost}
				if possible {
					rule["possible"] = true
				}
				kind[layer.name] = rule
			}
		}
		tags := p.flowPaths.of(c, t, v.CaseInsensitive)
		if len(tags) > 0 {
			fact["tags"] = strings2any(tags)
		}
		if c.Word != nil && len(byAccess) == 0 && len(tags) == 0 && c.Inside && c.Resolved && !c.Possible {
			// A shell word inside the workspace that no rule of either
			// layer meets tells the policy nothing. One outside, or one
			// that may name any path, tells the effects of its command
			// (effects.rego) that they are not confined to the
			// workspace; it is never outside the call itself.
			continue
		}
		fact["rules"] = byAccess
		out = append(out, fact)
	}
	return out
}

// shellWordFact says where a shell word came from: an operand's command
// and word, or a redirection's operator.
func shellWordFact(w *PathWord) map[string]any {
	if w.Redirect != "" {
		return map[string]any{"redirect": w.Redirect}
	}
	if w.Command < 0 {
		return map[string]any{"unread": true}
	}
	return map[string]any{"command": w.Command, "word": w.Word}
}
