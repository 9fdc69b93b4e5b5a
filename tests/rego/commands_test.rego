package toolperm_test

import data.toolperm
import rego.v1

cmd_call(facts, overrides) := {"tool": "shell", "shell": facts, "session": session(overrides)}

# --- layers, longest prefix, chain position ----------------------------

test_command_deny_holds_at_every_level_and_mode if {
	rules := {"command_rules": {"git push --force": "deny"}}
	facts := plain(["git", "push", "--force"])
	expect(cmd_call(facts, rules), "deny", "config", "git push --force")
	expect(cmd_call(facts, object.union(rules, {"permission_level": "FULL"})), "deny", "config", "git push --force")
	expect(cmd_call(facts, object.union(rules, {"mode": "allow-all"})), "deny", "config", "git push --force")
	expect(cmd_call(facts, object.union(rules, {"execution_mode": "CLOUD"})), "deny", "config", "git push --force")
	d := decide(cmd_call(facts, rules))
	d.step == "explicit_deny"
	d.reason == "The session command rule \"git push --force\" denies \"git push --force\"."
}

test_command_ask_holds_over_full_and_grants if {
	rules := {"command_rules": {"git push": "ask"}, "permission_level": "FULL"}
	expect(cmd_call(plain(["git", "push", "origin"]), rules), "ask", "config", "git push")
	granted := object.union(rules, {"grants": [{"capability": "shell.exec", "fingerprint": "git push"}]})
	expect(cmd_call(plain(["git", "push"]), granted), "ask", "config", "git push")
	not toolperm.grantable with input as cmd_call(plain(["git", "push"]), granted)
}

test_command_allow_is_a_standing_grant if {
	rules := {"command_rules": {"go test": "allow"}}
	expect(cmd_call(plain(["go", "test", "./..."]), rules), "allow", "config", "go test")
	d := decide(cmd_call(plain(["go", "test", "./..."]), rules))
	d.step == "session_grant"

	# Still subject to an explicit deny and to ask_always.
	expect(cmd_call(plain(["go", "test"]), object.union(rules, {"rules": {"shell.exec": "deny"}})), "deny", "config", "shell.exec")
	expect(cmd_call(plain(["go", "test"]), rules), "ask", "level", "shell.exec") with data.ask_always as ["shell.exec"]

	# Not for what the prefix does not name.
	expect(cmd_call(plain(["go", "build"]), rules), "ask", "level", "shell.exec")
	expect(cmd_call(plain(["go"]), rules), "ask", "level", "shell.exec")
}

test_longest_prefix_wins_within_a_layer if {
	rules := {"command_rules": {"git": "deny", "git status": "allow"}}
	expect(cmd_call(plain(["git", "status", "-s"]), rules), "allow", "config", "git status")
	expect(cmd_call(plain(["git", "push"]), rules), "deny", "config", "git")
	expect(cmd_call(plain(["git", "push", "--force"]), {"command_rules": {"git push": "allow", "git push --force": "deny"}}), "deny", "config", "git push --force")
}

test_strictest_layer_wins if {
	# A session allow never loosens a policy ask or deny.
	expect(cmd_call(plain(["npm", "publish"]), {"command_rules": {"npm publish": "allow"}}), "ask", "config", "npm publish") with data.commands as {"npm publish": "ask"}
	expect(cmd_call(plain(["npm", "publish"]), {"command_rules": {"npm": "allow"}}), "deny", "config", "npm publish") with data.commands as {"npm publish": "deny"}

	# A policy allow with no session rule allows; a session ask tightens it.
	expect(cmd_call(plain(["make", "test"]), {}), "allow", "config", "make test") with data.commands as {"make test": "allow"}
	expect(cmd_call(plain(["make", "test"]), {"command_rules": {"make": "ask"}}), "ask", "config", "make") with data.commands as {"make test": "allow"}
	d := decide(cmd_call(plain(["make", "test"]), {})) with data.commands as {"make test": "allow"}
	d.reason == "The policy command rule \"make test\" allows \"make test\"."
}

test_program_compared_as_program_names if {
	rules := {"command_rules": {"Git push": "deny"}}
	expect(cmd_call(plain(["/usr/bin/GIT", "push"]), rules), "deny", "config", "git push")
	expect(cmd_call(plain(["python3.12", "-m", "http.server"]), {"command_rules": {"python -m": "deny"}}), "deny", "config", "python -m")
}

test_an_unknown_action_denies if {
	expect(cmd_call(plain(["git", "push"]), {}), "deny", "config", "git push") with data.commands as {"git push": "nope"}
}

# --- deny and ask are not dodged by packaging -------------------------

test_deny_behind_wrappers_bodies_and_substitutions if {
	rules := {"command_rules": {"git push --force": "deny"}, "permission_level": "FULL"}
	expect(cmd_call(plain(["env", "git", "push", "--force"]), rules), "deny", "config", "git push --force")
	expect(cmd_call(plain(["timeout", "60", "git", "push", "--force"]), rules), "deny", "config", "git push --force")
	expect(cmd_call(plain(["sudo", "-u", "me", "git", "push", "--force"]), rules), "deny", "config", "git push --force")

	# bash -c 'git push --force': the body's command is the part's too.
	body := {
		"parsed": true, "operators": [], "compound": [], "redirections": 0, "substitutions": 0, "assignments": 0,
		"redirects": [], "evaluated": 0, "assigned": [],
		"commands": [
			{"argv": ["bash", "-c", "git push --force"], "literal": [true, true, true]},
			{"argv": ["git", "push", "--force"], "literal": [true, true, true]},
		],
		"parts": [object.union(part_of(["bash", "-c", "git push --force"], 0), {"end": 2})],
	}
	expect(cmd_call(body, rules), "deny", "config", "git push --force")
}

test_a_word_that_may_expand_to_a_denied_one_asks if {
	rules := {"command_rules": {"git push --force": "deny", "git push": "allow"}, "permission_level": "FULL"}
	facts := with_part(
		object.union(plain(["git", "push", "$F"]), {"commands": [{"argv": ["git", "push", "$F"], "literal": [true, true, false]}]}),
		{"literal": [true, true, false]},
	)
	expect(cmd_call(facts, rules), "ask", "config", "git push --force")
	d := decide(cmd_call(facts, rules))
	contains(d.reason, "may expand to")

	# A program that is not literal may be any of them.
	prog := object.union(plain(["$G", "push"]), {"commands": [{"argv": ["$G", "push"], "literal": [false, true]}]})
	expect(cmd_call(prog, {"command_rules": {"git push": "ask"}}), "ask", "config", "git push")
}

# --- compound commands, part by part -----------------------------------

test_each_operator_splits_parts if {
	granted := {"grants": [
		{"capability": "shell.exec", "fingerprint": "git status"},
		{"capability": "shell.exec", "fingerprint": "git diff"},
	]}
	every op in [";", "&&", "||", "|", "|&"] {
		expect(cmd_call(list_facts([["git", "status"], ["git", "diff"]], [op]), granted), "allow", "session-grant", "SESSION_GRANT")
	}
	d := decide(cmd_call(list_facts([["git", "status"], ["git", "diff"]], ["&&"]), granted))
	d.fingerprint == null
	count(d.parts) == 2
	d.parts[0] == {"text": "git status", "fingerprint": "git status", "decision": "allow", "source": "session-grant", "rule": "SESSION_GRANT"}
}

test_part_order_deny_ask_allow_level if {
	rules := {"command_rules": {"go test": "allow", "git push": "ask", "rm": "deny"}}
	expect(cmd_call(list_facts([["go", "test"], ["git", "push"], ["rm", "x"]], ["&&", "&&"]), rules), "deny", "config", "rm")
	expect(cmd_call(list_facts([["go", "test"], ["git", "push"]], ["&&"]), rules), "ask", "config", "git push")
	expect(cmd_call(list_facts([["go", "test"], ["go", "test", "-v"]], [";"]), rules), "allow", "config", "COMMAND_RULES")

	# A part nothing allows: the level decides, and the part can be granted.
	d := decide(cmd_call(list_facts([["go", "test"], ["go", "vet"]], ["&&"]), rules))
	d.decision == "ask"
	d.source == "level"
	d.grantable == true
	d.parts[1].decision == null

	# Mixed: a rule and a grant.
	mixed := object.union(rules, {"grants": [{"capability": "shell.exec", "fingerprint": "go vet"}]})
	m := decide(cmd_call(list_facts([["go", "test"], ["go", "vet"]], ["&&"]), mixed))
	m.decision == "allow"
	m.source == "session-grant"
	startswith(m.reason, "Every part is allowed")
}

test_what_disqualifies_a_part if {
	rules := {"command_rules": {"git status": "allow"}}
	facts := plain(["git", "status"])
	every change in [
		{"background": true},
		{"negated": true},
		{"substitutions": 1, "end": 2},
		{"assignments": 1},
		{"evaluated": 1},
		{"simple": false},
		{"redirections": [redirect(">", "out.txt", false, false)]},
		{"redirections": [redirect(">&", "file", false, false)]},
		{"redirections": [{"op": "<<", "target": "EOF", "dev_null": false, "dup": false, "here_doc": true, "program": "git"}]},
	] {
		not_allowed(with_part(facts, change), rules)
	}
	expect(cmd_call(with_part(facts, {"redirections": [redirect("2>", "/dev/null", true, false)]}), rules), "allow", "config", "git status")
	expect(cmd_call(with_part(facts, {"redirections": [redirect("2>&", "1", false, true)]}), rules), "allow", "config", "git status")
}

not_allowed(facts, rules) if {
	d := decide(cmd_call(facts, rules))
	d.decision != "allow"
}

test_a_compound_with_an_ungrantable_part_is_not_grantable if {
	d := decide(cmd_call(list_facts([["git", "status"], ["python3", "x.py"]], ["&&"]), {}))
	d.grantable == false
	d.parts[1].fingerprint == null
}

test_a_program_word_with_white_space_has_no_fingerprint if {
	# 'git status' quoted is one program name, not "git" and "status": a
	# fingerprint naming it would read as the grant for git status.
	toolperm.fingerprint == null with input as cmd_call(plain(["git status"]), {})
	toolperm.fingerprint == null with input as cmd_call(plain(["0 "]), {})

	# An argument with white space stands quoted as the shell would quote
	# it, so it never equals the fingerprint of two words.
	toolperm.fingerprint == "echo 'hello world'" with input as cmd_call(plain(["echo", "hello world"]), {})
	toolperm.fingerprint == "git 'status\t'" with input as cmd_call(plain(["git", "status\t"]), {})
	toolperm.fingerprint == `echo 'it'\''s here'` with input as cmd_call(plain(["echo", "it's here"]), {})
	toolperm.grantable with input as cmd_call(plain(["echo", "$(not substituted)"]), {})
	granted := {"grants": [{"capability": "shell.exec", "fingerprint": "echo hello"}]}
	expect(cmd_call(plain(["echo", "hello world"]), granted), "ask", "level", "shell.exec")
	toolperm.fingerprint == "git status" with input as cmd_call(plain(["git", "status"]), {})
	toolperm.fingerprint == "pwd" with input as cmd_call(plain(["pwd"]), {})
}

test_deny_behind_a_split_string_or_a_double_dash if {
	rules := {"permission_level": "FULL", "mode": "allow-all", "command_rules": {"git push --force": "deny"}}

	# env -S's line, split by the shell facts as GNU env splits it, is a
	# command of the part.
	split := {
		"parsed": true, "operators": [], "compound": [], "redirections": 0, "substitutions": 0, "assignments": 0,
		"redirects": [], "evaluated": 0, "assigned": [],
		"commands": [
			{"argv": ["env", "-Sgit\tpush --force"], "literal": [true, true]},
			{"argv": ["git", "push", "--force"], "literal": [true, true, true]},
		],
		"parts": [object.union(part_of(["env", "-Sgit\tpush --force"], 0), {"end": 2})],
	}
	expect(cmd_call(split, rules), "deny", "config", "git push --force")
	expect(cmd_call(plain(["--", "git", "push", "--force"]), rules), "deny", "config", "git push --force")
	expect(cmd_call(plain(["env", "-S"]), rules), "allow", "mode", "MODE")
}

# dynamic(argv, literal) is one plain-looking part whose words are
# literal as given.
dynamic(argv, literal) := with_part(
	object.union(plain(argv), {"commands": [{"argv": argv, "literal": literal}]}),
	{"literal": literal},
)

test_a_word_that_may_split_into_several_may_match if {
	# c='git push --force'; $c — one word bash splits into three.
	every overrides in [{"permission_level": "FULL"}, {"mode": "allow-all"}, {"execution_mode": "CLOUD"}] {
		deny := object.union(overrides, {"command_rules": {"git push --force": "deny"}})
		expect(cmd_call(dynamic(["$c"], [false]), deny), "ask", "config", "git push --force")
		expect(cmd_call(dynamic(["git", "$X"], [true, false]), deny), "ask", "config", "git push --force")
		expect(cmd_call(dynamic(["git", "$X", "origin"], [true, false, true]), deny), "ask", "config", "git push --force")
		expect(cmd_call(dynamic(["git${IFS}push${IFS}--force"], [false]), deny), "ask", "config", "git push --force")
		ask := object.union(overrides, {"command_rules": {"git push --force": "ask"}})
		expect(cmd_call(dynamic(["{git,push,--force}"], [false]), ask), "ask", "config", "git push --force")
		expect(cmd_call(dynamic(["<commands read from standard input>"], [false]), ask), "ask", "config", "git push --force")
	}

	# The literal words before the first word that is not literal must be
	# the rule's; after them the rule is not reached.
	rules := {"permission_level": "FULL", "command_rules": {"git push --force": "deny"}}
	expect(cmd_call(dynamic(["git", "status", "$X"], [true, true, false]), rules), "allow", "mode", "MODE")
	expect(cmd_call(dynamic(["git", "push", "--force", "$X"], [true, true, true, false]), rules), "deny", "config", "git push --force")
	expect(cmd_call(dynamic(["echo", "$X"], [true, false]), rules), "allow", "mode", "MODE")
}

test_a_command_that_does_not_parse_may_match_every_rule if {
	unparsed := {"parsed": false, "error": "1:5: reached EOF without closing quote '"}
	rules := {"permission_level": "FULL", "command_rules": {"git push --force": "deny"}}
	expect(cmd_call(unparsed, rules), "ask", "config", "git push --force")
	d := decide(cmd_call(unparsed, rules))
	contains(d.reason, "could not be read")

	# With no deny or ask rule (and no deny floor, which it may be on), the
	# mode decides as before.
	expect(cmd_call(unparsed, {"permission_level": "FULL"}), "allow", "mode", "MODE") with data.floor as []
	expect(cmd_call(unparsed, {"permission_level": "FULL", "command_rules": {"go test": "allow"}}), "allow", "mode", "MODE") with data.floor as []
	expect(cmd_call(unparsed, {"permission_level": "FULL"}), "ask", "config", "rm -rf /")
}
