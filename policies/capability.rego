# METADATA
# title: Capabilities
# description: |
#   Maps the tool a dispatcher names to the capability the policy judges.
#   The map lives in the tool catalogue data.tools (each entry names the
#   tool's capability and what its arguments hold; the engine reads the
#   arguments part for the workspace check) and data.tool_actions for
#   tools whose action argument changes what they do; an entry named
#   "<agent>/<tool>" applies to that agent's calls only. Claude Code's MCP tool names
#   (mcp__server__tool) and dotted capability ids used as tool names map
#   without an entry.
package toolperm

import rego.v1

# A dotted capability id: two or more [a-z0-9_-]+ segments.
dotted_id := `^[a-z0-9_-]+(\.[a-z0-9_-]+)+$`

# tool_capability is the capability the tool named in the input maps to.
tool_capability := cap if {
	cap := data.tool_actions[input.tool][input.action]

	# A stdin write that also carries a command runs that command: it is
	# judged as the tool's own capability (shell.exec), never as stdin.
	not command_given
} else := cap if {
	cap := tool_entry.capability
} else := cap if {
	cap := mcp_capability(input.tool)
} else := input.tool if {
	not startswith(input.tool, "mcp__")
	regex.match(dotted_id, input.tool)
}

# tool_entry is the tool's catalogue entry as the calling runtime names
# it: "<agent>/<tool>" when the catalogue declares the tool for that agent
# (the same name can mean different things in two agents), else "<tool>".
# The engine's workspace check looks the entry up the same way. A tool
# name with a "/" has no entry: another agent's "<agent>/<tool>" is an
# unknown tool, never that agent's entry.
tool_entry := data.tools[concat("/", [input.runtime.agent, input.tool])] if {
	is_string(input.runtime.agent)
	not contains(input.tool, "/")
} else := data.tools[input.tool] if {
	not contains(input.tool, "/")
}

# command_given: the call carries a command, which the engine has parsed
# (or tried to: shell facts always say whether it parsed). Read through
# input.shell.parsed and input.shell.typed alone, so the capability
# depends on the tool, the action and these, never on the command's
# words. Lines typed into a running process (typed) are no command of
# the call: the write stays shell.stdin.
command_given if {
	is_boolean(input.shell.parsed)
	not input.shell.typed
}

# mcp_capability maps Claude Code's mcp__<server>__<tool> to mcp.<server>.<tool>.
mcp_capability(tool) := cap if {
	parts := split(tool, "__")
	count(parts) >= 3
	parts[0] == "mcp"
	cap := lower(sprintf("mcp.%s.%s", [parts[1], concat("__", array.slice(parts, 2, count(parts)))]))
	regex.match(dotted_id, cap)
	count(split(cap, ".")) == 3
}

# capability is what the call exercises: the tool's mapping, or the
# capability the request names when it names no tool. Undefined for an
# unknown tool, which the chain denies.
capability := tool_capability if {
	input.tool
} else := input.capability if {
	not input.tool
	input.capability
}

# capability_mismatch holds when the request names both a tool and a
# capability and they disagree: bad input, never a decision.
capability_mismatch if {
	input.tool
	input.capability
	tool_capability != input.capability
}

capability_mismatch if {
	input.tool
	input.capability
	not tool_capability
}

# cap_candidates are the patterns that can match the capability, most
# specific first: "a.b.c", "a.b.*", "a.*". Every rule lookup indexes with
# these instead of scanning the rules.
cap_candidates := candidates(capability)

candidates(cap) := [cap, concat(".", [p[0], p[1], "*"]), concat(".", [p[0], "*"])] if {
	p := split(cap, ".")
	count(p) == 3
} else := [cap, concat(".", [p[0], "*"])] if {
	p := split(cap, ".")
	count(p) == 2
} else := array.concat([cap], [prefix |
	# one segment, or four and more: the prefixes by length, longest first
	p := split(cap, ".")
	some n in numbers.range(count(p) - 1, 1)
	n > 0
	n < count(p)
	prefix := concat(".", array.concat(array.slice(p, 0, n), ["*"]))
])
