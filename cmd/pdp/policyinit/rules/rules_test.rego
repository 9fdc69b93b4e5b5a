# rules/data.json is data.rules: capability patterns ("mcp.linear.*",
# "net.fetch") and the action for them: allow, ask or deny. Without a
# rule an MCP tool is denied; this one asks a person.
package local.rules_test

import rego.v1

session := {
	"permission_level": "READ_ONLY", "mode": "on-demand", "execution_mode": "LOCAL",
	"workspace": "/w", "rules": {}, "command_rules": {}, "grants": [], "has_parent": false,
}

test_linear_tools_ask if {
	d := data.toolperm.decision with input as {"tool": "mcp__linear__create_issue", "session": session}
	d.decision == "ask"
	d.rule == "mcp.linear.*"
}
