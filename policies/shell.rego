# Shell fingerprints.
#
# The fingerprint of a shell.exec call of one part is that part's
# (commands.rego: the program, or its first two words); a call of several
# parts has none at the top level, each part carries its own.
package toolperm

import rego.v1

default fingerprint := null

# fingerprint of a grantable shell.exec call of one part; null otherwise.
fingerprint := fp if {
	count(shell_parts) == 1
	fp := part_fingerprint(shell_parts[0])
}

# grantable: allow_session can grant every part that is not already allowed.
default grantable := false

grantable if parts_grantable

# shell_judged: the call's shell facts meet the deny floor, command
# rules and path rules — a shell.exec call's command, or the complete
# lines a shell.stdin write types into a running process, which may be a
# shell (input.shell.typed). Only a shell.exec call has parts a grant,
# a command rule's allow or the screen judge.
shell_judged if capability == "shell.exec"

shell_judged if {
	capability == "shell.stdin"
	input.shell.typed == true
}

# program_names are the names a word may run as: its last path element,
# lower-cased (case-insensitive file systems run RM as rm), with and
# without a version suffix (python3.12 is python). /bin/rm is rm.
program_names(word) := {name, trim_right(name, "0123456789.")} if {
	parts := split(lower(word), "/")
	name := parts[count(parts) - 1]
}

default listed(_, _) := false

# listed: the word runs as a program on the list. names is one of the
# lower-cased sets below, never a data list itself.
listed(word, names) if {
	some name in program_names(word)
	name in names
}

# The program lists of data.shell, lower-cased: program_names lower-cases
# the word, so an entry written "Rscript" must be found as "rscript".
shell_dangerous_words := {lower(w) | some w in data.shell.dangerous_words}

shell_wrappers := {lower(w) | some w in data.shell.wrappers}

shell_interpreters := {lower(w) | some w in data.shell.interpreters}

# ungrantable_programs: the names no grant may cover — the dangerous
# words, the wrappers, the interpreters, the state builtins (cd, export:
# commands.rego) — and "" (a word with no program name, such as "dir/").
# It depends on the data alone, so pdp evaluates it once per policy.
ungrantable_programs := (((shell_dangerous_words | shell_wrappers) | shell_interpreters) | shell_state_builtins) | {""}

# screened: a shell.exec call that is DANGEROUS without asking the model
# (danger.by "screen"): it does not parse, has a program the policy cannot
# name, runs a dangerous word anywhere in command position (inside $( ),
# pipelines, sh -c bodies, after wrappers such as sudo, env, xargs), or
# hands an interpreter inline code. screen_hits says what each matching
# rule found, for the reason a person reads (chain.rego).
screened if some _ in screen_hits

screen_hits contains "the command was not analysed" if not input.shell

screen_hits contains "it does not parse as bash, or is over a limit of the analysis" if input.shell.parsed == false

screen_hits contains sprintf("the program word %q is not literal", [cmd.argv[0]]) if {
	some cmd in input.shell.commands
	cmd.literal[0] == false
}

screen_hits contains sprintf("%q is a dangerous word", [cmd.argv[0]]) if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_dangerous_words)
}

screen_hits contains sprintf("%q runs the dangerous word %q", [cmd.argv[0], word]) if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_wrappers)
	some i, word in cmd.argv
	i > 0
	listed(word, shell_dangerous_words)
}

screen_hits contains sprintf("%q is given inline code (%s)", [cmd.argv[0], word]) if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_interpreters)
	some word in cmd.argv
	word in data.shell.inline_code_flags
}
