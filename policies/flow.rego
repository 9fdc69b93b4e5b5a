# The session's flow: the Rule of Two.
#
# A session remembers three labels (docs/design.md §4, "Flow"):
# untrusted_input (it has read text from outside the people and files it
# trusts), sensitive_read (it has read a secret), external_effect (it has
# sent something out or changed state outside). The engine keeps the
# labels of a session tree in input.session.labels; this file says which
# labels a call carries (flow_call_labels) and stops the call that would
# give the session all three: ask, or what data.flow.action says for
# the level, at every level and mode, as a rule's ask holds (chain.rego).
# A call the PDP allows adds its labels to the session; a person's
# allow_session of the flow rule's ask accepts all three for the session
# (the label trifecta_accepted).
#
# What is not understood counts strictly: a shell command that does not
# parse, a program word that is not literal, and a network program with a
# word that is not literal count as an external effect.
package toolperm

import rego.v1

flow_labels := ["untrusted_input", "sensitive_read", "external_effect"]

default flow_on := false

flow_on if data.flow.enabled == true

# A project's policy may switch the flow on for its sessions, never off.
flow_on if input.project.flow.enabled == true

default session_flow := {}

session_flow := input.session.labels

# flow_call_labels are the labels the call carries, sorted; [] when the
# flow is off.
default flow_call_labels := []

flow_call_labels := sort([l | some l in flow_labels; l in flow_carried]) if flow_on

# flow_carried: what the call carries, with a network read's send
# (network) resolved: a network read is an external effect too in a
# session that has, or with this call gets, a secret — its URL, its
# headers, its query can carry what the session read.
flow_carried := (flow_raw - {"network"}) | {"external_effect" |
	"network" in flow_raw
	flow_has_sensitive
}

# A secret the call itself reads and could send: a tagged path it names,
# a word that may name one, a variable named like a secret — not what a
# command prints (kubectl get secret shows the model a secret; it sends
# nothing).
flow_has_sensitive if flow_reads_input_secret

flow_has_sensitive if session_flow.sensitive_read

# flow_raw gathers the sources: the capability's table entry, the call's
# tagged paths, and the programs of its shell commands.
flow_raw := ((flow_capability_labels | flow_path_labels) | flow_shell_labels) | flow_maybe_labels

default flow_capability_labels := set()

flow_capability_labels := {l | some l in data.flow.capabilities[hits[0]]} if {
	hits := [c | some c in cap_candidates; data.flow.capabilities[c] != null]
	count(hits) > 0
}

# flow_path_labels: a path tagged sensitive or untrusted (policy data
# flow.paths, matched by the engine: input.workspace.paths[_].tags) that
# the call reads: every shell word, and the paths of every capability but
# those that do not show the model what a file holds
# (data.flow.blind_capabilities: listing names, writing).
flow_path_labels := {flow_tag_label[t] |
	not capability in flow_blind
	some p in checked_paths
	some t in p.tags
	flow_tag_label[t]
}

flow_shells := {lower(w) | some w in object.get(data.flow, "shells", [])}

flow_blind := {c | some c in object.get(data.flow, "blind_capabilities", [])}

flow_tag_label := {"sensitive": "sensitive_read", "untrusted": "untrusted_input"}

# A shell word that may name any path (it is not literal, or names what
# another command writes: xargs, $(…)) may name a secret: it counts in
# a call that sends (cat $(ls *.pem) | curl -d @- …), where reading and
# sending are one step no later call could be stopped at.
default flow_maybe_labels := set()

flow_maybe_labels := {"sensitive_read"} if {
	some p in checked_paths
	"maybe_sensitive" in p.tags
	some l in flow_sends
}

flow_sends := {l | some l in (flow_capability_labels | flow_shell_labels); l in {"external_effect", "network"}}

# flow_shell_labels: the labels of every command a shell call (or typed
# input) runs, in bodies and substitutions, and behind wrappers (every
# view command rules judge, commands.rego, and behind data.flow.wrappers:
# proxychains, torsocks); an external effect for a command that does not
# parse, and for a redirection to the network (> /dev/tcp/host/port).
default flow_shell_labels := set()

flow_shell_labels := {"external_effect"} if {
	shell_judged
	input.shell.parsed != true
} else := ({l |
	some labels in flow_command_sets
	some l in labels
} | flow_redirect_labels) | flow_word_labels if {
	shell_judged
}

# flow_notable: a command the flow may label — its program word is not
# literal, or it is named in one of the flow's tables (a program, a code
# runner, a text processor, a wrapper). Any other command (cat, grep, ls,
# make) carries nothing of its own and is not looked at further.
flow_notable(cmd) if cmd.literal[0] == false

flow_notable(cmd) if {
	some n in program_names(cmd.argv[0])
	n in flow_named
}

# flow_named depends on the data alone: pdp evaluates it once per policy.
flow_named := ((({lower(k) | some k, _ in data.flow.programs} | flow_code_runners) | shell_text_processors) | shell_wrappers) | flow_wrappers

flow_views(cmd) := array.concat(command_views(cmd), [{"argv": array.slice(cmd.argv, i, n), "literal": array.slice(cmd.literal, i, n)} |
	n := count(cmd.argv)
	n > 1
	listed(cmd.argv[0], flow_wrappers)
	some i in numbers.range(1, n - 1)
])

flow_wrappers := {lower(w) | some w in object.get(data.flow, "wrappers", [])}

# flow_network_place: a word or redirection target that reaches the
# network wherever it stands: bash's /dev/tcp and /dev/udp, gawk's /inet
# special files (a string test first: every word of every command meets
# it).
flow_network_place(w) if strings.any_prefix_match(w, ["/dev/tcp/", "/dev/udp/"])

flow_network_place(w) if {
	contains(w, "/inet")
	regex.match(`/inet[46]?/(tcp|udp)/`, w)
}

default flow_redirect_labels := set()

flow_redirect_labels := {"external_effect"} if {
	some r in input.shell.redirects
	flow_network_place(r.target)
}

# flow_word_labels: a word that names the network, and a variable named
# like a secret ($GITHUB_TOKEN: the command reads, prints or sends it).
flow_word_labels := {"external_effect" |
	some cmd in input.shell.commands
	some i, w in cmd.argv
	i > 0
	contains(w, "/")
	flow_network_place(w)
} | {"sensitive_read" |
	some cmd in input.shell.commands
	some i, lit in cmd.literal
	i > 0
	lit == false
	contains(cmd.argv[i], "$")
	regex.match(flow_secret_variable, cmd.argv[i])
}

flow_secret_variable := `(?i)\$\{?[a-z0-9_]*(token|secret|passw|passwd|pwd|key|credential|auth|cookie|session)`

# flow_command_labels: a program word that is not literal may be any
# program, and so may an interpreter given code inline or on its
# standard input (python3 -c, node -e, perl -ne, python3 - <<EOF, a
# REPL: the code may read and send in one step; a shell's inline code is
# parsed and its commands judged here one by one, data.flow.shells; the
# text processors' programs are judged by their words); a described
# program's labels by its sub-command, an external effect when it sends
# and a secret read when it prints one (data.flow.programs).
flow_command_labels(cmd) := flow_program_labels(cmd, program_names(cmd.argv[0]))

flow_program_labels(cmd, names) := {"external_effect"} if {
	cmd.literal[0] == false
	cmd.argv[0] != "<words read from standard input>" # xargs's arguments, not its program
} else := {"external_effect"} if {
	count(names & flow_code_runners) > 0
	flow_runs_code(cmd)
} else := {"external_effect"} if {
	# awk runs programs from its script: system(), print | "cmd",
	# "cmd" | getline, |& coprocesses.
	count(names & {"awk", "gawk", "mawk", "nawk"}) > 0
	some i, w in cmd.argv
	i > 0
	regex.match(`system[ \t]*\(|\|&|print[f]?[^;}]*[ \t)]\|[ \t]*"|"[ \t]*\|[ \t]*getline`, w)
} else := labels if {
	some name in names
	data.flow.programs[name]
	labels := flow_entry_labels(name, cmd)
} else := set()

# flow_code_runners are the interpreters whose code the analysis does not
# read: not the shells, not the text processors. It depends on the data
# alone, so pdp evaluates it once per policy.
flow_code_runners := (shell_interpreters - flow_shells) - shell_text_processors

shell_text_processors := {lower(w) | some w in data.shell.text_processors}

# flow_runs_code: an inline-code option, alone or attached (-c, -cCODE,
# -ne, --eval=CODE), or no script named — the program is read from
# standard input (-, a here document, a redirection, a pipe) or typed
# into a REPL — unless the words only ask for the version or the help.
flow_runs_code(cmd) if {
	some i, w in cmd.argv
	i > 0
	regex.match(`^-[A-Za-z]*[ceEpr]|^--(eval|print|command)(=|$)`, w)
}

flow_runs_code(cmd) if {
	every w in array.slice(cmd.argv, 1, count(cmd.argv)) {
		flow_not_a_script(w)
	}
	not flow_only_asks_about_itself(cmd)
}

flow_not_a_script(w) if startswith(w, "-")

flow_only_asks_about_itself(cmd) if {
	count(cmd.argv) > 1
	every w in array.slice(cmd.argv, 1, count(cmd.argv)) {
		w in {"--version", "-V", "-v", "--help", "-h", "-VV", "version"}
	}
}

flow_entry_labels(name, cmd) := (flow_sub_labels(name, words) | flow_send_labels(name, cmd)) | flow_secret_labels(name, cmd) if {
	words := flow_operands(name, cmd)
	flow_applies(name, cmd)
} else := set()

# The functions below take a program's name, not its entry: their
# results are kept by their arguments, and a name is cheaper to key by
# than the entry's object (docs/design.md §9).
flow_entry(name) := data.flow.programs[name]

# flow_applies: an entry marked only_bare applies only when the command
# has no operand (env prints the environment; env X=1 cmd runs cmd).
flow_applies(name, _) if not flow_entry(name).only_bare

flow_applies(name, cmd) if {
	flow_entry(name).only_bare
	every w in array.slice(cmd.argv, 1, count(cmd.argv)) {
		startswith(w, "-")
	}
}

# flow_operands are the words after the program that are not options,
# nor the value of an option listed as taking one (git -C dir push).
flow_operands(name, cmd) := [w |
	value_options := object.get(flow_entry(name), "value_options", [])
	some i, w in cmd.argv
	i > 0
	not startswith(w, "-")
	not cmd.argv[i - 1] in value_options
]

# flow_sub_labels: the labels of the longest sub-command the operands
# start with, else the program's own.
flow_sub_labels(name, words) := {l | some l in flow_entry(name).subcommands[key]} if {
	keys := [k |
		some k, _ in object.get(flow_entry(name), "subcommands", {})
		parts := split(k, " ")
		count(parts) <= count(words)
		array.slice(words, 0, count(parts)) == parts
	]
	count(keys) > 0
	longest := max([count(split(k, " ")) | some k in keys])
	some key in keys
	count(split(key, " ")) == longest
} else := {l | some l in object.get(flow_entry(name), "labels", [])}

# flow_send_labels: a word that is not literal in a network program (data
# built into the request), or an option or word the entry lists as
# sending (curl -d, wget --post-data, rsync host:path).
flow_send_labels(name, cmd) := {"external_effect"} if {
	"network" in object.get(flow_entry(name), "labels", [])
	some lit in cmd.literal
	lit == false
} else := {"external_effect"} if {
	some re in object.get(flow_entry(name), "send_words", [])
	some i, w in cmd.argv
	i > 0
	regex.match(re, w)
} else := set()

# flow_secret_labels: a word the entry lists as printing a secret
# (kubectl get secret/db, gh auth status --show-token).
flow_secret_labels(name, cmd) := {"sensitive_read"} if {
	some re in object.get(flow_entry(name), "secret_words", [])
	some i, w in cmd.argv
	i > 0
	regex.match(re, w)
} else := set()

# flow_facts are what the answer reads of the flow (answer_facts): the
# labels the call carries, and the flow's verdicts on it, the first
# deciding: the denies of a security team's own flow rules
# (flow_rules), the Rule of Two's stop, their asks.
flow_facts := {"labels": flow_call_labels, "stop": array.concat(
	array.concat(flow_own("deny"), [v | v := flow_stop]),
	flow_own("ask"),
)}

# flow_rules are a security team's own flow rules (docs/policy.md, "The
# session's flow"): rules in package toolperm that add
# {"rule", "action", "reason"} for a call they stop, action deny or ask.
# None ship; this definition never holds.
flow_rules contains {"rule": "", "action": "", "reason": ""} if false

flow_own(action) := [v | some v in flow_rules; v.action == action]

# flow_piped_secret: one command of the call prints a secret and another
# sends (printenv | curl -d @- …, gh auth token > t && curl -T t …):
# the secret reaches the sender, not the model, so it is read while the
# call runs.
flow_piped_secret if {
	some i, a in flow_command_sets
	"sensitive_read" in a
	some j, b in flow_command_sets
	i != j
	count(b & {"external_effect", "network"}) > 0
}

flow_command_sets[i] := {l |
	some v in flow_views(cmd)
	some l in flow_command_labels(v)
} if {
	shell_judged
	some i, cmd in input.shell.commands
	flow_notable(cmd)
}

# flow_acting are the labels a call brings while it runs, before the
# model sees its result: its external effect, and a secret it reads to
# use or send (curl -T key.pem). What its result brings — untrusted text,
# a secret it prints — reaches the model after it ran, so it counts for
# the calls after it, never for the call itself: a fetch in a session
# that has read a secret, but no untrusted input, was not asked for by
# an injection.
flow_acting := {l |
	some l in flow_call_labels
	l == "external_effect"
} | {"sensitive_read" | flow_reads_input_secret}

flow_reads_input_secret if "sensitive_read" in ((flow_path_labels | flow_maybe_labels) | flow_word_labels)

flow_reads_input_secret if flow_piped_secret

flow_after := {l | some l, _ in session_flow} | flow_acting

flow_stop := {"rule": "FLOW_RULE_OF_TWO", "action": flow_action, "reason": flow_stop_reason} if {
	flow_on
	count(flow_call_labels) > 0
	not session_flow.trifecta_accepted
	every l in flow_labels {
		l in flow_after
	}
}

# flow_action is the policy's action for the level, or the project's
# where it is stricter.
default flow_action := "ask"

flow_action := "deny" if {
	"deny" in {policy_flow_action, object.get(input, ["project", "flow", "action"], "ask")}
} else := policy_flow_action

default policy_flow_action := "ask"

policy_flow_action := a if {
	a := data.flow.action[input.session.permission_level]
	a in {"ask", "deny"}
}

# flow_stop_reason is flow_reason, or a plain sentence should it not
# format: the stop never depends on its words.
default flow_stop_reason := "The call would give the session all three of untrusted input, a secret and a way out (the Rule of Two), so a person decides."

flow_stop_reason := flow_reason

# flow_reason names the labels the session has and the calls that set
# them, then what this call would add.
flow_reason := sprintf("This session %s; %s would %s: the session would have all three of untrusted input, a secret and a way out (the Rule of Two), so a person decides.", [
	flow_and([flow_had(l) | some l in flow_labels; session_flow[l]]),
	flow_this_call,
	flow_adds,
])

# flow_adds says what the call adds to the session: the labels it does
# not have, or (a session that has all three, not accepted) what it does
# again.
flow_adds := flow_and(new) if {
	new := [flow_verb[l] | some l in flow_labels; l in flow_acting; not session_flow[l]]
	count(new) > 0
} else := sprintf("%s again", [flow_and([flow_verb[l] | some l in flow_labels; l in flow_call_labels])])

# flow_and joins a list as a sentence does: "a, b and c".
flow_and(list) := list[0] if count(list) == 1

else := concat(" and ", [concat(", ", array.slice(list, 0, count(list) - 1)), list[count(list) - 1]])

flow_verb := {
	"untrusted_input": "read untrusted input",
	"sensitive_read": "read sensitive data",
	"external_effect": "send data out or change something outside",
}

flow_had_verb := {
	"untrusted_input": "read untrusted input",
	"sensitive_read": "read sensitive data",
	"external_effect": "sent data out or changed something outside",
}

flow_had(l) := sprintf("%s (%s, decision %s)", [flow_had_verb[l], shown(object.get(session_flow[l], "summary", "")), object.get(session_flow[l], "decision_id", "")])

flow_this_call := sprintf("`%s`", [shown(concat("; ", [p.text | some p in input.shell.parts]))]) if {
	shell_judged
	count(object.get(input.shell, "parts", [])) > 0
} else := sprintf("this %s call", [object.get(input, "tool", capability)])
