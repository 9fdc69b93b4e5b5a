package toolperm_test

import data.toolperm
import rego.v1

decide(inp) := d if {
	d := toolperm.decision with input as inp
}

expect(inp, decision, source, rule) if {
	d := decide(inp)
	d.decision == decision
	d.source == source
	d.rule == rule
	need_approval := decision == "ask"
	d.need_approval == need_approval
}

git_status := {"tool": "shell", "shell": plain(["git", "status"])}

with_session(base, overrides) := object.union(base, {"session": session(overrides)})

# --- the level table, cell by cell -------------------------------------

level_table := {
	"READ_ONLY": {
		"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow",
		"fs.write": "ask", "fs.edit": "ask", "shell.exec": "ask", "shell.jobs": "ask", "shell.stdin": "allow",
	},
	"READ_WRITE": {
		"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow",
		"fs.write": "allow", "fs.edit": "allow", "shell.exec": "ask", "shell.jobs": "ask", "shell.stdin": "allow",
	},
	# SMART: shell is assessed; without a SAFE verdict it asks.
	"SMART": {
		"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow",
		"fs.write": "allow", "fs.edit": "allow", "shell.exec": "ask", "shell.jobs": "ask", "shell.stdin": "allow",
	},
	"FULL": {
		"fs.read": "allow", "fs.glob": "allow", "fs.grep": "allow", "fs.list": "allow",
		"fs.write": "allow", "fs.edit": "allow", "shell.exec": "allow", "shell.jobs": "allow", "shell.stdin": "allow",
	},
}

test_level_table_read_only if level_row("READ_ONLY")

test_level_table_read_write if level_row("READ_WRITE")

test_level_table_smart if level_row("SMART")

test_level_table_full if level_row("FULL")

level_row(level) if {
	every cap, want in level_table[level] {
		d := decide(call(cap, {"permission_level": level}))
		d.decision == want
		d.source == level_source(level)
	}
}

level_source("FULL") := "mode"

level_source(level) := "level" if level != "FULL"

test_smart_shell_safe_verdict_allows if {
	inp := object.union(with_session(git_status, {"permission_level": "SMART"}), {"danger": {"verdict": "SAFE", "by": "llm"}})
	expect(inp, "allow", "assessor", "shell.exec")
	decide(inp).danger == {"verdict": "SAFE", "by": "llm"}
	decide(inp).needs == set()
}

test_smart_shell_dangerous_verdict_asks if {
	inp := object.union(with_session(git_status, {"permission_level": "SMART"}), {"danger": {"verdict": "DANGEROUS", "by": "llm"}})
	expect(inp, "ask", "level", "shell.exec")
	decide(inp).danger.verdict == "DANGEROUS"
}

test_smart_shell_needs_the_verdict if {
	d := decide(with_session(git_status, {"permission_level": "SMART"}))
	d.needs == {"danger"}
	d.decision == "ask"
	d.danger == {"verdict": "DANGEROUS", "by": "unavailable"}
}

test_assess_outside_shell_is_dangerous if {
	d := decide(call("mcp.db.query", {"rules": {"mcp.db.*": "assess"}}))
	d.decision == "ask"
	d.danger == {"verdict": "DANGEROUS", "by": "screen"}
	d.needs == set()
}

# --- the chain, step by step --------------------------------------------

test_step0_unknown_tool if {
	expect(with_session({"tool": "frobnicate"}, {"mode": "allow-all"}), "deny", "default", "UNKNOWN_TOOL")
	decide(with_session({"tool": "frobnicate"}, {})).capability == null
}

test_step1_scope if {
	expect(call("shell.exec", {"scope": ["fs.*"], "permission_level": "FULL"}), "deny", "default", "PARENT_SCOPE")
	expect(call("fs.read", {"scope": ["fs.*"]}), "allow", "level", "fs.read")
}

test_step1_parent_denies if {
	inp := object.union(call("fs.read", {"has_parent": true}), {"parent_decision": {"decision": "deny", "source": "default", "rule": "FALLBACK", "reason": "x"}})
	expect(inp, "deny", "default", "PARENT_SCOPE")
}

test_step2_workspace if {
	inp := object.union(call("fs.read", {"mode": "allow-all"}), {"workspace": {"outside": ["/etc/passwd"]}})
	expect(inp, "deny", "default", "OUTSIDE_WORKSPACE")
	expect(object.union(inp, {"session": session({"execution_mode": "CLOUD"})}), "deny", "default", "OUTSIDE_WORKSPACE")
}

test_step3_explicit_deny_survives_allow_all if {
	expect(call("net.fetch", {"mode": "allow-all", "rules": {"net.*": "deny"}}), "deny", "config", "net.*")
	expect(call("fs.read", {"permission_level": "FULL"}), "deny", "config", "fs.*") with data.rules as {"fs.*": "deny"}
	expect(call("fs.read", {"rules": {"fs.read": "bogus"}}), "deny", "config", "fs.read")
}

test_step4_mode if {
	expect(call("mcp.x.y", {"mode": "allow-all"}), "allow", "mode", "MODE")
	expect(call("mcp.x.y", {"execution_mode": "CLOUD"}), "allow", "mode", "MODE")
	expect(call("mcp.x.y", {"permission_level": "FULL"}), "allow", "mode", "MODE")
	expect(call("shell.exec", {"execution_mode": "CLOUD", "permission_level": "READ_ONLY"}), "allow", "mode", "MODE")
}

test_step5_dangerous_without_rule if {
	expect(call("mcp.github.create_issue", {}), "deny", "default", "DANGEROUS_NO_RULE")
	expect(call("fs.move", {"mode": "always-ask"}), "deny", "default", "DANGEROUS_NO_RULE")
	expect(call("fs.delete", {"mode": "always-ask"}), "ask", "level", "fs.delete")
	expect(call("net.fetch", {"rules": {"net.fetch": "ask"}}), "ask", "config", "net.fetch")
}

test_step6_session_grant if {
	granted := {"grants": [{"capability": "shell.exec", "fingerprint": "git status"}]}
	expect(with_session(git_status, granted), "allow", "session-grant", "SESSION_GRANT")
	d := decide(with_session(git_status, granted))
	d.fingerprint == "git status"
	d.grantable == true

	# A grant is checked before any LLM call.
	smart := decide(with_session(git_status, object.union(granted, {"permission_level": "SMART"})))
	smart.needs == set()
	smart.source == "session-grant"

	# A grant for another fingerprint does not apply.
	expect(with_session({"tool": "shell", "shell": plain(["git", "push"])}, granted), "ask", "level", "shell.exec")
}

test_step6_grant_never_covers_compound_commands if {
	granted := {"grants": [{"capability": "shell.exec", "fingerprint": "git status"}]}
	two := {"tool": "shell", "shell": list_facts([["git", "status"], ["rm", "-rf", "x"]], [";"])}
	d := decide(with_session(two, granted))
	d.decision == "ask"
	d.fingerprint == null
}

test_step6_grant_skipped_for_ask_always if {
	# The grant is not used; the level's ask decides.
	granted := {"grants": [{"capability": "shell.exec", "fingerprint": "git status"}]}
	expect(with_session(git_status, granted), "ask", "level", "shell.exec") with data.ask_always as ["shell.exec"]
}

test_step7_rule if {
	expect(call("mcp.github.create_issue", {"rules": {"mcp.github.*": "ask"}}), "ask", "config", "mcp.github.*")
	expect(call("mcp.github.list", {"rules": {"mcp.github.*": "allow"}}), "allow", "config", "mcp.github.*")
	expect(call("task.spawn", {}), "allow", "config", "task.spawn")
	expect(call("code.outline", {}), "allow", "config", "code.*")
}

test_step8_ask_always if {
	expect(call("fs.read", {}), "ask", "config", "ASK_ALWAYS") with data.ask_always as ["fs.read"]
	inp := object.union(with_session(git_status, {"permission_level": "SMART"}), {"danger": {"verdict": "SAFE", "by": "llm"}})
	expect(inp, "ask", "config", "ASK_ALWAYS") with data.ask_always as ["shell.*"]
}

test_step9_fallback if {
	expect(call("widget.spin", {}), "deny", "default", "FALLBACK")
	expect(call("widget.spin", {"mode": "always-ask"}), "ask", "default", "FALLBACK")
}

test_always_ask_does_not_override_rules if {
	expect(call("fs.read", {"mode": "always-ask"}), "allow", "level", "fs.read")
}

# --- sub-agents ---------------------------------------------------------

test_parent_needed_for_sub_agents if {
	decide(call("fs.read", {"has_parent": true})).needs == {"parent"}
	decide(call("shell.exec", {"has_parent": true, "scope": ["fs.*"]})).needs == set()
}

test_parent_caps_the_child if {
	parent_ask := {"decision": "ask", "source": "level", "rule": "fs.write", "reason": "The level rule asks."}
	inp := object.union(call("fs.write", {"has_parent": true, "permission_level": "FULL"}), {"parent_decision": parent_ask})
	expect(inp, "ask", "level", "fs.write")
	decide(inp).trace[10] == {"step": "parent_cap", "outcome": "decided"}

	# A stricter child keeps its own answer.
	parent_allow := {"decision": "allow", "source": "mode", "rule": "MODE", "reason": "x"}
	inp2 := object.union(call("fs.write", {"has_parent": true}), {"parent_decision": parent_allow})
	expect(inp2, "ask", "level", "fs.write")
	decide(inp2).trace[10] == {"step": "parent_cap", "outcome": "pass"}
}

# --- the answer's shape -------------------------------------------------

test_every_field_present if {
	d := decide(call("fs.read", {}))
	every key in ["decision", "need_approval", "source", "rule", "reason", "capability", "fingerprint", "grantable", "danger", "trace", "needs"] {
		object.get(d, key, "missing") != "missing"
	}
	d.error == null
}

test_trace_marks_each_step if {
	d := decide(call("fs.write", {}))
	[t.step | some t in d.trace] == toolperm.steps
	[t.outcome | some t in d.trace] == ["pass", "pass", "pass", "pass", "pass", "pass", "pass", "decided", "not_reached", "not_reached"]
}

test_mismatch_is_an_error if {
	d := decide(with_session({"tool": "Bash", "capability": "fs.read"}, {}))
	d.error.code == "capability_mismatch"
}

test_harmless_runtime_capabilities_allowed_by_default if {
	every cap in ["ask.user", "plan.update", "skill.load", "memory.recall", "review.report", "task.spawn", "code.outline", "code.diagnostics"] {
		d := decide(call(cap, {}))
		d.decision == "allow"
		d.source == "config"
	}
}

# --- the agents' own tools at each level ------------------------------

agent_call(tool, agent, overrides) := {"tool": tool, "runtime": {"agent": agent}, "session": session(overrides)}

# Sub-agents, task lists and questions run nothing themselves: allowed at
# every level (their own calls come through one by one).
test_agent_tools_that_run_nothing if {
	every level in ["READ_ONLY", "READ_WRITE", "SMART", "FULL"] {
		every tool in ["Agent", "Task", "TaskCreate", "TaskList", "SendMessage", "ReportFindings", "AskUserQuestion", "CronList"] {
			decide(agent_call(tool, "claude-code", {"permission_level": level})).decision == "allow"
		}
	}
}

# Scheduling creates actions that run later: it asks at the low levels.
test_scheduling_asks_at_low_levels if {
	every level in ["READ_ONLY", "READ_WRITE"] {
		every tool in ["CronCreate", "ScheduleWakeup"] {
			expect(agent_call(tool, "claude-code", {"permission_level": level}), "ask", "level", "schedule.create")
		}
	}
	expect(agent_call("CronDelete", "claude-code", {}), "ask", "level", "schedule.delete")
	expect(agent_call("CronDelete", "claude-code", {"permission_level": "READ_WRITE"}), "allow", "level", "schedule.delete")
	expect(agent_call("CronCreate", "claude-code", {"permission_level": "SMART"}), "allow", "level", "schedule.create")
}

# Entering or leaving a worktree moves where the agent works: it asks
# below FULL, and a session in on-demand without FULL never allows it.
test_worktrees_are_judged_strictly if {
	every level in ["READ_ONLY", "READ_WRITE", "SMART"] {
		expect(agent_call("EnterWorktree", "claude-code", {"permission_level": level}), "ask", "level", "workspace.enter")
		expect(agent_call("ExitWorktree", "claude-code", {"permission_level": level}), "ask", "level", "workspace.exit")
		expect(agent_call("Workflow", "claude-code", {"permission_level": level}), "ask", "level", "workflow.run")
		expect(agent_call("Delete", "cursor", {"permission_level": level}), "ask", "level", "fs.delete")
	}
	expect(agent_call("EnterWorktree", "claude-code", {"permission_level": "FULL"}), "allow", "mode", "MODE")
}

test_agent_unknown_tool_is_denied if {
	expect(agent_call("Frobnicate", "codex", {"mode": "allow-all"}), "deny", "default", "UNKNOWN_TOOL")
	expect(agent_call("Shell", "claude-code", {"permission_level": "FULL"}), "deny", "default", "UNKNOWN_TOOL")
}

danger_reason(by) := decide(object.union(
	with_session(git_status, {"permission_level": "SMART"}),
	{"danger": {"verdict": "DANGEROUS", "by": by}},
)).reason

test_a_dangerous_verdict_says_how_it_was_reached if {
	danger_reason("llm") == "The danger assessor judged the command DANGEROUS: a person decides."
	contains(danger_reason("cache"), "before (cached)")
	contains(danger_reason("error"), "The danger assessor failed")
	contains(danger_reason("unavailable"), "No danger assessor is configured, or it is unavailable")
	contains(decide(with_session(git_status, {"permission_level": "SMART"})).reason, "No danger assessor is configured")
	danger_reason("other") == "The command needs a person: the danger verdict is DANGEROUS (other)."
}
