package toolperm_test

import data.toolperm
import rego.v1

# The project layer (docs/policy.md, "The project layer"): the rules of a
# repository's .toolperm/policy.json, as pdp hands them over in
# input.project (its path rules reach the policy with each path, as the
# "project" layer's facts), which only tighten.

in_project(inp, layer) := object.union(inp, {"project": object.union(
	{"from": "workspace", "file": ".toolperm/policy.json", "rules": {}, "command_rules": {}, "flow": {"enabled": false}},
	layer,
)})

test_a_project_command_deny_holds_at_full if {
	inp := in_project(cmd_call(plain(["git", "push", "origin", "main"]), {"permission_level": "FULL"}), {"command_rules": {"git push": "deny"}})
	expect(inp, "deny", "project", "git push")
	d := decide(inp)
	d.reason == "The project (.toolperm/policy.json) command rule \"git push\" denies \"git push origin main\"."

	# Without the layer, FULL allows it.
	expect(cmd_call(plain(["git", "push", "origin", "main"]), {"permission_level": "FULL"}), "allow", "mode", "MODE")
}

test_the_reason_says_when_the_hook_sent_the_file if {
	inp := in_project(cmd_call(plain(["git", "push"]), {"permission_level": "FULL"}), {"from": "hook", "command_rules": {"git push": "ask"}})
	d := decide(inp)
	d.decision == "ask"
	d.reason == "The project (.toolperm/policy.json, sent by the hook) command rule \"git push\" asks for \"git push\"."
}

test_a_project_allow_never_allows if {
	# A command rule's allow is no standing grant.
	expect(in_project(cmd_call(plain(["go", "test", "./..."]), {}), {"command_rules": {"go test": "allow"}}), "ask", "level", "shell.exec")

	# A capability allow does not loosen the level's ask.
	expect(in_project(call("fs.write", {}), {"rules": {"fs.write": "allow"}}), "ask", "level", "fs.write")

	# Nor the fallback's deny, nor the dangerous list's.
	expect(in_project(call("code.unknown", {"rules": {}}), {"rules": {"code.unknown": "allow"}}), "allow", "config", "code.*")
	expect(in_project(call("db.query", {}), {"rules": {"db.query": "allow"}}), "deny", "default", "FALLBACK")
	expect(in_project(call("mcp.x.y", {}), {"rules": {"mcp.*": "allow"}}), "deny", "default", "DANGEROUS_NO_RULE")
}

test_a_project_ask_needs_another_layers_rule if {
	# Where no other layer has a rule, an ask would turn a deny into an ask.
	expect(in_project(call("mcp.x.y", {}), {"rules": {"mcp.*": "ask"}}), "deny", "default", "DANGEROUS_NO_RULE")
	expect(in_project(call("db.query", {}), {"rules": {"db.*": "ask"}}), "deny", "default", "FALLBACK")

	# Where one has, it tightens.
	expect(in_project(call("fs.write", {"permission_level": "READ_WRITE"}), {"rules": {"fs.*": "ask"}}), "ask", "project", "fs.*")

	# A deny needs none.
	expect(in_project(call("mcp.x.y", {"permission_level": "FULL"}), {"rules": {"mcp.*": "deny"}}), "deny", "project", "mcp.*")
}

test_a_project_exception_to_its_own_rule if {
	layer := {"command_rules": {"git": "deny", "git status": "allow"}}
	expect(in_project(cmd_call(plain(["git", "status"]), {"permission_level": "FULL"}), layer), "allow", "mode", "MODE")
	expect(in_project(cmd_call(plain(["git", "log"]), {"permission_level": "FULL"}), layer), "deny", "project", "git")

	caps := {"rules": {"mcp.github.*": "deny", "mcp.github.get_issue": "allow"}}
	expect(in_project(call("mcp.github.get_issue", {"permission_level": "FULL"}), caps), "allow", "mode", "MODE")
	expect(in_project(call("mcp.github.create_issue", {"permission_level": "FULL"}), caps), "deny", "project", "mcp.github.*")
}

test_the_organisations_deny_is_named_first if {
	inp := in_project(cmd_call(plain(["git", "push"]), {"command_rules": {"git push": "deny"}}), {"command_rules": {"git push": "deny"}})
	expect(inp, "deny", "config", "git push")
}

test_a_project_path_rule if {
	deny := {"read": {"project": rule("secrets/**", "deny")}, "write": {"project": rule("secrets/**", "deny")}}
	inp := in_project(file_call("fs.read", {"permission_level": "FULL"}, [inside("secrets/key", deny)]), {})
	expect(inp, "deny", "project", "secrets/**")
	d := decide(inp)
	d.reason == "The project (.toolperm/policy.json) path rule \"secrets/**\" denies reading /w/secrets/key."

	ask := {"write": {"project": rule("docs/**", "ask")}}
	expect(in_project(file_call("fs.write", {"permission_level": "FULL"}, [inside("docs/a.md", ask)]), {}), "ask", "project", "docs/**")
}

test_a_project_fs_rule_stops_a_command_judged_by_its_effects if {
	cat := effect_call(plain(["cat", "README.md"]), {}, [])
	expect(cat, "allow", "level", "fs.read")
	expect(in_project(cat, {"rules": {"fs.read": "ask"}}), "ask", "level", "shell.exec")
	expect(in_project(cat, {"rules": {"fs.*": "deny", "shell.exec": "ask"}}), "ask", "project", "shell.exec")
}

test_a_project_may_make_the_flow_stricter if {
	s := on_full(object.union(untrusted, secret))
	expect(in_project(call("net.fetch", s), {"flow": {"enabled": false, "action": "deny"}}), "deny", "config", "FLOW_RULE_OF_TWO")
	expect(in_project(call("net.fetch", s), {"flow": {"enabled": false, "action": "ask"}}), "ask", "config", "FLOW_RULE_OF_TWO") with data.flow.action.FULL as "ask"
	expect(in_project(call("net.fetch", s), {"flow": {"enabled": false, "action": "ask"}}), "deny", "config", "FLOW_RULE_OF_TWO") with data.flow.action.FULL as "deny"

	# And switch it on where the policy has it off.
	expect(call("net.fetch", s), "allow", "mode", "MODE") with data.flow.enabled as false
	expect(in_project(call("net.fetch", s), {"flow": {"enabled": true}}), "ask", "config", "FLOW_RULE_OF_TWO") with data.flow.enabled as false
}

test_a_project_policy_that_cannot_be_used_denies_everything if {
	broken := {"project": {"from": "hook", "file": ".toolperm/policy.json", "error": ".toolperm/policy.json (hook): the file is not JSON"}}
	inp := object.union(call("fs.read", {"permission_level": "FULL"}), broken)
	expect(inp, "deny", "project", "PROJECT_POLICY")
	d := decide(inp)
	contains(d.reason, "the file is not JSON")
	expect(object.union(call("fs.read", {"mode": "allow-all"}), broken), "deny", "project", "PROJECT_POLICY")
}
