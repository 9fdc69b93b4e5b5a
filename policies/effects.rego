# Effects of a shell command.
#
# A shell.exec call whose every part the policy can describe is judged by
# what it does (docs/design.md §5, "Effects"): a part that only reads as
# fs.read, one that writes inside the workspace as fs.write. A part is
# described when it is one simple command of a program in
# data.shell.programs, every word literal, every option one the table
# lists, every word and redirection confined to the workspace, and no
# substitution, assignment, evaluating expansion or background around
# it. Anything else — a program not described, an option not listed, a
# word not read literally, a path outside — is code execution, judged as
# shell.exec is. The table lists what is known to be harmless, never
# what is known to be harmful. data.shell.effects false switches it off.
package toolperm

import rego.v1

default effects_on := false

effects_on if data.shell.effects == true

effect_rank := {"none": 0, "read": 1, "write": 2}

effect_capability := {"none": "fs.read", "read": "fs.read", "write": "fs.write"}

effect_verb := {"none": "only reads", "read": "only reads", "write": "writes"}

# shell_effect is the call's effect: the strictest of its parts', when
# every part is described; undefined otherwise.
shell_effect := strictest_effect(effects) if {
	effects_on
	capability == "shell.exec"
	input.shell.parsed == true
	count(shell_parts) > 0

	# Confinement is read from the workspace facts: without them, nothing
	# is known to be confined.
	is_array(input.workspace.paths)
	effects := [e | some p in shell_parts; e := part_effect(p)]
	count(effects) == count(shell_parts)
}

strictest_effect(effects) := e if {
	top := max([effect_rank[x] | some x in effects])
	some e in effects
	effect_rank[e] == top
}

# part_effect: one simple command with nothing around it, and its
# redirections.
part_effect(p) := strictest_effect(array.concat([command_effect(p.first)], redirects)) if {
	p.simple == true
	p.end == p.first + 1
	p.substitutions == 0
	p.evaluated == 0
	p.assignments == 0
	p.background == false
	p.negated == false
	redirects := [e | some r in p.redirections; e := redirect_effect(r)]
	count(redirects) == count(p.redirections)
}

redirect_effect(r) := "none" if r.dup == true

else := "none" if {
	r.dev_null == true
	r.here_doc == false
}

else := "none" if r.here_doc == true

else := "read" if {
	r.op == "<"
	redirect_confined(r)
}

else := "write" if {
	r.op in {">", ">>", ">|", "&>", "&>>", "1>", "1>>", "2>", "2>>"}
	redirect_confined(r)
}

redirect_confined(r) if {
	r.target != ""
	not redirect_unconfined(r)
}

redirect_unconfined(r) if {
	some f in input.workspace.paths
	f.shell.redirect
	f.value == r.target
	not f.inside
}

# command_effect: the effect of command j when the table describes it and
# every word is understood and confined.
command_effect(j) := option_effect(d, cmd.argv, from) if {
	cmd := input.shell.commands[j]
	cmd.literal[0] == true
	top := described_program(cmd.argv[0])
	[d, from] := command_description(top, cmd.argv)
	where_ok(top)
	words_literal(d, cmd)
	understood(d, cmd.argv, from)
	confined(d, j, cmd.argv, from)
}

# confined: every word of the command resolves inside the workspace (or,
# for a read, in a place a path rule lets reads through); a program that
# never reads its words as paths (any_words: echo) names none.
confined(d, _, _, _) if d.any_words == true

confined(d, j, argv, from) if {
	not d.any_words
	not command_unconfined(j, option_effect(d, argv, from), text_operand(d, argv, from))
}

# text_operand is the index of the operand a description reads as text,
# not as a path — grep's pattern, jq's filter, sed's script (first_operand
# "text") — unless an option gives the text instead (pattern_options: grep
# -e, -f); -1 when there is none. Its words need not resolve inside the
# workspace (grep -rn "/api/v1" .).
text_operand(d, argv, from) := min(operands) if {
	d.first_operand == "text"
	not text_given_by_option(d, argv, from)
	operands := described_words(d, argv, from).operands
	count(operands) > 0
} else := -1

text_given_by_option(d, argv, from) if {
	some i, w in argv
	i >= from
	option_word(w)
	regex.match(object.get(d, "pattern_options", "^$"), w)
}

# option_effect: the description's effect, or "write" when an option its
# "write_options" pattern matches is given (sed -i, -i.bak, --in-place).
option_effect(d, argv, from) := "write" if {
	d.write_options
	some i, w in argv
	i >= from
	startswith(w, "-")
	regex.match(d.write_options, w)
} else := d.effect

# described_program is the table's entry for the program a word runs:
# a bare name only, exactly as the table spells it. A path (bin/cat,
# ./git, /tmp/x/cat) runs whatever file is there, and a name in another
# case (CAT) another program on a case-sensitive host.
described_program(word) := data.shell.programs[word] if not contains(word, "/")

# command_description is the description that applies to the words from
# an index on: the program's, or its sub-command's (git status), after
# the program's own options.
command_description(top, _) := [top, 1] if not top.subcommands

command_description(top, argv) := [sub, s + 1] if {
	top.subcommands
	w := described_words(top, argv, 1)
	s := w.operands[0]
	every b in w.bad {
		b > s
	}
	sub := top.subcommands[argv[s]]
}

# where_ok: a description with "at_workspace_root" (git, which reads the
# configuration of the repository it finds from where it runs: a nested
# or planted repository's core.fsmonitor, diff textconv) holds only when
# the call runs in the workspace's root and changes no directory.
where_ok(d) if not d.at_workspace_root

where_ok(d) if {
	d.at_workspace_root
	cwd_fact_at_root
	not changes_directory
}

# cwd_fact_at_root: the call's directory resolved to the workspace root.
cwd_fact_at_root if {
	some f in input.workspace.paths
	not f.shell
	f.rel == "."
}

changes_directory if {
	some cmd in input.shell.commands
	cmd.argv[0] in {"cd", "pushd", "popd"}
}

# words_literal: every word is literal, but where the program never reads
# its words as paths (echo, printf: "any_words"); the part has no
# substitution or evaluating expansion in any case.
words_literal(d, _) if d.any_words == true

words_literal(d, cmd) if {
	not d.any_words
	every l in cmd.literal {
		l == true
	}
}

# command_unconfined: a word of command j resolves outside the workspace
# (or may name any path), and — for a command that only reads — in no
# place a path rule lets reads through (a toolchain's library, docs/policy.md
# "Path rules").
command_unconfined(j, effect, text) if {
	some f in input.workspace.paths
	f.shell.command == j
	f.shell.word != text
	not f.inside
	not read_let_through(f, effect)
}

read_let_through(f, effect) if {
	effect in {"read", "none"}
	object.get(f, "possible", false) == false
	found := [m | some layer in path_layers; m := f.rules.read[layer]]
	count(found) > 0
	every m in found {
		m.action == "allow"
		m.place == true
		not m.possible
	}
}

# understood: every word from index `from` on is an option the
# description lists (with its value), "--", or an operand, within the
# operand count, and the first operand matches the description's script
# pattern when it has one (sed's).
understood(d, argv, from) if {
	w := described_words(d, argv, from)
	count(w.bad) == 0
	count(w.operands) <= object.get(d, "max_operands", 1000000)
	script_ok(d, argv, w.operands)
	options_given(d, argv, from)
}

# options_given: a description with "requires_option" (an interpreter
# asked for its version) is met only with an option given: python3 alone
# reads a program from its input.
options_given(d, _, _) if not d.requires_option

options_given(d, argv, from) if {
	d.requires_option
	some i, w in argv
	i >= from
	option_word(w)
}

script_ok(d, _, _) if {
	not d.script
	not d.script_forbids
}

script_ok(d, _, operands) if {
	d.script
	count(operands) == 0
}

script_ok(d, argv, operands) if {
	count(operands) > 0
	regex.match(d.script, argv[min(operands)])
	not script_forbidden(d, argv[min(operands)])
}

script_ok(d, argv, operands) if {
	not d.script
	d.script_forbids
	count(operands) > 0
	not script_forbidden(d, argv[min(operands)])
}

# script_forbidden: the text holds what the description forbids in it
# (jq's import, include, env, $ENV: files and the environment read).
script_forbidden(d, text) if regex.match(d.script_forbids, text)

# described_words reads a command's words from index `from` on, by its
# description, in one pass: which are operands (after "--", or neither
# an option nor the value of the option before it; "-" is standard
# input), and which words before "--" are not understood (bad): an
# option the description does not list, or a value that looks like an
# option (so a value never takes the next word as its own).
described_words(d, argv, from) := {"operands": operands, "bad": bad} if {
	n := count(argv)
	dd := dashdash_at(argv, from)
	opts := options_of(d)
	values := {v | some i in numbers.range(from, dd - 1); i >= from; i < dd; option_word(argv[i]); separate_value(opts, argv[i]); v := i + 1}
	operands := [i | some i in numbers.range(from, n - 1); i >= from; operand_at(argv, i, dd, values)]
	bad := [i | some i in numbers.range(from, dd - 1); i >= from; i < dd; not word_understood(opts, argv, i, values)]
}

# dashdash_at is the index of the first "--" from `from` on (the end of
# the options), or the number of words.
dashdash_at(argv, from) := min(ks) if {
	ks := [k | some k, w in argv; k >= from; w == "--"]
	count(ks) > 0
} else := count(argv)

operand_at(_, i, dd, _) if i > dd

operand_at(argv, i, dd, values) if {
	i < dd
	not i in values
	not option_word(argv[i])
}

word_understood(_, argv, i, values) if {
	i in values
	not startswith(argv[i], "-")
}

word_understood(opts, argv, i, values) if {
	not i in values
	option_word(argv[i])
	option_ok(opts, argv[i])
}

word_understood(_, argv, i, values) if {
	not i in values
	not option_word(argv[i])
}

option_word(w) if {
	startswith(w, "-")
	w != "-"
}

options_of(d) := {o | some o in object.get(d, "options", [])}

# An option word is understood when it is listed as it stands (-print,
# --stat), listed as taking a value (--format=X, --format X, -name X),
# a count for a program that takes one (-20), or a cluster of listed
# letters, the last of which may take a value (-rn, -A3, -n20, -i.bak).
option_ok(opts, w) if w in opts

option_ok(opts, w) if concat("", [w, "="]) in opts

option_ok(opts, w) if {
	startswith(w, "--")
	contains(w, "=")
	concat("", [split(w, "=")[0], "="]) in opts
}

option_ok(opts, w) if {
	"-NUM" in opts
	regex.match(`^-[0-9]+$`, w)
}

option_ok(opts, w) if {
	not startswith(w, "--")
	count(w) > 1
	chars := split(substring(w, 1, -1), "")
	first := first_value_letter(opts, chars)
	every k, c in chars {
		letter_ok(opts, k, c, first)
	}
}

# letter_ok: a letter before the first that takes a value is a listed
# flag; what follows that letter is its value.
letter_ok(_, k, _, first) if k >= first

letter_ok(opts, k, c, first) if {
	k < first
	concat("", ["-", c]) in opts
}

first_value_letter(opts, chars) := min(vs) if {
	vs := [k | some k, c in chars; short_takes_value(opts, c)]
	count(vs) > 0
} else := count(chars)

short_takes_value(opts, c) if concat("", ["-", c, "="]) in opts

short_takes_value(opts, c) if concat("", ["-", c, "?"]) in opts

# separate_value: the option's value is the next word (--format X, -n X,
# -rA X, -name X); an option listed both bare and with "=" (--color,
# --in-place) takes its value attached only.
separate_value(opts, w) if {
	not contains(w, "=")
	not w in opts
	concat("", [w, "="]) in opts
}

separate_value(opts, w) if {
	startswith(w, "-")
	not startswith(w, "--")
	not w in opts
	not concat("", [w, "="]) in opts
	chars := split(substring(w, 1, -1), "")
	first := first_value_letter(opts, chars)
	first == count(chars) - 1
	concat("", ["-", chars[first], "="]) in opts
}

# effect_verdict: a call the level table asks for (or assesses) that is
# described by its effects, and whose effect's capability every rule
# layer allows, is allowed by that rule; the reason names the effect.
effect_verdict := verdict("rule", "allow", r.source, r.pattern, sprintf("%q %s in the workspace: the %s rule %q allows it.", [shown(concat("; ", [p.text | some p in shell_parts])), effect_verb[shell_effect], layer_label(r.layer), r.pattern])) if {
	resolved.layer == "level"
	resolved.action in {"ask", "assess"}
	cap := effect_capability[shell_effect]
	r := effect_rule(cap)
	r.action == "allow"
	not effect_ask_always(cap)
}

effect_ask_always(cap) if {
	some c in candidates(cap)
	c in data.ask_always
}

# effect_rule is the strictest rule the layers give the effect's
# capability (as resolved gives the call's own).
effect_rule(cap) := [r | some r in found; rank(r.action) == top][0] if {
	found := [r | some layer in layer_order; r := effect_layer_rule(cap, layer)]
	count(found) > 0
	top := max([rank(r.action) | some r in found])
}

effect_layer_rule(cap, "policy") := {"pattern": c, "action": data.rules[c], "layer": "policy", "source": "config"} if {
	c := [x | some x in candidates(cap); data.rules[x] != null][0]
}

effect_layer_rule(cap, "session") := {"pattern": c, "action": input.session.rules[c], "layer": "session", "source": "config"} if {
	c := [x | some x in candidates(cap); input.session.rules[x] != null][0]
}

effect_layer_rule(cap, "project") := {"pattern": c, "action": project_rules[c], "layer": "project", "source": "project"} if {
	c := [x | some x in candidates(cap); project_rules[x] != null][0]
	rank(project_rules[c]) >= 2
}

effect_layer_rule(cap, "level") := {"pattern": c, "action": level_rules[c], "layer": "level", "source": "level"} if {
	level_applies
	c := [x | some x in candidates(cap); level_rules[x] != null][0]
}
