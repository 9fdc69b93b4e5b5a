# Shell fingerprints.
#
# Decides from the shell adapter's parsed facts whether a shell.exec call
# is exactly one plain command whose first two words can name a grant,
# and computes its fingerprint "argv[0] argv[1]".
package toolperm

import rego.v1

default fingerprint := null

# fingerprint of a grantable shell.exec call; null otherwise.
fingerprint := concat(" ", array.slice(input.shell.commands[0].argv, 0, 2)) if {
	capability == "shell.exec"
	single_plain_command
}

grantable := fingerprint != null

# single_plain_command: one simple command, nothing around it, literal
# first two words, no option in place of a subcommand, and a program that
# is neither dangerous nor runs other programs.
single_plain_command if {
	s := input.shell
	s.parsed == true
	count(s.commands) == 1
	count(s.operators) == 0
	count(s.compound) == 0
	s.substitutions == 0
	s.redirections == 0
	s.assignments == 0
	cmd := s.commands[0]
	count(cmd.argv) >= 2
	cmd.literal[0] == true
	cmd.literal[1] == true
	not startswith(cmd.argv[1], "-")
	not ungrantable_program(cmd.argv[0])
}

# program_names are the names a word may run as: its last path element,
# lower-cased (case-insensitive file systems run RM as rm), with and
# without a version suffix (python3.12 is python). /bin/rm is rm.
program_names(word) := {name, trim_right(name, "0123456789.")} if {
	parts := split(lower(word), "/")
	name := parts[count(parts) - 1]
}

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

ungrantable_program(word) if listed(word, shell_dangerous_words)

ungrantable_program(word) if listed(word, shell_wrappers)

ungrantable_program(word) if listed(word, shell_interpreters)

ungrantable_program(word) if "" in program_names(word)

# screened: a shell.exec call that is DANGEROUS without asking the model
# (danger.by "screen"): it does not parse, has a program the policy cannot
# name, runs a dangerous word anywhere in command position (inside $( ),
# pipelines, sh -c bodies, after wrappers such as sudo, env, xargs), or
# hands an interpreter inline code.
screened if not input.shell

screened if input.shell.parsed == false

screened if {
	some cmd in input.shell.commands
	cmd.literal[0] == false
}

screened if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_dangerous_words)
}

screened if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_wrappers)
	some i, word in cmd.argv
	i > 0
	listed(word, shell_dangerous_words)
}

screened if {
	some cmd in input.shell.commands
	listed(cmd.argv[0], shell_interpreters)
	some word in cmd.argv
	word in data.shell.inline_code_flags
}
