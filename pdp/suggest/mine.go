package suggest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// candidate is a rule the answers support, before and after its replay.
type candidate struct {
	pattern     string
	words       []string
	fingerprint string
	evidence    api.SuggestionEvidence
	impact      api.SuggestionImpact
	other       int
	// otherExamples are decisions the rule would change beyond its asks.
	otherExamples []string
}

func (c *candidate) suggestion() api.Suggestion {
	return api.Suggestion{
		Kind: KindCommandRule, Pattern: c.pattern, Action: api.Allow, Scope: "policy",
		Fingerprint: c.fingerprint, Evidence: c.evidence, Impact: c.impact,
		PolicyData: map[string]map[string]string{"commands": {c.pattern: api.Allow}},
	}
}

// group is the allowed level asks of one fingerprint.
type group struct {
	fingerprint string
	argvs       [][]string // each ask's argv, cut at its first word a rule cannot name
	sessions    map[string]bool
	people      map[string]bool // the answering persons (subject) or tokens
	ids         []string
}

// mine groups the allowed asks of the level table by fingerprint and
// keeps each group with enough allows from enough sessions whose
// narrowest shared prefix no refusal of the window would meet.
func mine(asks map[string]*ask, o Options) ([]*candidate, []api.DroppedSuggestion) {
	groups := map[string]*group{}
	var refusals []*ask
	for _, a := range asks {
		if a.refused() {
			refusals = append(refusals, a)
			continue
		}
		if !a.ev.Answer.Allows() || a.ev.Answer.Channel == AcceptChannel || !a.levelAsk() || a.ev.Fingerprint == nil || a.rec == nil {
			continue
		}
		argv, ok := plainArgv(a.rec)
		if !ok {
			continue
		}
		fp := *a.ev.Fingerprint
		g := groups[fp]
		if g == nil {
			g = &group{fingerprint: fp, sessions: map[string]bool{}, people: map[string]bool{}}
			groups[fp] = g
		}
		g.argvs = append(g.argvs, argv)
		g.sessions[a.ev.SessionID] = true
		if sub := a.ev.Answer.AnsweredBySubject; sub != "" {
			g.people["sub:"+sub] = true // a person signed in, however many tokens
		} else if by := a.ev.Answer.AnsweredBy; by != "" {
			g.people[by] = true
		}
		g.ids = append(g.ids, a.ev.DecisionID)
	}
	var cands []*candidate
	var dropped []api.DroppedSuggestion
	for _, g := range groups {
		if len(g.argvs) < o.MinAnswers || len(g.sessions) < o.MinSessions {
			continue
		}
		words := sharedPrefix(g.argvs)
		pattern := strings.Join(words, " ")
		if len(words) < 2 || strings.Join(words[:2], " ") != g.fingerprint {
			// A rule of one word allows every argument of the program,
			// which no answer showed; a fingerprint the words do not
			// spell (a quoted word, a program path) no rule names.
			dropped = append(dropped, drop(g.fingerprint, "a command rule can only name it by a prefix wider than the answers (one word, or words a rule cannot spell)", nil))
			continue
		}
		sort.Strings(g.ids)
		c := &candidate{pattern: pattern, words: words, fingerprint: g.fingerprint,
			evidence: api.SuggestionEvidence{Allows: len(g.argvs), Sessions: len(g.sessions), People: len(g.people), Examples: firstN(g.ids)},
			impact:   api.SuggestionImpact{Examples: []string{}}}
		var refusedIDs []string
		for _, r := range refusals {
			if coversRefusal(words, r) {
				refusedIDs = append(refusedIDs, r.ev.DecisionID)
				if r.ev.Answer != nil && r.ev.Answer.Answer == api.Expired {
					c.evidence.Expired++
				} else {
					c.evidence.Denies++
				}
			}
		}
		if len(refusedIDs) > 0 {
			sort.Strings(refusedIDs)
			dropped = append(dropped, drop(pattern, fmt.Sprintf("it covers %d asks that were denied or expired", len(refusedIDs)), firstN(refusedIDs)))
			continue
		}
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].pattern < cands[j].pattern })
	return cands, dropped
}

// plainArgv is the argv of a recorded one-part command, cut before its
// first word a command rule cannot spell: one that is not literal, is
// empty or holds white space. The program word must be a plain
// lower-case name, as rules compare programs.
func plainArgv(rec *pdp.Recorded) ([]string, bool) {
	shell, _ := rec.Input["shell"].(map[string]any)
	if shell == nil || shell["parsed"] != true {
		return nil, false
	}
	parts, _ := shell["parts"].([]any)
	if len(parts) != 1 {
		return nil, false
	}
	part, _ := parts[0].(map[string]any)
	argv, literal := words(part)
	var out []string
	for i, w := range argv {
		if i >= len(literal) || !literal[i] || w == "" || strings.ContainsAny(w, " \t\r\n\v\f") {
			break
		}
		out = append(out, w)
	}
	if len(out) == 0 || strings.ContainsAny(out[0], `/\`) || out[0] != strings.ToLower(out[0]) {
		return nil, false
	}
	return out, true
}

// words reads a recorded command's argv and which words are literal.
func words(m map[string]any) ([]string, []bool) {
	rawArgv, _ := m["argv"].([]any)
	rawLit, _ := m["literal"].([]any)
	argv := make([]string, 0, len(rawArgv))
	for _, w := range rawArgv {
		s, _ := w.(string)
		argv = append(argv, s)
	}
	lit := make([]bool, 0, len(rawLit))
	for _, l := range rawLit {
		b, _ := l.(bool)
		lit = append(lit, b)
	}
	return argv, lit
}

// sharedPrefix is the longest run of first words every argv shares.
func sharedPrefix(argvs [][]string) []string {
	prefix := argvs[0]
	for _, argv := range argvs[1:] {
		n := 0
		for n < len(prefix) && n < len(argv) && prefix[n] == argv[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return prefix
}

// coversRefusal: the rule could meet the refused ask — some command of
// it, or what a wrapper of it runs, starts with the rule's words, the
// program compared by name. A refusal whose command was not recorded or
// not parsed counts when its text holds every word.
func coversRefusal(words []string, r *ask) bool {
	if r.rec != nil {
		if cmds, ok := commands(r.rec); ok {
			for _, argv := range cmds {
				if startsWith(argv, words) {
					return true
				}
			}
			return false
		}
	}
	text := strings.ToLower(fmt.Sprint(r.ev.Args))
	for _, w := range words {
		if !strings.Contains(text, strings.ToLower(w)) {
			return false
		}
	}
	return true
}

// commands are the argvs of a recorded input's parsed shell commands.
func commands(rec *pdp.Recorded) ([][]string, bool) {
	shell, _ := rec.Input["shell"].(map[string]any)
	if shell == nil || shell["parsed"] != true {
		return nil, false
	}
	raw, _ := shell["commands"].([]any)
	out := make([][]string, 0, len(raw))
	for _, c := range raw {
		m, _ := c.(map[string]any)
		argv, _ := words(m)
		out = append(out, argv)
	}
	return out, true
}

// startsWith: some suffix of argv (a wrapper's command) begins with the
// words, its program compared as rules compare it (program name,
// lower-cased, with or without a version suffix).
func startsWith(argv, words []string) bool {
	for i := range argv {
		if len(argv)-i < len(words) || !runsAs(argv[i], words[0]) {
			continue
		}
		if equalWords(argv[i+1:i+len(words)], words[1:]) {
			return true
		}
	}
	return false
}

func equalWords(a, b []string) bool {
	for k := range b {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// runsAs: the word runs as the program name (its last path element,
// lower-cased, with or without a version suffix, as the policy's
// program_names has it).
func runsAs(word, program string) bool {
	name := strings.ToLower(word)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return name == program || strings.TrimRight(name, "0123456789.") == program
}

// mentions: some word of some command runs as the program, so a rule
// for it may change the decision.
func mentions(rec *pdp.Recorded, program string) bool {
	for ; rec != nil; rec = rec.Parent {
		cmds, ok := commands(rec)
		if !ok {
			continue
		}
		for _, argv := range cmds {
			for _, w := range argv {
				if runsAs(w, program) {
					return true
				}
			}
		}
	}
	return false
}

func firstN(ids []string) []string {
	if len(ids) > maxExamples {
		return append([]string(nil), ids[:maxExamples]...)
	}
	return append([]string{}, ids...)
}
