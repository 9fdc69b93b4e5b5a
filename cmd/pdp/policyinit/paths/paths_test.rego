# paths/data.json is data.paths: gitignore-style patterns and the action
# for every access, or per access ({"write": "ask"}). The engine matches
# paths against them and hands the policy the rule of each path, as
# below; pdp decide --print-input shows what a call gets.
package local.paths_test

import rego.v1

session := {
	"permission_level": "READ_WRITE", "mode": "on-demand", "execution_mode": "LOCAL",
	"workspace": "/w", "rules": {}, "command_rules": {}, "grants": [], "has_parent": false,
}

secret_rule := {"pattern": "secrets/**", "action": data.paths["secrets/**"], "place": false}

test_writing_a_secret_is_denied if {
	path := {
		"value": "secrets/key.pem", "path": "/w/secrets/key.pem", "rel": "secrets/key.pem", "inside": true,
		"rules": {"write": {"policy": secret_rule}},
	}
	d := data.toolperm.decision with input as {
		"tool": "write_file",
		"session": session,
		"workspace": {"outside": [], "paths": [path]},
	}
	d.decision == "deny"
	d.rule == "secrets/**"
}
