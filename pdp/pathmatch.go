package pdp

import (
	"path"
	"strings"

	"github.com/toolperm/pdp/api"
)

// pathIndex is one layer of path rules compiled for lookup: three tries of
// pattern elements (workspace-anchored, host, names at any depth), where
// literal elements, "lit*" and "*lit" are map lookups and only other
// wildcards are tried one by one. A path walks the tries with its own
// elements, so what it costs depends on the path and the rules that
// share its elements, not on how many rules there are.
type pathIndex struct {
	patterns               []*pathPattern
	workspace, host, names *trieNode
	foldCase               bool
}

type trieNode struct {
	lit    map[string]*trieNode
	prefix map[string]*trieNode // "lit*" by its literal prefix
	suffix map[string]*trieNode // "*lit" by its literal suffix ("*" is suffix "")
	wild   []wildEdge           // every other wildcard element
	any    *trieNode            // "**"
	rules  []int                // patterns that end here
}

type wildEdge struct {
	seg  string
	next *trieNode
}

func compilePathIndex(m map[string]api.PathRule, foldCase bool) (*pathIndex, error) {
	ix := &pathIndex{workspace: &trieNode{}, host: &trieNode{}, names: &trieNode{}, foldCase: foldCase}
	for text, rule := range m {
		p, err := parsePathPattern(text, rule, foldCase)
		if err != nil {
			return nil, err
		}
		root := ix.workspace
		switch p.anchor {
		case anchorHost:
			root = ix.host
		case anchorName:
			root = ix.names
		}
		root.insert(p.segs, len(ix.patterns))
		ix.patterns = append(ix.patterns, p)
	}
	return ix, nil
}

func (n *trieNode) insert(segs []string, rule int) {
	for _, seg := range segs {
		n = n.child(seg)
	}
	n.rules = append(n.rules, rule)
}

func (n *trieNode) child(seg string) *trieNode {
	into := func(m *map[string]*trieNode, key string) *trieNode {
		if *m == nil {
			*m = map[string]*trieNode{}
		}
		if (*m)[key] == nil {
			(*m)[key] = &trieNode{}
		}
		return (*m)[key]
	}
	switch {
	case seg == "**":
		if n.any == nil {
			n.any = &trieNode{}
		}
		return n.any
	case !strings.ContainsAny(seg, `*?[\`):
		return into(&n.lit, seg)
	case strings.HasPrefix(seg, "*") && !strings.ContainsAny(seg[1:], `*?[\`):
		return into(&n.suffix, seg[1:])
	case strings.HasSuffix(seg, "*") && !strings.ContainsAny(seg[:len(seg)-1], `*?[\`):
		return into(&n.prefix, seg[:len(seg)-1])
	}
	for _, e := range n.wild {
		if e.seg == seg {
			return e.next
		}
	}
	next := &trieNode{}
	n.wild = append(n.wild, wildEdge{seg: seg, next: next})
	return next
}

// trieWalk collects the patterns that match a path or one of its
// ancestors (a matched directory covers what is in it).
type trieWalk struct {
	segs []string
	hits map[int]bool
	seen map[trieVisit]bool // "**" edges already tried at an element
}

type trieVisit struct {
	n *trieNode
	k int
}

func (w *trieWalk) from(n *trieNode, i int) {
	if len(n.rules) > 0 && w.hits == nil {
		w.hits = map[int]bool{}
	}
	for _, r := range n.rules {
		w.hits[r] = true
	}
	if n.any != nil {
		for k := i; k <= len(w.segs); k++ {
			v := trieVisit{n.any, k}
			if w.seen == nil {
				w.seen = map[trieVisit]bool{}
			}
			if !w.seen[v] {
				w.seen[v] = true
				w.from(n.any, k)
			}
		}
	}
	if i == len(w.segs) {
		return
	}
	seg := w.segs[i]
	if c := n.lit[seg]; c != nil {
		w.from(c, i+1)
	}
	if n.prefix != nil {
		for j := 0; j <= len(seg); j++ {
			if c := n.prefix[seg[:j]]; c != nil {
				w.from(c, i+1)
			}
		}
	}
	if n.suffix != nil {
		for j := 0; j <= len(seg); j++ {
			if c := n.suffix[seg[j:]]; c != nil {
				w.from(c, i+1)
			}
		}
	}
	for _, e := range n.wild {
		if ok, _ := path.Match(e.seg, seg); ok {
			w.from(e.next, i+1)
		}
	}
}

// pathTarget is a checked path as the rules see it.
type pathTarget struct {
	abs    []string // elements of the resolved path
	rel    []string // elements below the workspace; nil when outside
	inside bool
	glob   []string // for a glob, the wildcard elements below the path
	// work is what matching the glob against wildcard patterns may
	// still spend (maxGlobWork steps, shared by every layer and, in
	// pathFacts, by every path of the call); past it a pattern is taken
	// to meet the glob: a possible match, which asks.
	work *int
}

// maxGlobWork bounds the steps of matching a call's globs against the
// patterns of every layer: patterns with many wildcards against a long
// glob word cost with their product. Ordinary calls spend a few hundred.
const maxGlobWork = 200_000

func splitPath(p string, foldCase bool) []string {
	if foldCase {
		p = strings.ToLower(p)
	}
	var out []string
	for _, seg := range strings.Split(p, "/") {
		if seg != "" && seg != "." {
			out = append(out, seg)
		}
	}
	return out
}

func (ix *pathIndex) target(c CheckedPath) pathTarget { return newTarget(c, ix.foldCase) }

// newTarget is a checked path as an index of this case rule sees it.
func newTarget(c CheckedPath, foldCase bool) pathTarget {
	t := pathTarget{abs: splitPath(c.Path, foldCase), inside: c.Inside}
	if c.Inside {
		t.rel = splitPath(c.Rel, foldCase)
	}
	if c.Glob != "" {
		t.glob = splitPath(c.Glob, foldCase)
		work := maxGlobWork
		t.work = &work
	}
	return t
}

// matching lists the patterns that match the path or an ancestor; nil
// for none (most paths meet no rule: nothing is allocated for them).
func (ix *pathIndex) matching(t pathTarget) map[int]bool {
	w := trieWalk{segs: t.abs}
	w.from(ix.host, 0)
	names := t.abs
	if t.inside {
		w.segs, w.seen = t.rel, nil
		w.from(ix.workspace, 0)
		names = t.rel
	}
	if len(ix.names.lit)+len(ix.names.prefix)+len(ix.names.suffix)+len(ix.names.wild) > 0 {
		w.segs, w.seen = names, nil
		for k := range names {
			w.from(ix.names, k)
		}
	}
	return w.hits
}

// resolve is the rule this layer has for the path and access kind, nil
// for none. Within a layer an exact pattern (no wildcard) wins over
// wildcards, the longest first, so ".env.example" can exempt a file from
// ".env.*"; among wildcards the strictest wins.
func (ix *pathIndex) resolve(hits map[int]bool, access string) *pathPattern {
	var best *pathPattern
	for r := range hits {
		p := ix.patterns[r]
		if p.action(access) == "" {
			continue
		}
		if best == nil || moreSpecific(p, best, access) {
			best = p
		}
	}
	return best
}

func moreSpecific(a, b *pathPattern, access string) bool {
	if a.exact != b.exact {
		return a.exact
	}
	ra, rb := actionRank(a.action(access)), actionRank(b.action(access))
	if a.exact && len(a.text) != len(b.text) {
		return len(a.text) > len(b.text)
	}
	if ra != rb {
		return ra > rb
	}
	if len(a.text) != len(b.text) {
		return len(a.text) > len(b.text)
	}
	return a.text < b.text
}

func actionRank(a string) int {
	switch a {
	case api.Allow:
		return 0
	case api.Ask:
		return 2
	}
	return 3
}

// resolveGlob is the rule this layer has for a glob. A glob lists names,
// so it is judged as its base directory (a rule matching the base or an
// ancestor applies, whatever its action) and, for ask and deny, also by
// every anchored pattern — a place, or a path below the workspace — that
// something the glob can list lies in. A name pattern (".env") guards
// reading that file, not listing its name, so a glob that merely could
// list it is not stopped by it. The strictest rule wins; a glob is
// compared with every anchored pattern of the layer.
func (ix *pathIndex) resolveGlob(t pathTarget, covering map[int]bool, access string) *pathPattern {
	var best *pathPattern
	for r, p := range ix.patterns {
		a := p.action(access)
		switch {
		case a == "":
			continue
		case covering[r]:
		case a == api.Allow || !ix.globMeets(t, p):
			continue
		}
		if best == nil || stricter(p, best, access) {
			best = p
		}
	}
	return best
}

// stricter orders the rules of a glob: the strictest, then the longest
// pattern, then the first in text order.
func stricter(a, b *pathPattern, access string) bool {
	ra, rb := actionRank(a.action(access)), actionRank(b.action(access))
	if ra != rb {
		return ra > rb
	}
	if len(a.text) != len(b.text) {
		return len(a.text) > len(b.text)
	}
	return a.text < b.text
}

// globMeets reports whether an anchored pattern p matches something the
// glob can list, or a directory holding it.
func (ix *pathIndex) globMeets(t pathTarget, p *pathPattern) bool {
	var base []string
	switch {
	case p.anchor == anchorHost:
		base = t.abs
	case p.anchor == anchorWorkspace && t.inside:
		base = t.rel
	default:
		return false
	}
	g := append(append([]string{}, base...), t.glob...)
	return segsMeet(g, append(append([]string{}, p.segs...), "**"), t.work)
}

// segsMeet reports whether two element patterns ("**" any run of
// elements) match a common path, within work (nil: unbounded).
func segsMeet(a, b []string, work *int) bool {
	return meet(len(a), len(b),
		func(i int) bool { return a[i] == "**" },
		func(j int) bool { return b[j] == "**" },
		func(i, j int) bool { return segMeetWithin(a[i], b[j], work) }, work)
}

// segMeet reports whether two element wildcards match a common name.
// Character classes are taken to meet each other (stricter, never looser).
func segMeet(x, y string) bool { return segMeetWithin(x, y, nil) }

func segMeetWithin(x, y string, work *int) bool {
	a, b := wildTokens(x), wildTokens(y)
	return meet(len(a), len(b),
		func(i int) bool { return a[i].star },
		func(j int) bool { return b[j].star },
		func(i, j int) bool { return a[i].meets(b[j]) }, work)
}

// meet searches the product of two patterns of n and m tokens for a way
// from both starts to both ends. A star matches any run of units (none
// too); two other tokens advance together when they can match the same
// unit. Each step spends one of work (nil: unbounded); with none left
// the patterns are taken to meet — stricter, never looser.
func meet(n, m int, starA, starB func(int) bool, same func(i, j int) bool, work *int) bool {
	type state struct{ i, j int }
	seen := map[state]bool{{0, 0}: true}
	queue := []state{{0, 0}}
	push := func(i, j int) {
		if s := (state{i, j}); !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		if work != nil {
			if *work <= 0 {
				return true
			}
			*work--
		}
		s := queue[0]
		queue = queue[1:]
		if s.i == n && s.j == m {
			return true
		}
		aStar := s.i < n && starA(s.i)
		bStar := s.j < m && starB(s.j)
		if aStar {
			push(s.i+1, s.j) // the star ends
			if s.j < m && !bStar {
				push(s.i, s.j+1) // it takes the other's unit
			}
		}
		if bStar {
			push(s.i, s.j+1)
			if s.i < n && !aStar {
				push(s.i+1, s.j)
			}
		}
		if s.i < n && s.j < m && !aStar && !bStar && same(s.i, s.j) {
			push(s.i+1, s.j+1)
		}
	}
	return false
}

// wildToken is one unit of an element wildcard (path.Match syntax).
type wildToken struct {
	star  bool   // *
	one   bool   // ?
	class string // [...], as written
	lit   rune
}

func wildTokens(s string) []wildToken {
	var out []wildToken
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '*':
			out = append(out, wildToken{star: true})
		case '?':
			out = append(out, wildToken{one: true})
		case '\\':
			if i+1 < len(rs) {
				i++
			}
			out = append(out, wildToken{lit: rs[i]})
		case '[':
			j := i + 1
			for j < len(rs) && rs[j] != ']' {
				if rs[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(rs) {
				j = len(rs) - 1
			}
			out = append(out, wildToken{class: string(rs[i : j+1])})
			i = j
		default:
			out = append(out, wildToken{lit: rs[i]})
		}
	}
	return out
}

// meets reports whether two non-star tokens can match the same character.
func (t wildToken) meets(u wildToken) bool {
	switch {
	case t.one || u.one:
		return true
	case t.class != "" && u.class != "":
		return true
	case t.class != "":
		ok, _ := path.Match(t.class, string(u.lit))
		return ok
	case u.class != "":
		ok, _ := path.Match(u.class, string(t.lit))
		return ok
	}
	return t.lit == u.lit
}

// resolveShellGlob is the rule this layer has for a glob a shell expands
// into the names its command then opens: the rule of its base directory
// (certain), else the strictest deny or ask pattern — anchored or a name
// — that one of its names may match (possible: the files may not exist).
// Unlike a glob tool's listing, a name pattern (".env") counts, since the
// command reads what the glob names. A wildcard that starts a name never
// matches a leading dot, as bash reads globs without dotglob.
func (ix *pathIndex) resolveShellGlob(t pathTarget, covering map[int]bool, access string) (m *pathPattern, possible bool) {
	if m := ix.resolve(covering, access); m != nil {
		return m, false
	}
	for _, p := range ix.patterns {
		a := p.action(access)
		if a == "" || a == api.Allow || !ix.shellGlobMeets(t, p) {
			continue
		}
		if m == nil || stricter(p, m, access) {
			m = p
		}
	}
	return m, m != nil
}

// shellGlobMeets reports whether pattern p matches one of the names a
// shell glob expands to, or a directory holding one.
func (ix *pathIndex) shellGlobMeets(t pathTarget, p *pathPattern) bool {
	var base []string
	segs := append(append([]string{}, p.segs...), "**")
	switch {
	case p.anchor == anchorHost:
		base = t.abs
	case p.anchor == anchorWorkspace && t.inside:
		base = t.rel
	case p.anchor == anchorName:
		base = t.abs
		if t.inside {
			base = t.rel
		}
		segs = append([]string{"**"}, segs...)
	default:
		return false
	}
	g := append(append([]string{}, base...), t.glob...)
	return meet(len(g), len(segs),
		func(i int) bool { return g[i] == "**" },
		func(j int) bool { return segs[j] == "**" },
		func(i, j int) bool {
			if startsWild(g[i]) && strings.HasPrefix(segs[j], ".") {
				return false
			}
			return segMeetWithin(g[i], segs[j], t.work)
		}, t.work)
}

// startsWild: a name pattern whose first character is a wildcard.
func startsWild(seg string) bool {
	return seg != "" && strings.IndexByte("*?[", seg[0]) >= 0
}

// strictestStop is the strictest deny or ask pattern of the layer for an
// access kind: what a word that may name any path may meet.
func (ix *pathIndex) strictestStop(access string) *pathPattern {
	var best *pathPattern
	for _, p := range ix.patterns {
		if a := p.action(access); a == api.Deny || a == api.Ask {
			if best == nil || likelierStop(p, best, access) {
				best = p
			}
		}
	}
	return best
}

// likelierStop orders the stops a word that may name any path meets:
// the strictest, then a name or workspace pattern (".env.*", what such
// a word most likely names) before a place on the host, then as
// stricter does.
func likelierStop(a, b *pathPattern, access string) bool {
	if ra, rb := actionRank(a.action(access)), actionRank(b.action(access)); ra != rb {
		return ra > rb
	}
	if ha, hb := a.anchor == anchorHost, b.anchor == anchorHost; ha != hb {
		return hb
	}
	return stricter(a, b, access)
}
