package pdp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
)

// The session's flow (docs/design.md §4, "Flow"): a session tree keeps
// the labels its allowed calls carried (untrusted input seen, a secret
// read, an external effect), and the policy stops the call that would
// give it all three (policies/flow.rego). Labels are only ever added: a
// call the PDP allows adds its own, and so do a person's allow of an ask
// and a runtime's outcome that the call ran.

// FlowRule is the rule of the flow's stop (policies/flow.rego).
const FlowRule = api.FlowRule

// The path tags of policy data flow.paths, and the tag of a shell word
// that may name any path where some place is tagged sensitive.
const (
	TagSensitive      = "sensitive"
	TagUntrusted      = "untrusted"
	TagMaybeSensitive = "maybe_sensitive"
)

// pathTags is policy data flow.paths compiled: gitignore-style patterns
// (as path rules are written) to the tags of the places they name.
type pathTags struct {
	// index holds the patterns, case-sensitive and case-insensitive;
	// tags[i] are the tags of index's pattern i.
	index [2]*pathIndex
	tags  [2][][]string
	// sensitive: some pattern is tagged sensitive, so a shell word that
	// may name any path may name one.
	sensitive bool
}

// decodePathTags reads flow.paths: an object from a pattern to a tag or
// a list of tags. A malformed table fails the policy's activation.
func decodePathTags(raw any) (*pathTags, error) {
	if raw == nil {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("data.flow.paths: %w", err)
	}
	var table map[string]json.RawMessage
	if err := json.Unmarshal(b, &table); err != nil {
		return nil, fmt.Errorf("data.flow.paths must be an object from a path pattern to a tag")
	}
	byPattern := map[string][]string{}
	rules := map[string]api.PathRule{}
	out := &pathTags{}
	for pattern, v := range table {
		var tags []string
		var one string
		if json.Unmarshal(v, &one) == nil {
			tags = []string{one}
		} else if err := json.Unmarshal(v, &tags); err != nil {
			return nil, fmt.Errorf("data.flow.paths[%q]: a tag (%q or %q) or a list of tags", pattern, TagSensitive, TagUntrusted)
		}
		for _, t := range tags {
			if t != TagSensitive && t != TagUntrusted {
				return nil, fmt.Errorf("data.flow.paths[%q]: %q is not a tag (%q or %q)", pattern, truncate(t), TagSensitive, TagUntrusted)
			}
			out.sensitive = out.sensitive || t == TagSensitive
		}
		byPattern[pattern] = tags
		// The index keeps a rule per pattern; the tags are looked up by
		// the pattern's text.
		rules[pattern] = api.PathRule{Read: api.Allow, Write: api.Allow}
	}
	for fold := range 2 {
		ix, err := compilePathIndex(rules, fold == 1)
		if err != nil {
			return nil, fmt.Errorf("data.flow.paths: %w", err)
		}
		out.index[fold] = ix
		out.tags[fold] = make([][]string, len(ix.patterns))
		for i, p := range ix.patterns {
			out.tags[fold][i] = byPattern[p.text]
		}
	}
	return out, nil
}

// of is the tags of a checked path (tg: its target, newTarget): those of
// every pattern naming it or
// a place above it, and for a glob those of every pattern one of the
// names it expands to may match (cat *.pem reads the keys). A shell word
// built at run time from what the call cannot see — a substitution's
// output, words read from another command, a variable named like a
// secret — may name a sensitive file (TagMaybeSensitive: the policy
// counts it in a command that sends); any other path that could not be
// resolved has none.
func (t *pathTags) of(c CheckedPath, tg pathTarget, foldCase bool) []string {
	if t == nil {
		return nil
	}
	if c.Possible {
		if c.Word != nil && t.sensitive && maySecret(c.Value) {
			return maybeSensitive
		}
		return nil
	}
	if !c.Resolved {
		return nil
	}
	fold := 0
	if foldCase {
		fold = 1
	}
	ix := t.index[fold]
	var out []string
	add := func(i int) {
		for _, tag := range t.tags[fold][i] {
			if !slices.Contains(out, tag) {
				out = append(out, tag)
			}
		}
	}
	for i := range ix.matching(tg) {
		add(i)
	}
	if tg.glob != nil {
		// A glob that may expand to a sensitive file may name one, as a
		// word built at run time may: it counts where the command sends
		// (scp deploy/*.pem host:), not for every cat *.md.
		for i, p := range ix.patterns {
			if ix.shellGlobMeets(tg, p) {
				for _, tag := range t.tags[fold][i] {
					if tag == TagSensitive {
						tag = TagMaybeSensitive
					}
					if !slices.Contains(out, tag) {
						out = append(out, tag)
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// maybeSensitive is the tags of a word that may name a secret (shared:
// nothing changes it).
var maybeSensitive = []string{TagMaybeSensitive}

// secretName is a variable named like a secret ($GITHUB_TOKEN,
// ${AWS_SECRET_ACCESS_KEY}, $DB_PASSWORD).
var secretName = regexp.MustCompile(`(?i)\$\{?[a-z0-9_]*(token|secret|passw|passwd|pwd|key|credential|auth|cookie|session)`)

// maySecret: a word that is not literal may hold a secret — it is built
// from a command's output ($(…), `…`, <(…)), from words another command
// writes (xargs, read: the analysis shows them as <…>), or from a
// variable named like a secret. $VERSION in a URL is none of these.
func maySecret(v string) bool {
	return strings.Contains(v, "$(") || strings.Contains(v, "`") || strings.Contains(v, "<(") ||
		strings.HasPrefix(v, "<") || secretName.MatchString(v)
}

// labelsInput is the labels of a session tree as the policy reads them
// (input.session.labels): each label to the decision that set it and
// that call's summary.
func labelsInput(s *SessionTree) map[string]any {
	if len(TreeLabels(s)) == 0 {
		return noLabels
	}
	out := map[string]any{}
	for cur := s; cur != nil; cur = cur.Parent {
		for _, l := range cur.Labels {
			if _, ok := out[l.Label]; !ok {
				out[l.Label] = map[string]any{"decision_id": l.DecisionID, "summary": l.Summary}
			}
		}
	}
	return out
}

// noLabels is the labels of a tree without any: one map shared by every
// input, which nothing changes.
var noLabels = map[string]any{}

// TreeLabels are the labels of a session tree (kept on its root; an
// inline tree may carry them at any level). Callers must not change the
// list.
func TreeLabels(s *SessionTree) []api.FlowLabel {
	var out []api.FlowLabel
	for cur := s; cur != nil; cur = cur.Parent {
		if len(cur.Labels) == 0 {
			continue
		}
		if out == nil && cur.Parent == nil {
			return cur.Labels // the root's, as a stored tree has them
		}
		out = append(out, cur.Labels...)
	}
	return out
}

// newLabels are the labels of d the tree does not have yet, as the
// decision sets them.
func newLabels(s *SessionTree, d api.Decision, req api.DecideRequest, at time.Time) []api.FlowLabel {
	if len(d.Labels) == 0 {
		return nil // most allowed calls carry none: nothing to look up
	}
	have := map[string]bool{}
	for _, l := range TreeLabels(s) {
		have[l.Label] = true
	}
	var out []api.FlowLabel
	for _, l := range d.Labels {
		if !have[l] {
			out = append(out, api.FlowLabel{Label: l, DecisionID: d.DecisionID, SessionID: req.SessionID, Time: at, Summary: CallSummary(req)})
		}
	}
	return out
}

// rootID is the id of the root of a session tree.
func rootID(s *SessionTree) string {
	for s != nil && s.Parent != nil {
		s = s.Parent
	}
	if s == nil {
		return ""
	}
	return s.ID
}

// maxSummary bounds a call's summary, in bytes.
const maxSummary = 160

// summaryArgs are the arguments that say what a call touches, first
// found first: a command, a URL, a query, a path.
var summaryArgs = []string{"command", "url", "query", "file_path", "path", "absolute_path", "pattern"}

// CallSummary says in one line what a call did, for the labels it sets
// and the reasons that name it: the tool and the first argument of
// summaryArgs it has, cut to maxSummary bytes, control characters
// shown as spaces.
func CallSummary(req api.DecideRequest) string {
	name := req.Tool
	if name == "" {
		name = req.Capability
	}
	s := name
	for _, a := range summaryArgs {
		if v, ok := req.Args[a].(string); ok && v != "" {
			s = name + " " + v
			break
		}
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxSummary {
		cut := maxSummary
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// flowLabelWords are the labels a flow table may give a call: the three,
// and network (a read from the network, which sends once the session
// has a secret).
var flowLabelWords = []string{api.LabelUntrusted, api.LabelSensitive, api.LabelExternal, "network"}

// flow checks data.flow (policies/flow.rego): a key the policy does not
// read, or a value of the wrong shape, would switch a part of the flow
// off without a word. data.flow.paths is checked as it is compiled
// (decodePathTags).
func (c *dataChecker) flow(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, k := range keys {
		p := at(path, k)
		switch k {
		case "enabled":
			c.boolean(p, m[k])
		case "action":
			c.flowActions(p, m[k])
		case "capabilities":
			c.labelTable(p, m[k], func(n string) string {
				if !ValidPattern(n) {
					return "is not a capability or a.b.* prefix"
				}
				return ""
			})
		case "blind_capabilities":
			c.patternList(p, m[k])
		case "shells", "wrappers":
			c.texts(p, m[k])
		case "paths":
			// decodePathTags
		case "programs":
			table, names, _ := c.object(p, m[k])
			for _, n := range names {
				c.flowProgram(at(p, n), table[n])
			}
		default:
			c.add(p, "is not a key of data.flow; want enabled, action, capabilities, blind_capabilities, shells, wrappers, paths or programs")
		}
	}
}

// flowActions checks data.flow.action: a level to ask or deny.
func (c *dataChecker) flowActions(path []string, v any) {
	c.byLevel(path, v, func(p []string, a any) {
		if s, _ := a.(string); s != api.Ask && s != api.Deny {
			c.add(p, "%s: the flow rule asks or denies; want ask or deny", kindOf(a))
		}
	})
}

// labelTable checks an object from a key (which badKey judges: "" for a
// good one, else the problem) to a list of flow labels.
func (c *dataChecker) labelTable(path []string, v any, badKey func(string) string) {
	table, names, _ := c.object(path, v)
	for _, n := range names {
		if problem := badKey(n); problem != "" {
			c.add(at(path, n), "%s", problem)
		}
		c.flowLabels(at(path, n), table[n])
	}
}

func (c *dataChecker) flowLabels(path []string, v any) {
	for i, l := range c.texts(path, v) {
		if !slices.Contains(flowLabelWords, l) {
			c.add(atIndex(path, i), "%q is not a flow label; want %s", truncate(l), strings.Join(flowLabelWords, ", "))
		}
	}
}

func (c *dataChecker) flowProgram(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	if name := path[len(path)-1]; name != strings.ToLower(name) {
		c.add(path, "programs are compared lower-cased: write %q", strings.ToLower(name))
	}
	for _, k := range keys {
		p := at(path, k)
		switch k {
		case "labels":
			c.flowLabels(p, m[k])
		case "only_bare":
			c.boolean(p, m[k])
		case "value_options":
			c.texts(p, m[k])
		case "send_words", "secret_words":
			for i, re := range c.texts(p, m[k]) {
				if _, err := regexp.Compile(re); err != nil {
					c.add(atIndex(p, i), "%q is not a regular expression: %v", truncate(re), err)
				}
			}
		case "subcommands":
			c.labelTable(p, m[k], func(n string) string {
				if strings.TrimSpace(n) != n || n == "" || strings.Contains(n, "  ") {
					return "a sub-command is words separated by single spaces"
				}
				return ""
			})
		default:
			c.add(p, "is not a key of a flow program; want labels, only_bare, value_options, send_words, secret_words or subcommands")
		}
	}
}
