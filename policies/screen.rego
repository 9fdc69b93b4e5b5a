# The wider screen.
#
# More of what makes a shell.exec call DANGEROUS without asking the model
# (danger.by "screen", shell.rego has the rest): what the model cannot see
# (a script file, a package it fetches), what text inside an argument can
# talk it out of (a destructive subcommand), and what runs code through a
# side door (config injection, indirection, loader variables). Every list
# is policy data the security team edits (data.shell).
package toolperm

import rego.v1

# screen_views are the word lists every command may run: its own and,
# after a wrapper, each suffix (commands.rego).
screen_views := [v | some cmd in input.shell.commands; some v in command_views(cmd)]

shell_text_processors := {lower(w) | some w in object.get(data.shell, "text_processors", [])}

# code_runner: the view runs an interpreter or shell that takes code.
code_runner(v) if {
	listed(v.argv[0], shell_interpreters)
	not listed(v.argv[0], shell_text_processors)
}

# Inline code anywhere after the interpreter, also in a combined short
# option (perl -pe, ruby -ne, bash -lc) or an in-place edit (-i).
screen_hits contains sprintf("%q is given inline code (%s)", [v.argv[0], word]) if {
	some v in screen_views
	listed(v.argv[0], shell_interpreters)
	some i, word in v.argv
	i > 0
	inline_code_word(word)
}

inline_code_word(word) if word in data.shell.inline_code_flags

inline_code_word(word) if {
	regex.match(`^-[A-Za-z]+$`, word)
	some flag in ["c", "e", "E", "p", "r", "i"]
	contains(word, flag)
}

# An interpreter or shell given a script file or module: the model
# cannot see what it runs.
screen_hits contains sprintf("%q is given %q to run", [v.argv[0], word]) if {
	some v in screen_views
	code_runner(v)
	some i, word in v.argv
	i > 0
	not startswith(word, "-")
}

# Package runners fetch and run code the model has not seen.
screen_hits contains sprintf("%q fetches and runs a package", [v.argv[0]]) if {
	some v in screen_views
	some name in program_names(v.argv[0])
	name in data.shell.package_runners
}

screen_hits contains sprintf("%q fetches and runs a package", [concat(" ", [v.argv[0], v.argv[1]])]) if {
	some v in screen_views
	count(v.argv) > 1
	some name in program_names(v.argv[0])
	concat(" ", [name, v.argv[1]]) in data.shell.package_runners
}

# Flags of tools that run commands or delete (git -c, vim -c, find -exec,
# tar --to-command, rsync -e): data.shell.command_flags by program.
screen_hits contains sprintf("%q is destructive, or runs commands through a flag", [concat(" ", v.argv)]) if {
	some v in screen_views
	risky_view(v)
}

# risky_view: the words run a destructive subcommand or pass a flag that
# runs commands. A grant never covers such a part (commands.rego): its
# fingerprint names the program and subcommand, not this.
risky_view(v) if {
	some name in program_names(v.argv[0])
	flags := command_flag_sets[name]
	some i, word in v.argv
	i > 0
	flagged_word(word, flags)
}

# command_flag_sets are data.shell.command_flags by program as a set of
# the flags, those with an "=" of their own, and the prefixes a trailing
# * makes, so a word is looked up rather than compared with every flag.
# It depends on the data alone.
command_flag_sets := {name: {
	"flags": {f | some f in flags},
	"with_equals": {f | some f in flags; contains(f, "=")},
	"prefixes": {trim_suffix(f, "*") | some f in flags; endswith(f, "*")},
} |
	some name, flags in data.shell.command_flags
}

# flagged_word: flag_word(word, flag) for a flag of the set: the word
# is a flag, a flag with "=value" (for a flag without an "=" of its own,
# the text before the word's first "="; the few with one are compared),
# or starts with a prefix. One lookup per word, whatever it holds.
flagged_word(word, set) if word in set.flags

flagged_word(word, set) if {
	i := indexof(word, "=")
	i >= 0
	substring(word, 0, i) in set.flags
}

flagged_word(word, set) if {
	some f in set.with_equals
	startswith(word, concat("", [f, "="]))
}

flagged_word(word, set) if {
	some prefix in set.prefixes
	startswith(word, prefix)
}

# flag_word: the word is the flag, the flag with "=value", or, for a flag
# written with a trailing *, any word it starts.
flag_word(word, flag) if word == flag

flag_word(word, flag) if startswith(word, concat("", [flag, "="]))

flag_word(word, flag) if {
	endswith(flag, "*")
	startswith(word, trim_suffix(flag, "*"))
}

# Redirections and here-documents that write a file or reach the network.
screen_hits contains sprintf("the redirection %s %q writes a file or reaches the network", [r.op, r.target]) if {
	some r in input.shell.redirects
	not r.here_doc
	writes_file(r)
}

screen_hits contains sprintf("a here-document feeds %q", [r.program]) if {
	some r in input.shell.redirects
	r.here_doc == true
	writes_file(r)
}

writes_file(r) if {
	contains(r.op, ">")
	r.dup == false
	r.dev_null == false
}

writes_file(r) if {
	some prefix in ["/dev/tcp/", "/dev/udp/"]
	startswith(r.target, prefix)
}

# A here-document or here-string feeding an interpreter or shell.
writes_file(r) if {
	r.here_doc == true
	r.program != ""
	listed(r.program, shell_interpreters)
}

# Any pipe into an interpreter or shell, not only from curl or wget.
screen_hits contains sprintf("a pipe may feed %q", [v.argv[0]]) if {
	some op in input.shell.operators
	op in {"|", "|&"}
	some v in screen_views
	code_runner(v)
}

# The family of a dangerous word: mkfs.ext4, mount.cifs.
screen_hits contains sprintf("%q is of a dangerous word's family", [v.argv[0]]) if {
	some v in screen_views
	dangerous_family(v.argv[0])
}

# ${!var}, ${var@P}, arithmetic: what runs depends on values not shown.
screen_hits contains "an expansion (${!x}, ${x@P}, arithmetic) decides what runs" if input.shell.evaluated > 0

# source and . run a file's commands in this shell.
screen_hits contains sprintf("%q runs a file's commands in this shell", [v.argv[0]]) if {
	some v in screen_views
	some name in program_names(v.argv[0])
	name in {"source", "."}
}

# Assignments of the loader's and the shell's search variables.
screen_hits contains sprintf("it sets %s, which changes what runs", [name]) if {
	some name in input.shell.assigned
	name in data.shell.screened_variables
}

screen_hits contains sprintf("it sets %s, which changes what runs", [name]) if {
	some cmd in input.shell.commands
	some word in cmd.argv
	some name in data.shell.screened_variables
	startswith(word, concat("", [name, "="]))
}

# Destructive subcommands (data.shell.destructive: "program subcommand"
# or "program" to the flags that make it destructive, "*" for any): the
# subcommand anywhere after the program, the flag anywhere after it, a
# one-letter flag also inside a cluster (git clean -fdx).
risky_view(v) if {
	some name in program_names(v.argv[0])
	some key in destructive_keys(name, v.argv)
	some flag in data.shell.destructive[key]
	destructive_flag(v.argv, flag)
}

# destructive_keys: the program's own key and "program word" for each
# word after it, those data.shell.destructive has.
destructive_keys(name, argv) := {k |
	some k in array.concat([name], [concat(" ", [name, word]) | some word in array.slice(argv, 1, count(argv))])
	data.shell.destructive[k]
}

destructive_flag(_, "*")

destructive_flag(argv, flag) if {
	some i, word in argv
	i > 0
	flag_word(word, flag)
}

destructive_flag(argv, flag) if {
	regex.match(`^-[A-Za-z]$`, flag)
	some i, word in argv
	i > 0
	regex.match(`^-[A-Za-z]+$`, word)
	contains(word, trim_prefix(flag, "-"))
}
