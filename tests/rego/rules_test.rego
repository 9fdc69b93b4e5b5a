package toolperm_test

import data.toolperm
import rego.v1

session(overrides) := object.union(
	{
		"permission_level": "READ_ONLY", "mode": "on-demand", "execution_mode": "LOCAL",
		"workspace": "/w", "rules": {}, "grants": [], "has_parent": false,
	},
	overrides,
)

call(cap, overrides) := {"capability": cap, "session": session(overrides)}

test_segment_matching if {
	m := toolperm.matches.session with input as call("mcp.github.create_issue", {"rules": {"mcp.github.*": "ask"}})
	m.pattern == "mcp.github.*"
	not toolperm.matches.session with input as call("mcp.githubx.y", {"rules": {"mcp.github.*": "ask"}})
	not toolperm.matches.session with input as call("mcp.github", {"rules": {"mcp.github.*": "ask"}})
	not toolperm.matches.session with input as call("mcp.github.x", {"rules": {"mcp.git.*": "ask"}})
}

test_exact_beats_prefix_and_longest_prefix_wins if {
	rules := {"mcp.*": "deny", "mcp.github.*": "ask", "mcp.github.list": "allow"}
	toolperm.matches.session.pattern == "mcp.github.list" with input as call("mcp.github.list", {"rules": rules})
	toolperm.matches.session.pattern == "mcp.github.*" with input as call("mcp.github.create", {"rules": rules})
	toolperm.matches.session.pattern == "mcp.*" with input as call("mcp.slack.post", {"rules": rules})
}

test_strictest_layer_wins if {
	# A user rule cannot loosen the security team's rule.
	r1 := toolperm.resolved with input as call("net.fetch", {"rules": {"net.fetch": "allow"}})
		with data.rules as {"net.*": "ask"}
	r1.action == "ask"
	r1.layer == "policy"
	r1.source == "config"

	# A stricter level tightens what a broader rule allows.
	r2 := toolperm.resolved with input as call("fs.write", {"rules": {"fs.*": "allow"}})
	r2.action == "ask"
	r2.layer == "level"
	r2.source == "level"
}

test_tie_names_the_earlier_layer if {
	r := toolperm.resolved with input as call("fs.write", {"rules": {"fs.write": "ask"}})
	r.layer == "session"
	r.pattern == "fs.write"
}

test_unknown_action_ranks_as_deny if {
	toolperm.rank("maybe") == 3
	r := toolperm.resolved with input as call("fs.read", {"rules": {"fs.read": "maybe"}})
	r.action == "maybe"
	toolperm.rank(r.action) == 3
}

test_level_layer_only_for_local if {
	toolperm.matches.level with input as call("fs.write", {})
	not toolperm.matches.level with input as call("fs.write", {"execution_mode": "CLOUD"})
}

test_dangerous_list if {
	toolperm.is_dangerous with input as call("fs.write", {})
	toolperm.is_dangerous with input as call("shell.exec", {})
	toolperm.is_dangerous with input as call("shell.jobs", {})
	not toolperm.is_dangerous with input as call("shell.stdin", {})
	toolperm.is_dangerous with input as call("net.fetch", {})
	toolperm.is_dangerous with input as call("mcp.github.create_issue", {})
	toolperm.is_dangerous with input as call("plugin.x.y", {})
	not toolperm.is_dangerous with input as call("fs.read", {})
	not toolperm.is_dangerous with input as call("ask.user", {})
}

test_ask_always_patterns if {
	toolperm.ask_always_hit with input as call("mcp.github.x", {}) with data.ask_always as ["mcp.github.*"]
	not toolperm.ask_always_hit with input as call("mcp.githubx.x", {}) with data.ask_always as ["mcp.github.*"]
}

test_scope_patterns if {
	toolperm.in_scope with input as call("fs.read", {"scope": ["fs.*"]})
	not toolperm.in_scope with input as call("shell.exec", {"scope": ["fs.*"]})
}

test_long_capabilities_match_by_segment if {
	toolperm.candidates("plugin.lint.run.fast") == ["plugin.lint.run.fast", "plugin.lint.run.*", "plugin.lint.*", "plugin.*"]
	m := toolperm.matches.session with input as call("plugin.lint.run.fast", {"rules": {"plugin.lint.*": "ask", "plugin.*": "allow"}})
	m == {"pattern": "plugin.lint.*", "action": "ask"}
}

test_strictest_layer_in_every_order if {
	# The policy layer alone, or stricter than the others.
	toolperm.resolved.layer == "policy" with input as call("code.outline", {})
	toolperm.resolved.layer == "policy" with input as call("fs.read", {"rules": {"fs.read": "ask"}}) with data.rules as {"fs.*": "deny"}

	# The session's rule when it is the strictest, or the only one.
	toolperm.resolved.layer == "session" with input as call("fs.read", {"rules": {"fs.read": "deny"}}) with data.rules as {"fs.*": "ask"}
	toolperm.resolved.layer == "session" with input as call("mcp.x.y", {"rules": {"mcp.x.*": "allow"}})

	# The level's when nothing else is as strict, or nothing else applies.
	toolperm.resolved.layer == "level" with input as call("fs.write", {"rules": {"fs.write": "allow"}}) with data.rules as {"fs.*": "allow"}
	not toolperm.resolved with input as call("widget.spin", {})
}

# The shipped policy reads the runtime's mode as a fact only.
test_runtime_mode_never_loosens_the_shipped_policy if {
	inp := object.union(call("fs.write", {}), {"runtime": {"agent": "claude-code", "permission_mode": "acceptEdits"}})
	toolperm.decision.decision == "ask" with input as inp
}

# The opt-in of docs/policy.md: acceptEdits picks READ_WRITE's table, and
# never a stricter one than the session's.
test_runtime_level_opt_in if {
	accept := {"runtime": {"permission_mode": "acceptEdits"}}
	toolperm.decision.decision == "allow" with input as object.union(call("fs.write", {}), accept)
		with toolperm.runtime_level as "READ_WRITE"
	toolperm.decision.decision == "allow" with input as object.union(call("fs.write", {"permission_level": "SMART"}), accept)
		with toolperm.runtime_level as "READ_ONLY"
}
