# Path rules.
#
# The engine matches every checked path of a call against the two layers
# of path rules — policy data "paths" and the session's path_rules — and
# hands over, per path, per access kind and per layer, the rule that layer
# resolved to (input.workspace.paths[_].rules). This file reads those
# facts for the chain: the call's access kind comes from its capability,
# and across the paths and the layers the strictest rule wins (on a tie
# the policy layer names it). A deny decides at the explicit deny step, an
# ask at the rule step (over the level and any grant), and an allow of a
# place on the host lets that access through the workspace step.
package toolperm

import rego.v1

# The project layer's facts are only its asks and denies (pdp/pathrules.go):
# a project's path allow never lets a path through.
path_layers := ["policy", "session", "project"]

# path_access is what the call does to its paths: read for the
# capabilities data.path_access lists, write for every other one.
default path_access := "write"

path_access := data.path_access[capability]

checked_paths := object.get(input, ["workspace", "paths"], [])

# path_hits are the rules the layers resolved to for each path's access
# kinds: every path's policy rule first, then every path's session rule.
# A rule a path only may meet (a shell word that is not literal, a glob
# that may name it) asks where it would deny.
path_hits := [object.union(m, {
	"layer": layer, "path": p.path, "access": access, "word": path_word(p),
	"action": hit_action(m), "rule_action": m.action, "possible": object.get(m, "possible", false),
}) |
	some layer in path_layers
	some p in checked_paths
	count(p.rules) > 0 # a path no layer has a rule for meets none
	some access in path_accesses(p)
	m := p.rules[access][layer]
]

hit_action(m) := "ask" if {
	m.possible == true
	m.action == "deny"
} else := m.action

# path_accesses are the access kinds a path is judged for: the call's
# (path_access) for a path of its arguments; for a shell word, what its
# command does with it (shell_word_accesses).
path_accesses(p) := [path_access] if not p.shell

path_accesses(p) := shell_word_accesses(p) if {
	p.shell
	shell_judged
}

# path_word says which word of a shell command a path came from, for the
# answer's reason; null for a path of the call's arguments.
default path_word(_) := null

path_word(p) := {"value": shown(p.value), "redirect": p.shell.redirect} if p.shell.redirect

# shown is a text as a reason shows it: at most 200 bytes.
shown(s) := s if count(s) <= 200

else := concat("", [substring(s, 0, 200), "…"])

path_word(p) := {"value": shown(p.value), "command": shown(concat(" ", input.shell.commands[p.shell.command].argv)), "possible": object.get(p, "possible", false)} if {
	not p.shell.redirect
	p.shell.command >= 0
}

path_word(p) := {"value": p.value, "command": shown(object.get(input.shell, "error", "")), "possible": true} if p.shell.unread

# path_rule is the strictest of the hits, the first of its rank.
path_rule := [h | some h in path_hits; rank(h.action) == path_rank][0]

path_rank := max([rank(h.action) | some h in path_hits])

path_denies if path_rule.action == "deny"

path_asks if path_rule.action == "ask"

access_words := {"read": "reading", "write": "writing"}

path_verbs := {"deny": "denies", "ask": "asks before"}

path_reason := sprintf(
	"The %s path rule %q %s %s %s.",
	[layer_label(path_rule.layer), path_rule.pattern, path_verbs[path_rule.action], access_words[path_rule.access], path_rule.path],
) if {
	path_rule.word == null
} else := sprintf(
	"The word %q of %q may name a path the %s path rule %q %s %s: a person decides.",
	[path_rule.word.value, path_rule.word.command, layer_label(path_rule.layer), path_rule.pattern, path_verbs[rule_own_action(path_rule)], access_words[path_rule.access]],
) if {
	path_rule.possible == true
	path_rule.word.command
} else := sprintf(
	"The redirection %s %s may name a path the %s path rule %q %s %s: a person decides.",
	[path_rule.word.redirect, path_rule.word.value, layer_label(path_rule.layer), path_rule.pattern, path_verbs[rule_own_action(path_rule)], access_words[path_rule.access]],
) if {
	path_rule.possible == true
} else := sprintf(
	"The %s path rule %q %s %s %s (the redirection %s %s).",
	[layer_label(path_rule.layer), path_rule.pattern, path_verbs[path_rule.action], access_words[path_rule.access], path_rule.path, path_rule.word.redirect, path_rule.word.value],
) if {
	path_rule.word.redirect
} else := sprintf(
	"The %s path rule %q %s %s %s (the word %q of %q).",
	[layer_label(path_rule.layer), path_rule.pattern, path_verbs[path_rule.action], access_words[path_rule.access], path_rule.path, path_rule.word.value, path_rule.word.command],
)

# rule_own_action is what a possibly met rule does to what it names.
rule_own_action(h) := h.rule_action

# --- shell words -------------------------------------------------------

# shell_word_accesses: a redirection's target is written (> >> >| &> &>>
# >&FILE) or read (<), both for <>; an operand is what its program does
# to its operands (data.shell.operand_access): "none", "read", "write",
# "copy" and "move" (every operand read and written: which one cp writes
# depends on its options), "sed" (written with -i), "dd" (of= written,
# if= read);
# a program the policy does not know may do both.
shell_word_accesses(p) := redirect_accesses(trim_left(p.shell.redirect, "0123456789")) if p.shell.redirect

shell_word_accesses(p) := operand_accesses(input.shell.commands[p.shell.command], p.shell.word) if {
	not p.shell.redirect
	not p.shell.unread
}

# A command that could not be read may read or write anything.
shell_word_accesses(p) := ["read", "write"] if p.shell.unread

redirect_accesses("<") := ["read"]

redirect_accesses("<>") := ["read", "write"]

redirect_accesses(op) := ["write"] if not op in {"<", "<>"}

operand_accesses(_, 0) := ["read", "write"] # an opaque or expanded program word

operand_accesses(cmd, i) := [] if {
	i > 0
	code_word(cmd, i)
} else := accesses_of_kind(operand_kind(cmd.argv[0]), cmd, i) if i > 0

# code_word: the word is a program's code or text, not a path it names —
# the text after an interpreter's inline-code flag (python3 -c CODE, node
# -e CODE), and the operand a program's description reads as text (sed's
# script, grep's and rg's pattern, jq's filter: text_operand, effects.rego)
# when every option of the command is one the description lists, so
# which word is that operand is known. What code does is beyond the
# analysis (docs/security.md); taking its text for a path only made every
# such call "may match" a path rule. A command with a word that is not
# literal has no text operand: every word may be a path.
code_word(cmd, i) if {
	i > 1
	listed(cmd.argv[0], shell_interpreters)
	cmd.argv[i - 1] in data.shell.inline_code_flags
}

code_word(cmd, i) if {
	# Every word as written: a brace, a glob or an expansion in the
	# pattern's place splits into words the program opens as files
	# (grep {^,.env} runs grep ^ .env).
	count(cmd.literal) == count(cmd.argv)
	every l in cmd.literal {
		l == true
	}
	top := described_program(cmd.argv[0])
	[d, from] := command_description(top, cmd.argv)
	count(described_words(d, cmd.argv, from).bad) == 0
	text_operand(d, cmd.argv, from) == i
}

operand_kind(word) := kinds[0] if {
	kinds := [k | some name in program_names(word); k := data.shell.operand_access[name]]
	count(kinds) > 0
} else := "unknown"

accesses_of_kind("none", _, _) := []

accesses_of_kind("read", _, _) := ["read"]

accesses_of_kind("write", _, _) := ["write"]

accesses_of_kind("move", _, _) := ["read", "write"]

# copy: cp, install, ln — which operand is written depends on options
# (-t DIR, a trailing -f), so every operand may be read or written.
accesses_of_kind("copy", _, _) := ["read", "write"]

accesses_of_kind("sed", cmd, _) := ["read", "write"] if {
	some w in cmd.argv
	in_place_flag(w)
} else := ["read"]

in_place_flag(w) if regex.match(`^-[A-Za-z]*i`, w)

in_place_flag(w) if startswith(w, "--in") # --in-place, and getopt's abbreviations of it

accesses_of_kind("dd", cmd, i) := ["write"] if startswith(cmd.argv[i], "of=")

accesses_of_kind("dd", cmd, i) := ["read"] if not startswith(cmd.argv[i], "of=")

accesses_of_kind(kind, _, _) := ["read", "write"] if not kind in {"none", "read", "write", "move", "copy", "sed", "dd"}

# outside_blocked are the strings of the call outside the workspace that
# no path rule lets through.
outside_blocked := [v |
	some v in object.get(input, ["workspace", "outside"], [])
	not let_through(v)
]

# let_through: every path the string resolved to is inside the workspace
# or in a place a path rule allows for this access.
let_through(v) if {
	resolved := [p | some p in checked_paths; p.value == v]
	count(resolved) > 0
	every p in resolved {
		passes_workspace(p)
	}
}

passes_workspace(p) if p.inside

# passes_workspace: every layer with a rule for the path allows this
# access, and one of them names a place on the host (an absolute pattern).
passes_workspace(p) if {
	found := [m | some layer in path_layers; m := p.rules[path_access][layer]]
	every m in found {
		m.action == "allow"
	}
	some m in found
	m.place == true
}

# explained_matches are the rules each layer matched, with the path rule
# that decided or let a path through under "path".
explained_matches := object.union(matches, {"path": explained_path_rule}) if {
	path_rule
} else := matches

# explained_path_rule: a shell word's rule also names the word, and
# whether the word only may name the path.
explained_path_rule := object.remove(path_rule, ["rule_action", "possible", "word"]) if {
	path_rule.word == null
} else := object.remove(path_rule, ["rule_action"])
