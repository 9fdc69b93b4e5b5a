# The deny floor.
#
# Commands whose effect cannot be undone on the machine — rm -rf of /, ~
# or $HOME, mkfs, dd onto a device, shred or wipefs of a device, chmod or
# chown -R of /, writing onto a disk device, a fork bomb — are denied at
# every level and in every mode (FULL and allow-all included), at the
# explicit-deny step. The entries are policy data (data.floor): a policy
# bundle may change them, a session rule cannot loosen them. An entry
# matches what the command does, not a prefix of its text: its program
# (behind wrappers too, as command rules see it), its flags in any order
# or clustering (rm -fr, rm -r -f, rm --recursive --force), and an operand
# anywhere among the others. An operand that is not literal where the
# entry names operands ("$X") may be one of them: the call asks.
package toolperm

import rego.v1

default floor_entries := []

floor_entries := data.floor

# floor_hits are the entries any command of a shell call meets: the
# exact ones first, each kind in the order of data.floor.
floor_hits := array.concat(
	array.concat(
		[h | some i in floor_candidates; some h in floor_entry_hits(floor_entries[i]); h.exact],
		[h | some i in floor_candidates; some h in floor_entry_hits(floor_entries[i]); not h.exact],
	),
	floor_unread,
)

# floor_candidates are the entries, by index in data.floor's order, that
# some command of the call may meet — an entry naming the program of a
# view (floor_views), an entry naming a prefix when there is such a
# view, a fork-bomb entry when a function is defined, an entry with
# redirection globs when a redirection writes — a superset of those
# floor_entry_hits finds hits for. Most calls have none, and then no
# entry is tried; the tables depend on the data alone.
floor_candidates := sort(floor_candidate_set)

floor_candidate_set contains i if {
	some v in floor_views
	some name in program_names(v.argv[0])
	some i in floor_entries_by_program[name]
}

floor_candidate_set contains i if {
	count(floor_views) > 0
	some i in floor_prefix_entries
}

floor_candidate_set contains i if {
	"function" in input.shell.compound
	some i in floor_fork_entries
}

floor_candidate_set contains i if {
	some r in input.shell.redirects
	not r.here_doc
	not r.dup
	some i in floor_redirect_entries
}

floor_entries_by_program := {p: [i | some i, e in floor_entries; p in entry_programs(e)] | some p in floor_programs}

floor_prefix_entries := [i | some i, e in floor_entries; e.program_prefix]

floor_fork_entries := [i | some i, e in floor_entries; e.fork_bomb == true]

floor_redirect_entries := [i | some i, e in floor_entries; count(object.get(e, "redirect_globs", [])) > 0]

# floor_unread: a command the analysis could not read (a program word
# that is not literal, an opaque command, a text that does not parse) may
# be any command on the floor: the call asks, naming the first entry.
floor_unread := [{"entry": floor_entries[0].name, "exact": false, "text": t, "reason": r} |
	shell_judged
	count(floor_entries) > 0
	some [t, r] in floor_unread_texts
]

floor_unread_texts contains [t, floor_may_be(t, floor_entries[0].name)] if {
	some cmd in input.shell.commands
	cmd.literal[0] == false
	t := concat(" ", cmd.argv)
}

floor_unread_texts contains ["", sprintf("The command could not be read (%s), so it may be %s, on the deny floor: a person decides.", [unread_why, floor_entries[0].name])] if {
	input.shell.parsed == false
}

# floor_why is what a deny says of an entry: its own "why", else that it
# cannot be undone.
floor_why(name) := ws[0] if {
	ws := [w | some e in floor_entries; e.name == name; w := object.get(e, "why", floor_default_why)]
	count(ws) > 0
} else := floor_default_why

floor_default_why := "it cannot be undone, and no level, mode or session rule allows it"

floor_may_be(text, entry) := sprintf("%q may be %s, on the deny floor: a person decides.", [text, entry])

floor_entry_hits(e) := hits if {
	shell_judged
	hits := array.concat(
		array.concat(
			[h | some v in floor_views; h := floor_view_hit(e, v)],
			[{"entry": e.name, "exact": true, "text": p.text} |
				e.fork_bomb == true
				"function" in input.shell.compound
				some p in input.shell.parts
				fork_bomb(p.text)
			],
		),
		[{"entry": e.name, "exact": true, "text": concat(" ", [r.op, r.target])} |
			some r in input.shell.redirects
			not r.here_doc
			not r.dup
			some g in object.get(e, "redirect_globs", [])
			glob.match(g, ["/"], r.target)
		],
	)
}

# floor_views are the views whose program some entry names: most calls
# have none, and only these meet the entries' flags and operands. The
# programs depend on the data alone, so pdp computes them once per policy.
floor_views := [v |
	some cmd in input.shell.commands
	some v in command_views(cmd)
	v.literal[0] == true
	floor_named(v.argv[0])
]

floor_programs := {p | some e in floor_entries; some p in entry_programs(e)}

# entry_programs are the programs an entry names: "program", or each of
# "programs" (the file-system makers: what mkfs runs and its siblings).
entry_programs(e) := {lower(p) | some p in object.get(e, "programs", [])} | {lower(p) | p := e.program}

floor_prefixes := {e.program_prefix | some e in floor_entries; e.program_prefix}

default floor_named(_) := false

floor_named(word) if {
	some name in program_names(word)
	name in floor_programs
}

floor_named(word) if {
	some name in program_names(word)
	some prefix in floor_prefixes
	startswith(name, prefix)
}

# floor_view_hit: the view runs the entry's program with its flags and
# an operand the entry names (exact), or may do so: a word that is not
# literal may be a flag or an operand it names (not exact: the call asks).
floor_view_hit(e, v) := {"entry": e.name, "exact": [f, o] == [true, true], "text": concat(" ", v.argv)} if {
	v.literal[0] == true
	floor_program(e, v.argv[0])
	f := floor_flags(e, v)
	o := floor_operands(e, v)
}

floor_program(e, word) if {
	some name in program_names(word)
	name in entry_programs(e)
}

floor_program(e, word) if {
	some name in program_names(word)
	startswith(name, e.program_prefix)
}

floor_flags(e, v) if {
	every group in object.get(e, "flags", []) {
		has_flag(v, group)
	}
	every w in object.get(e, "words", []) {
		has_word(v, w)
	}
} else := false if dynamic_word(v)

# has_word: the view holds the word literally (find's -delete).
has_word(v, w) if {
	some i, x in v.argv
	i > 0
	v.literal[i] == true
	x == w
}

floor_operands(e, v) if {
	not e.operands
	not e.operand_globs
} else if {
	some i, w in v.argv
	i > 0
	operand_named(e, w, v.literal[i])
} else := false if dynamic_word(v)

# operand_named: the word is an operand the entry names as written ("~",
# "$HOME", "/*" match that spelling), a spelling of / (//, /., /..), or
# a literal word its globs match (of=/dev/sd*).
operand_named(e, w, _) if w in object.get(e, "operands", [])

operand_named(e, w, true) if {
	"/" in object.get(e, "operands", [])
	root_spelling(w)
}

# A literal absolute word names the directory it is once cleaned as the
# kernel resolves it (//home, /home/., /tmp/../etc/), in any case (a
# case-insensitive file system runs /USERS as /Users).
operand_named(e, w, true) if {
	startswith(w, "/")
	count(w) <= 256
	some o in object.get(e, "operands", [])
	startswith(o, "/")
	lower(clean_abs(w)) == lower(o)
}

operand_named(e, w, true) if {
	some g in object.get(e, "operand_globs", [])
	glob.match(g, [], w)
}

# clean_abs is an absolute path cleaned: empty and "." elements dropped,
# each ".." removing the name before it (none above the root).
clean_abs(w) := concat("", ["/", concat("/", kept)]) if {
	els := [x | some x in split(w, "/"); x != ""; x != "."]
	kept := [x | some k, x in els; x != ".."; not dotdot_cancels(els, k)]
}

# dotdot_cancels: a ".." after element k removes it — some run of
# elements from k on holds as many ".." as names.
dotdot_cancels(els, k) if {
	k + 1 < count(els)
	some j in numbers.range(k + 1, count(els) - 1)
	2 * count([i | some i in numbers.range(k, j); els[i] == ".."]) >= (j - k) + 1
}

root_spelling(w) if {
	startswith(w, "/")
	every x in split(w, "/") {
		x in {"", ".", ".."}
	}
}

dynamic_word(v) if {
	some i, l in v.literal
	i > 0
	l == false
}

# has_flag: one of the group's flags is given, as a long option
# (--recursive) or a letter of a cluster (-fr, -Rf).
has_flag(v, group) if {
	some i, w in v.argv
	i > 0
	v.literal[i] == true
	some f in group
	flag_given(w, f)
}

# A long option by GNU's rule: its name or any prefix of it
# (--rec, --recu for --recursive); a prefix two options share is an
# error to GNU, so taking it for either is never looser.
flag_given(w, f) if {
	count(f) > 1
	startswith(w, "--")
	count(w) > 2
	not contains(w, "=")
	startswith(f, substring(w, 2, -1))
}

flag_given(w, f) if {
	count(f) == 1
	regex.match(`^-[A-Za-z0-9]+$`, w)
	contains(w, f)
}

# fork_bomb: a function whose body runs itself in the background or
# into a pipe of itself (:(){ :|:& };:, as printed ":() { : | : & }").
fork_bomb(text) if {
	m := regex.find_all_string_submatch_n(`^([^\s(){}|&;]+)\(\) \{`, text, 1)
	name := m[0][1]
	body := substring(text, count(name) + 2, -1)
	some pattern in [sprintf("%s | %s", [name, name]), sprintf("%s &", [name])]
	contains(body, pattern)
}
