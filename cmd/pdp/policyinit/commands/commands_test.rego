# commands/data.json is data.commands: command prefixes ("git push",
# "go test") and the action for them. A deny holds at every level and
# mode, FULL included; the engine hands the policy the parsed command
# (pdp decide --print-input shows it for any command).
package local.commands_test

import rego.v1

session(level) := {
	"permission_level": level, "mode": "on-demand", "execution_mode": "LOCAL",
	"workspace": "/w", "rules": {}, "command_rules": {}, "grants": [], "has_parent": false,
}

# shell is the engine's facts of one plain command of literal words.
shell(argv) := {
	"parsed": true, "assigned": [], "assignments": 0, "evaluated": 0, "substitutions": 0,
	"redirections": 0, "redirects": [], "operators": [], "compound": [],
	"commands": [{"argv": argv, "literal": [true | some _ in argv]}],
	"parts": [{
		"text": concat(" ", argv), "argv": argv, "literal": [true | some _ in argv],
		"simple": true, "first": 0, "end": 1, "assignments": 0, "evaluated": 0, "substitutions": 0,
		"background": false, "negated": false, "redirections": [],
	}],
}

test_force_push_is_denied_even_at_full if {
	every level in ["READ_ONLY", "FULL"] {
		d := data.toolperm.decision with input as {
			"tool": "shell",
			"session": session(level),
			"shell": shell(["git", "push", "--force", "origin", "main"]),
		}
		d.decision == "deny"
		d.rule == "git push --force"
	}
}
