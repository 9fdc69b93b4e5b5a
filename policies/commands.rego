# Command rules and commands judged part by part.
#
# A command rule maps a command prefix (words separated by single spaces:
# "go test", "git push --force") to allow, ask or deny, in three layers:
# the policy's data.commands, the session's command_rules and the
# project's (input.project.command_rules, which only stop: a project's
# allow never allows a part, it only makes an exception to its own
# broader ask or deny). A shell command
# is judged part by part (its statements joined by ;, newlines, &&, ||, |
# and |&): a deny or an ask applies to every simple command of a part,
# behind wrappers and inside bodies and substitutions; an allow, by a rule
# or a grant, only to a part that is one plain simple command
# (docs/design.md §5).
package toolperm

import rego.v1

# shell_parts are the parts of a parsed shell.exec call, or of the lines
# a shell.stdin write types (shell_judged); empty otherwise.
default shell_parts := []

shell_parts := input.shell.parts if {
	shell_judged
	input.shell.parsed == true
}

default policy_command_rules := {}

policy_command_rules := data.commands

default session_command_rules := {}

session_command_rules := input.session.command_rules

default project_command_rules := {}

project_command_rules := input.project.command_rules

command_layers := ["policy", "session", "project"]

# ruled_command_layers are the layers with at least one rule: a layer
# without any can neither stop nor allow a command, so its views are not
# looked up.
ruled_command_layers := [layer | some layer in command_layers; count(command_tables[layer]) > 0]

# command_tables are both layers' rules with each prefix's program
# lower-cased, as program names are compared (program_names). The
# policy's table and its longest prefix depend on the data alone: pdp
# evaluates such rules once per policy, not once per call.
command_tables := {
	"policy": policy_command_table,
	"session": normalized_prefixes(session_command_rules),
	"project": normalized_prefixes(project_command_rules),
}

policy_command_table := normalized_prefixes(policy_command_rules)

normalized_prefixes(rules) := {key: action |
	some prefix, action in rules
	words := split(prefix, " ")
	key := concat(" ", array.concat([lower(words[0])], array.slice(words, 1, count(words))))
}

# command_words is the number of words of each layer's longest prefix:
# no longer candidate is ever looked up.
command_words["policy"] := policy_command_words if count(policy_command_table) > 0

command_words["session"] := longest_prefix(command_tables.session) if count(command_tables.session) > 0

command_words["project"] := longest_prefix(command_tables.project) if count(command_tables.project) > 0

policy_command_words := longest_prefix(policy_command_table)

longest_prefix(table) := max([count(split(k, " ")) | some k, _ in table])

# prefix_match is the layer's rule for the longest prefix argv starts
# with, its words literal: looked up by key, longest first.
prefix_match(layer, argv, literal) := hits[0] if {
	n := min([count(argv), command_words[layer]])
	n > 0
	hits := [{"prefix": c, "action": command_tables[layer][c], "layer": layer} |
		some k in numbers.range(n, 1)
		literal_words(literal, k)
		some c in prefix_candidates(argv, k)
		command_tables[layer][c]
	]
}

literal_words(literal, k) if every i in numbers.range(0, k - 1) {
	literal[i] == true
}

prefix_candidates(argv, k) := {concat(" ", array.concat([name], array.slice(argv, 1, k))) |
	some name in program_names(argv[0])
}

# possible_match is a deny or ask rule of the layer that argv may match
# once its expansions are done. A word that is not literal may expand to
# any number of words, or be joined to its neighbours (c='git push'; $c,
# {git,push}, git${IFS}push), so from the first such word on anything
# may follow: a rule may match when the literal words before it are the
# rule's first words and the rule has more. A command whose program word
# is not literal (and the opaque commands the shell facts give for what
# they could not read) may match every deny and ask rule.
possible_match(layer, argv, literal) := hits[0] if {
	i := first_dynamic(literal)
	hits := [{"prefix": prefix, "action": action, "layer": layer} |
		some prefix, action in command_tables[layer]
		rank(action) >= 2
		words := split(prefix, " ")
		i < count(words)
		every j, w in array.slice(words, 0, i) {
			word_is(argv, j, w)
		}
	]
}

first_dynamic(literal) := min(dynamic) if {
	dynamic := [i | some i, l in literal; l == false]
	count(dynamic) > 0
}

word_is(argv, 0, w) if w in program_names(argv[0])

word_is(argv, j, w) if {
	j > 0
	argv[j] == w
}

# command_views are the word lists a command may run: its own and, for
# a wrapper (env, sudo, timeout, xargs, …), every suffix, since a prefix
# cannot know which of a wrapper's words are its own options. What a
# wrapper runs from a line of its own (env -S) the shell facts give as a
# command of its own.
command_views(cmd) := array.concat([cmd], [{"argv": array.slice(cmd.argv, i, n), "literal": array.slice(cmd.literal, i, n)} |
	n := count(cmd.argv)
	n > 1
	listed(cmd.argv[0], shell_wrappers)
	some i in numbers.range(1, n - 1)
])

# view_stop is the deny or ask a layer's rules give one view: the longest
# prefix's action when it is deny or ask, else an ask for a deny or ask
# rule the view may match once expanded.
view_stop(layer, v) := object.union(m, {"action": stop_action(m.action), "exact": true, "text": concat(" ", v.argv)}) if {
	m := prefix_match(layer, v.argv, v.literal)
	rank(m.action) >= 2
} else := object.union(m, {"action": "ask", "exact": false, "text": concat(" ", v.argv)}) if {
	m := possible_match(layer, v.argv, v.literal)
}

# An action that is not one of the known ones stops as a deny.
stop_action(action) := "ask" if action == "ask"

else := "deny"

# part_stops[i] lists every deny and ask command rules give a command of part i.
part_stops[i] := stops if {
	some i, p in shell_parts
	stops := [s |
		p.end > p.first
		some j in numbers.range(p.first, p.end - 1)
		some v in command_views(input.shell.commands[j])
		some layer in ruled_command_layers
		s := view_stop(layer, v)
	]
}

# part_stop is the strictest of them: a deny, else an ask.
part_stop(i) := denies[0] if {
	denies := [s | some s in part_stops[i]; s.action == "deny"]
	count(denies) > 0
} else := part_stops[i][0] if count(part_stops[i]) > 0

# rule_allows is the rule that allows a plain part: the longest prefix of
# each layer for its own words, none of them stricter than allow.
rule_allows(p) := m if {
	m := prefix_match("policy", p.argv, p.literal)
	m.action == "allow"
	not session_stricter(p)
} else := m if {
	not prefix_match("policy", p.argv, p.literal)
	m := prefix_match("session", p.argv, p.literal)
	m.action == "allow"
}

session_stricter(p) if rank(prefix_match("session", p.argv, p.literal).action) > 0

# plain_part: one simple command with a literal program and nothing
# around it: no assignment, substitution, body, evaluating expansion,
# background or negation, and redirections only to /dev/null or onto a
# numbered descriptor. Anything else is never allowed by a rule or grant.
plain_part(p) if {
	p.simple == true
	p.end == p.first + 1
	p.assignments == 0
	p.substitutions == 0
	p.evaluated == 0
	p.background == false
	p.negated == false
	p.literal[0] == true
	every r in p.redirections {
		harmless_redirect(r)
	}
}

harmless_redirect(r) if r.dup == true

harmless_redirect(r) if {
	r.dev_null == true
	r.here_doc == false
}

# part_fingerprint names what a grant for a plain part covers: the
# program alone, or its first two words when the second is literal and
# not an option (an option only for programs on data.shell.option_programs,
# whose options cannot run other programs), and never for a destructive
# subcommand or a flag that runs commands (screen.rego). Undefined when
# ungrantable.
part_fingerprint(p) := p.argv[0] if {
	plain_part(p)
	count(p.argv) == 1
	fingerprint_word(p.argv[0])
	not part_ungrantable(p.argv[0])
} else := concat(" ", [p.argv[0], fingerprint_arg(p.argv[1])]) if {
	plain_part(p)
	count(p.argv) > 1
	p.literal[1] == true
	fingerprint_word(p.argv[0])
	second_word_grantable(p.argv)
	not part_ungrantable(p.argv[0])
	not risky_view(p) # git branch -D is more than a grant for "git branch" names
}

default fingerprint_word(_) := false

# fingerprint_word: a program word a fingerprint can name without
# ambiguity. A program word with a space or other white space in it ('git
# status' quoted as one program name) would read as two words, so it is
# never grantable.
fingerprint_word(w) if {
	w != ""
	not regex.match(`\s`, w)
}

# fingerprint_arg is the second word as a fingerprint names it: as it is,
# or, when it holds white space, single-quoted as the shell would quote it
# (echo 'hello world'), so that it never equals the fingerprint of two
# words (echo hello).
fingerprint_arg(w) := w if fingerprint_word(w)

fingerprint_arg(w) := concat("", ["'", replace(w, "'", `'\''`), "'"]) if {
	w != ""
	not fingerprint_word(w)
}

second_word_grantable(argv) if not startswith(argv[1], "-")

second_word_grantable(argv) if listed(argv[0], shell_option_programs)

shell_option_programs := {lower(w) | some w in object.get(data.shell, "option_programs", [])}

shell_state_builtins := {lower(w) | some w in object.get(data.shell, "state_builtins", [])}

default part_ungrantable(_) := false

# part_ungrantable: a program no grant may name (ungrantable_programs,
# shell.rego) or of a dangerous word's family.
part_ungrantable(word) if listed(word, ungrantable_programs)

part_ungrantable(word) if dangerous_family(word)

default dangerous_family(_) := false

# dangerous_family: a dangerous word followed by "." or "-" and more
# (mkfs.ext4, mount.cifs), not one that merely starts like it (mvn, atop).
dangerous_family(word) if {
	some name in program_names(word)
	some sep in [".", "-"]
	contains(name, sep)
	listed(split(name, sep)[0], shell_dangerous_words)
}

# part_verdicts judge each part: a command rule's deny or ask, else an
# allow by a command rule or a grant, else nothing (decision null): the
# level decides the whole call.
part_verdicts := [part_verdict(i, p) | some i, p in shell_parts]

part_verdict(i, p) := {
	"text": p.text, "fingerprint": part_fingerprint_or_null(p), "decision": s.action, "source": layer_source[s.layer],
	"rule": s.prefix, "reason": stop_reason(s),
} if {
	count(ruled_command_layers) > 0
	s := part_stop(i)
} else := {
	"text": p.text, "fingerprint": part_fingerprint_or_null(p), "decision": "allow", "source": "config",
	"rule": m.prefix, "reason": sprintf("The %s command rule %q allows %q.", [layer_label(m.layer), m.prefix, p.text]),
} if {
	count(ruled_command_layers) > 0
	plain_part(p)
	m := rule_allows(p)
} else := object.union({"text": p.text, "fingerprint": fp, "decision": "allow"}, g) if {
	fp := part_fingerprint(p)
	g := grant_for(capability, fp)
} else := {
	"text": p.text, "fingerprint": part_fingerprint_or_null(p), "decision": null, "source": null,
	"rule": null, "reason": null,
}

part_fingerprint_or_null(p) := fp if {
	fp := part_fingerprint(p)
} else := null

stop_reason(s) := sprintf("The %s command rule %q %s %q.", [layer_label(s.layer), s.prefix, stop_verb[s.action], s.text]) if {
	s.exact
} else := sprintf("%q may expand to a command the %s command rule %q %s: a person decides.", [s.text, layer_label(s.layer), s.prefix, stop_verb[rule_stop(s.prefix, s.layer)]])

stop_verb := {"deny": "denies", "ask": "asks for"}

rule_stop(prefix, layer) := stop_action(command_tables[layer][prefix])

# command_denied and command_asked are the first part a command rule
# denies or asks for; the chain decides on them at the explicit-deny step.
command_denied := denied[0] if {
	denied := [v | some v in part_verdicts; v.decision == "deny"]
	count(denied) > 0
}

command_asked := asked[0] if {
	asked := [v | some v in part_verdicts; v.decision == "ask"]
	count(asked) > 0
} else := unread_verdict

# unread_verdict: a shell command that could not be parsed (or is over a
# limit) may be any command, so every deny and ask rule may match it.
unread_verdict := {
	"decision": "ask", "rule": m.prefix, "source": layer_source[m.layer],
	"reason": sprintf("The command could not be read (%s), so it may be one the %s command rule %q %s: a person decides.", [unread_why, layer_label(m.layer), m.prefix, stop_verb[rule_stop(m.prefix, m.layer)]]),
} if {
	shell_judged
	not shell_parsed
	found := [m | some layer in command_layers; m := possible_match(layer, ["<unread command>"], [false])]
	count(found) > 0
	m := found[0]
}

shell_parsed if input.shell.parsed == true

default unread_why := "no shell facts"

unread_why := input.shell.error if is_string(input.shell.error)

# parts_allowed: every part is allowed by a command rule or a grant.
parts_allowed if {
	count(part_verdicts) > 0
	every v in part_verdicts {
		v.decision == "allow"
	}
}

# parts_allowed_verdict is the chain's verdict when every part is allowed.
parts_allowed_verdict := verdict("session_grant", "allow", parts_allow_source, parts_allow_rule, parts_allow_reason)

parts_allow_source := "session-grant" if {
	some v in part_verdicts
	v.source == "session-grant"
} else := "project-grant" if {
	some v in part_verdicts
	v.source == "project-grant"
} else := "config"

parts_allow_rule := part_verdicts[0].rule if {
	count(part_verdicts) == 1
} else := "SESSION_GRANT" if {
	parts_allow_source == "session-grant"
} else := "PROJECT_GRANT" if {
	parts_allow_source == "project-grant"
} else := "COMMAND_RULES"

parts_allow_reason := part_verdicts[0].reason if {
	count(part_verdicts) == 1
} else := sprintf("Every part is allowed: %s.", [concat("; ", [trim_suffix(v.reason, ".") | some v in part_verdicts])])

# parts_grantable: no part is denied or asked by a command rule, and each
# part not already allowed has a fingerprint.
parts_grantable if {
	count(part_verdicts) > 0
	not command_denied
	not command_asked
	every v in part_verdicts {
		part_grantable(v)
	}
}

part_grantable(v) if v.decision == "allow"

part_grantable(v) if v.fingerprint != null

# answer_parts are the parts of a command of more than one, as the answer
# reports them; null otherwise.
default answer_parts := null

answer_parts := [object.remove(v, ["reason"]) | some v in part_verdicts] if count(part_verdicts) > 1
