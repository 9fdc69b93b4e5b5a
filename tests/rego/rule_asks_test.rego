package toolperm_test

import data.toolperm
import rego.v1

# One meaning for an ask: an ask someone wrote as a rule — a command rule
# or a path rule, of the policy or the session layer — holds at every
# level, in every mode and execution mode, like a deny; modes skip only
# the level table's asks and ask_always.

all_levels := ["READ_ONLY", "READ_WRITE", "SMART", "FULL"]

all_modes := ["always-ask", "on-demand", "allow-all"]

all_executions := ["LOCAL", "CLOUD"]

settings(level, mode, execution) := {"permission_level": level, "mode": mode, "execution_mode": execution}

# skips: FULL (LOCAL), allow-all and CLOUD allow what the level table asks.
skips(s) if s.permission_level == "FULL"

skips(s) if s.mode == "allow-all"

skips(s) if s.execution_mode == "CLOUD"

test_command_rule_asks_hold_everywhere_in_both_layers if {
	every level in all_levels {
		every mode in all_modes {
			every execution in all_executions {
				s := settings(level, mode, execution)
				expect(cmd_call(plain(["git", "push"]), object.union(s, {"command_rules": {"git push": "ask"}})), "ask", "config", "git push")
				expect(cmd_call(plain(["git", "push"]), s), "ask", "config", "git push") with data.commands as {"git push": "ask"}
			}
		}
	}
}

test_path_rule_asks_hold_everywhere_in_both_layers if {
	policy_ask := {"write": {"policy": rule(".github/workflows/**", "ask")}}
	session_ask := {"write": {"session": rule("secrets/**", "ask")}}
	every level in all_levels {
		every mode in all_modes {
			every execution in all_executions {
				s := settings(level, mode, execution)
				expect(file_call("fs.write", s, [inside(".github/workflows/ci.yml", policy_ask)]), "ask", "config", ".github/workflows/**")
				expect(file_call("fs.write", s, [inside("secrets/k", session_ask)]), "ask", "config", "secrets/**")
			}
		}
	}
}

test_level_table_asks_and_ask_always_are_skipped_by_the_modes if {
	every level in all_levels {
		every mode in all_modes {
			every execution in all_executions {
				s := settings(level, mode, execution)
				level_asks := decide(cmd_call(plain(["git", "status"]), s))
				always := decide(call("fs.write", s)) with data.ask_always as ["fs.write"]
				skipped(s, level_asks)
				skipped(s, always)
			}
		}
	}
}

skipped(s, d) if {
	skips(s)
	d.decision == "allow"
	d.rule == "MODE"
}

skipped(s, d) if {
	not skips(s)
	d.decision != "allow"
}

test_a_project_grant_is_reported_as_one if {
	project := {"grants": [{"capability": "shell.exec", "fingerprint": "make test", "scope": "project"}]}
	expect(cmd_call(plain(["make", "test"]), project), "allow", "project-grant", "PROJECT_GRANT")
	d := decide(cmd_call(plain(["make", "test"]), project))
	d.reason == "The project has a grant for \"make test\"."

	# The session's own grant names the session when both cover the call.
	both := {"grants": array.concat(project.grants, [{"capability": "shell.exec", "fingerprint": "make test", "scope": "session"}])}
	expect(cmd_call(plain(["make", "test"]), both), "allow", "session-grant", "SESSION_GRANT")

	# A compound allowed by project grants alone says so too.
	two := {"grants": [
		{"capability": "shell.exec", "fingerprint": "make test", "scope": "project"},
		{"capability": "shell.exec", "fingerprint": "go vet", "scope": "project"},
	]}
	expect(cmd_call(list_facts([["make", "test"], ["go", "vet"]], ["&&"]), two), "allow", "project-grant", "PROJECT_GRANT")
	mixed := {"grants": array.concat(two.grants, [{"capability": "shell.exec", "fingerprint": "go vet"}])}
	expect(cmd_call(list_facts([["make", "test"], ["go", "vet"]], ["&&"]), mixed), "allow", "session-grant", "SESSION_GRANT")
}

test_a_bare_command_is_granted_exactly if {
	# Seed 000 calls bare commands ungrantable; here a bare command's
	# fingerprint is the program alone, and its grant covers that command
	# and nothing longer.
	toolperm.fingerprint == "ls" with input as cmd_call(plain(["ls"]), {})
	granted := {"grants": [{"capability": "shell.exec", "fingerprint": "ls"}]}
	expect(cmd_call(plain(["ls"]), granted), "allow", "session-grant", "SESSION_GRANT")
	expect(cmd_call(plain(["ls", "-la"]), granted), "ask", "level", "shell.exec")
	expect(cmd_call(plain(["ls", "src"]), granted), "ask", "level", "shell.exec")
}

test_shell_jobs_are_never_granted if {
	granted := {"grants": [{"capability": "shell.jobs", "fingerprint": "ls"}]}
	d := decide(object.union(call("shell.jobs", granted), {"tool": "shell-jobs"}))
	d.decision == "ask"
	d.grantable == false
	d.fingerprint == null
}
