package pdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gobwas "github.com/gobwas/glob"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/toolperm/pdp/api"
)

// The policy's data tables are read by its rules, not by Go, so a value
// the rules do not understand is not an error OPA reports: an action
// spelled "alow" makes a rule that never matches, a misspelled key of
// the program table ("write_option") makes a writing option read. These
// are found when the policy is compiled, so a policy with one is never
// activated, and `pdp policy check` reports what `serve` refuses.

// DataProblem is one value of the policy's data its rules do not
// understand: where it is (data.rules["mcp.linear.*"]) and why.
type DataProblem struct {
	// Path is the document's path from data's root, key by key; a
	// list's element is "[i]".
	Path []string
	Msg  string
	// File is the data file that holds the value, when the loader knows
	// it (rules/data.json).
	File string
}

// Where spells the path as Rego refers to it: data.rules["mcp.linear.*"].
func (p DataProblem) Where() string {
	var b strings.Builder
	b.WriteString("data")
	for _, k := range p.Path {
		if _, ok := ListIndex(k); ok {
			b.WriteString(k)
		} else if ast.IsVarCompatibleString(k) {
			b.WriteString("." + k)
		} else {
			b.WriteString("[" + strconv.Quote(k) + "]")
		}
	}
	return b.String()
}

func (p DataProblem) String() string {
	if p.File != "" {
		return p.File + ": " + p.Where() + ": " + p.Msg
	}
	return p.Where() + ": " + p.Msg
}

// DataError lists every problem of a policy's data, in the order of the
// tables and their keys.
type DataError struct{ Problems []DataProblem }

func (e *DataError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return fmt.Sprintf("%d problem(s) in the policy's data:\n  %s", len(e.Problems), strings.Join(lines, "\n  "))
}

// checkPolicyData reads the tables the shipped rules read and checks
// their shapes and values. Tables the policy does not have are not
// checked: a policy of its own may read other data.
func checkPolicyData(ctx context.Context, compiler *ast.Compiler, store storage.Store) error {
	c := &dataChecker{}
	for _, t := range []struct {
		query string
		path  []string
		check func([]string, any)
	}{
		{"data.rules", []string{"rules"}, c.actionTable(true)},
		{"data.levels", []string{"levels"}, c.levels},
		{"data.commands", []string{"commands"}, c.commands},
		{"data.ask_always", []string{"ask_always"}, c.patternList},
		{"data.dangerous", []string{"dangerous"}, c.dangerous},
		{"data.floor", []string{"floor"}, c.floor},
		{"data.shell.effects", []string{"shell", "effects"}, c.boolean},
		{"data.shell.programs", []string{"shell", "programs"}, c.programs},
		{"data.path_access", []string{"path_access"}, c.pathAccess},
		{"data.tool_actions", []string{"tool_actions"}, c.toolActions},
		{"data.shell.wrappers", []string{"shell", "wrappers"}, c.words},
		{"data.shell.interpreters", []string{"shell", "interpreters"}, c.words},
		{"data.shell.inline_code_flags", []string{"shell", "inline_code_flags"}, c.words},
		{"data.shell.package_runners", []string{"shell", "package_runners"}, c.words},
		{"data.shell.dangerous_words", []string{"shell", "dangerous_words"}, c.words},
		{"data.shell.screened_variables", []string{"shell", "screened_variables"}, c.words},
		{"data.shell.text_processors", []string{"shell", "text_processors"}, c.words},
		{"data.shell.option_programs", []string{"shell", "option_programs"}, c.words},
		{"data.shell.state_builtins", []string{"shell", "state_builtins"}, c.words},
		{"data.shell.command_flags", []string{"shell", "command_flags"}, c.wordLists},
		{"data.shell.destructive", []string{"shell", "destructive"}, c.wordLists},
		{"data.flow", []string{"flow"}, c.flow},
	} {
		v, err := readData(ctx, compiler, store, t.query)
		if err != nil {
			return err
		}
		if v != nil {
			t.check(t.path, v)
		}
	}
	if len(c.problems) > 0 {
		return &DataError{Problems: c.problems}
	}
	return nil
}

type dataChecker struct{ problems []DataProblem }

func (c *dataChecker) add(path []string, format string, args ...any) {
	c.problems = append(c.problems, DataProblem{Path: slices.Clone(path), Msg: fmt.Sprintf(format, args...)})
}

func at(path []string, key string) []string { return append(slices.Clone(path), key) }

// atIndex is a list's element: its path element is "[i]".
func atIndex(path []string, i int) []string { return at(path, "["+strconv.Itoa(i)+"]") }

// ListIndex reads a path element atIndex wrote: the index and true.
func ListIndex(k string) (int, bool) {
	if len(k) < 3 || k[0] != '[' || k[len(k)-1] != ']' {
		return 0, false
	}
	i, err := strconv.Atoi(k[1 : len(k)-1])
	return i, err == nil && i >= 0
}

// object returns v's keys in order, or records that v is not an object.
func (c *dataChecker) object(path []string, v any) (map[string]any, []string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.add(path, "must be an object, got %s", kindOf(v))
		return nil, nil, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys, true
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", truncate(v))
	case bool:
		return fmt.Sprintf("%v", v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%v", v)
	}
}

// actionTable checks pattern→action (a capability or a.b.* prefix →
// allow, ask, deny, and assess where the table may say it).
func (c *dataChecker) actionTable(assess bool) func([]string, any) {
	return func(path []string, v any) {
		m, keys, ok := c.object(path, v)
		if !ok {
			return
		}
		for _, k := range keys {
			if !ValidPattern(k) {
				c.add(at(path, k), "is not a capability or a.b.* prefix")
			}
			c.action(at(path, k), m[k], assess)
		}
	}
}

func (c *dataChecker) action(path []string, v any, assess bool) {
	a, _ := v.(string)
	switch {
	case a == api.Allow, a == api.Ask, a == api.Deny:
	case a == Assess && assess:
	case assess:
		c.add(path, "%s is not an action; want allow, ask, deny or assess", kindOf(v))
	default:
		c.add(path, "%s is not an action; want allow, ask or deny", kindOf(v))
	}
}

func (c *dataChecker) levels(path []string, v any) { c.byLevel(path, v, c.actionTable(true)) }

// byLevel checks an object keyed by permission level, each value by
// check.
func (c *dataChecker) byLevel(path []string, v any, check func([]string, any)) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, k := range keys {
		switch api.Level(k) {
		case api.ReadOnly, api.ReadWrite, api.Smart, api.Full:
		default:
			c.add(at(path, k), "is not a permission level; want READ_ONLY, READ_WRITE, SMART or FULL")
		}
		check(at(path, k), m[k])
	}
}

func (c *dataChecker) commands(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	table := map[string]string{}
	for _, k := range keys {
		a, isString := m[k].(string)
		if !isString {
			c.add(at(path, k), "%s is not an action; want allow, ask or deny", kindOf(m[k]))
			continue
		}
		table[k] = a
		if err := ValidateCommandRules(map[string]string{k: a}); err != nil {
			c.add(at(path, k), "%s", strings.TrimPrefix(err.Error(), "invalid_command_rule: "))
		}
	}
	if err := ValidateCommandRules(table); err != nil && strings.Contains(err.Error(), "name the same program") {
		c.add(path, "%s", strings.TrimPrefix(err.Error(), "invalid_command_rule: "))
	}
}

func (c *dataChecker) patternList(path []string, v any) {
	list, ok := v.([]any)
	if !ok {
		c.add(path, "must be a list of capabilities or a.b.* prefixes, got %s", kindOf(v))
		return
	}
	for i, item := range list {
		if s, ok := item.(string); !ok || !ValidPattern(s) {
			c.add(atIndex(path, i), "%s is not a capability or a.b.* prefix", kindOf(item))
		}
	}
}

func (c *dataChecker) dangerous(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, k := range keys {
		if !ValidPattern(k) {
			c.add(at(path, k), "is not a capability or a.b.* prefix")
		}
		if _, ok := m[k].(bool); !ok {
			c.add(at(path, k), "%s: want true or false", kindOf(m[k]))
		}
	}
}

func (c *dataChecker) boolean(path []string, v any) {
	if _, ok := v.(bool); !ok {
		c.add(path, "%s: want true or false", kindOf(v))
	}
}

func (c *dataChecker) texts(path []string, v any) []string {
	list, ok := v.([]any)
	if !ok {
		c.add(path, "must be a list of strings, got %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			c.add(atIndex(path, i), "%s: want a string", kindOf(item))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (c *dataChecker) str(path []string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		c.add(path, "%s: want a string", kindOf(v))
	}
	return s, ok
}

// pathAccess: capability → the access its path rules meet (read or
// write); any other word would make every path rule of the capability
// meet nothing.
func (c *dataChecker) pathAccess(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, k := range keys {
		if !ValidPattern(k) {
			c.add(at(path, k), "is not a capability")
		}
		if a, _ := m[k].(string); a != "read" && a != "write" {
			c.add(at(path, k), "%s: want read or write", kindOf(m[k]))
		}
	}
}

// toolActions: tool → action argument → capability.
func (c *dataChecker) toolActions(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, tool := range keys {
		actions, names, ok := c.object(at(path, tool), m[tool])
		if !ok {
			continue
		}
		for _, a := range names {
			if s, _ := actions[a].(string); !ValidCapability(s) {
				c.add(at(at(path, tool), a), "%s is not a capability", kindOf(actions[a]))
			}
		}
	}
}

// words: a list of non-empty words (program names, flags, variables).
func (c *dataChecker) words(path []string, v any) {
	for i, w := range c.texts(path, v) {
		if strings.TrimSpace(w) == "" {
			c.add(atIndex(path, i), "an empty word matches nothing")
		}
	}
}

// wordLists: an object of lists of words (a program's flags).
func (c *dataChecker) wordLists(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, k := range keys {
		c.words(at(path, k), m[k])
	}
}

// floorKeys are the keys a deny-floor entry may have (floor.rego).
var floorKeys = map[string]string{
	"name": "string", "program": "string", "programs": "strings", "program_prefix": "string",
	"flags": "flags", "operands": "strings", "operand_globs": "globs", "words": "strings",
	"redirect_globs": "globs", "fork_bomb": "bool", "why": "string",
}

// namesSomething: a floor entry names what it meets — a program, a
// program prefix, a fork bomb or a redirection.
func namesSomething(m map[string]any) bool {
	if s, _ := m["program"].(string); s != "" {
		return true
	}
	if s, _ := m["program_prefix"].(string); s != "" {
		return true
	}
	if b, _ := m["fork_bomb"].(bool); b {
		return true
	}
	for _, k := range []string{"programs", "redirect_globs"} {
		if l, _ := m[k].([]any); len(l) > 0 {
			return true
		}
	}
	return false
}

func (c *dataChecker) floor(path []string, v any) {
	list, ok := v.([]any)
	if !ok {
		c.add(path, "must be a list of entries, got %s", kindOf(v))
		return
	}
	for i, item := range list {
		p := atIndex(path, i)
		m, keys, ok := c.object(p, item)
		if !ok {
			continue
		}
		if name, _ := m["name"].(string); name == "" {
			c.add(p, "an entry needs a name (the rule its denies name)")
		}
		if pre, _ := m["program_prefix"].(string); pre != strings.ToLower(pre) {
			c.add(at(p, "program_prefix"), "%q: programs are compared lower-cased, so write it in lower case", truncate(pre))
		}
		if !namesSomething(m) {
			c.add(p, "an entry names no program (program, programs, program_prefix), fork_bomb or redirect_globs: it can never match")
		}
		for _, k := range keys {
			switch floorKeys[k] {
			case "string":
				c.str(at(p, k), m[k])
			case "strings":
				c.texts(at(p, k), m[k])
			case "globs":
				for j, g := range c.texts(at(p, k), m[k]) {
					delimiters := []rune{}
					if k == "redirect_globs" {
						delimiters = []rune{'/'}
					}
					if _, err := gobwas.Compile(g, delimiters...); err != nil {
						c.add(atIndex(at(p, k), j), "%q is not a glob: %v", truncate(g), err)
					}
				}
			case "bool":
				c.boolean(at(p, k), m[k])
			case "flags":
				groups, ok := m[k].([]any)
				if !ok {
					c.add(at(p, k), "must be a list of lists of flag spellings, got %s", kindOf(m[k]))
					continue
				}
				for j, g := range groups {
					spellings := c.texts(atIndex(at(p, k), j), g)
					if len(spellings) == 0 {
						c.add(atIndex(at(p, k), j), "an empty group of spellings: no flag can be given")
					}
					for n, f := range spellings {
						// Written as the floor reads them: a short flag's letter
						// (r) or a long one's name (recursive), without dashes.
						if f == "" || strings.HasPrefix(f, "-") || strings.ContainsAny(f, " =\t") {
							c.add(atIndex(atIndex(at(p, k), j), n), "%q: want a flag's letter (r) or long name (recursive), without dashes", truncate(f))
						}
					}
				}
			default:
				c.add(at(p, k), "is not a key of a floor entry; want one of %s", strings.Join(sortedKeys(floorKeys), ", "))
			}
		}
	}
}

// programKeys are the keys of a program's description in the table of
// "Shell effects" (effects.rego, docs/policy.md). A key not listed here
// is an error, never ignored: a misspelled restriction would widen what
// the table describes.
var programKeys = map[string]string{
	"effect": "effect", "options": "options", "max_operands": "count", "requires_option": "bool",
	"first_operand": "first_operand", "pattern_options": "regex", "script": "regex", "script_forbids": "regex",
	"write_options": "regex", "subcommands": "subcommands", "at_workspace_root": "bool", "any_words": "bool",
}

// optionSpelling is an option as the table lists it: a word that starts
// with a dash (-x, --long, -long as find has them, -x= or --long= when
// it takes a value, -x? when its value is attached, --color=never for
// one value exactly), or -NUM.
var optionSpelling = regexp.MustCompile(`^(-NUM|--?[^-\s]\S*)$`)

func (c *dataChecker) programs(path []string, v any) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	for _, name := range keys {
		p := at(path, name)
		if name == "" || strings.ContainsAny(name, "/ \t\n") {
			c.add(p, "a program is named by its bare name: no path, no spaces")
		}
		c.program(p, m[name], true)
	}
}

// onlyWhereRead are the keys of a description that are read only on
// some entries: what describes a call is the sub-command's description
// when the program has sub-commands (git status), so a key there on the
// program's own entry, or at_workspace_root on a sub-command, would be
// ignored, and a restriction ignored widens what is described.
var (
	readOnTopOnly  = map[string]bool{"subcommands": true, "at_workspace_root": true}
	readAlsoOnTops = map[string]bool{"options": true, "effect": true}
)

func (c *dataChecker) program(path []string, v any, top bool) {
	m, keys, ok := c.object(path, v)
	if !ok {
		return
	}
	_, hasSubs := m["subcommands"]
	if _, ok := m["effect"]; !ok && !hasSubs {
		c.add(path, `a description needs an "effect": none, read or write`)
	}
	for _, k := range keys {
		p := at(path, k)
		if _, known := programKeys[k]; known {
			switch {
			case !top && readOnTopOnly[k]:
				c.add(p, "is read only on a program's own entry, not on a sub-command's: it would be ignored here")
				continue
			case top && hasSubs && !readOnTopOnly[k] && !readAlsoOnTops[k]:
				c.add(p, "is not read on a program that has sub-commands (each sub-command's description applies): put it on each sub-command")
				continue
			}
		}
		switch programKeys[k] {
		case "effect":
			if s, _ := m[k].(string); s != "none" && s != "read" && s != "write" {
				c.add(p, "%s: want none, read or write", kindOf(m[k]))
			}
		case "options":
			for i, o := range c.texts(p, m[k]) {
				if !optionSpelling.MatchString(o) {
					c.add(atIndex(p, i), "%q is not an option spelling (a word that starts with a dash: -x, --long, -long, -x= or --long= for a value, -x? for an attached one, or -NUM)", truncate(o))
				}
			}
		case "count":
			if !wholeNumber(m[k]) {
				c.add(p, "%s: want a whole number, 0 or more", kindOf(m[k]))
			}
		case "bool":
			c.boolean(p, m[k])
		case "first_operand":
			if s, _ := m[k].(string); s != "text" {
				c.add(p, `%s: want "text"`, kindOf(m[k]))
			}
		case "regex":
			if s, ok := c.str(p, m[k]); ok {
				if _, err := regexp.Compile(s); err != nil {
					c.add(p, "is not a regular expression: %v", err)
				}
			}
		case "subcommands":
			if !top {
				c.add(p, "a sub-command has no sub-commands of its own")
				continue
			}
			subs, names, ok := c.object(p, m[k])
			if !ok {
				continue
			}
			for _, s := range names {
				c.program(at(p, s), subs[s], false)
			}
		default:
			c.add(p, "is not a key of a program's description; want one of %s", strings.Join(sortedKeys(programKeys), ", "))
		}
	}
}

// wholeNumber: 0, 1, 2, … as JSON or YAML gives it.
func wholeNumber(v any) bool {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return err == nil && i >= 0
	case float64:
		return n >= 0 && n == float64(int64(n))
	case int:
		return n >= 0
	case int64:
		return n >= 0
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// DataProblems returns the problems of err when it is (or wraps) the
// policy's data error.
func DataProblems(err error) []DataProblem {
	if de, ok := errors.AsType[*DataError](err); ok {
		return de.Problems
	}
	return nil
}
