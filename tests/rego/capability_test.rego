package toolperm_test

import data.toolperm
import rego.v1

test_tool_names_of_both_source_documents if {
	toolperm.capability == "fs.read" with input as {"tool": "read_file"}
	toolperm.capability == "fs.glob" with input as {"tool": "glob_search"}
	toolperm.capability == "fs.grep" with input as {"tool": "grep_search"}
	toolperm.capability == "fs.write" with input as {"tool": "write_file"}
	toolperm.capability == "fs.edit" with input as {"tool": "edit_file"}
	toolperm.capability == "shell.exec" with input as {"tool": "shell"}
	toolperm.capability == "shell.jobs" with input as {"tool": "shell-jobs"}
}

test_shell_write_stdin_action if {
	toolperm.capability == "shell.stdin" with input as {"tool": "shell", "action": "write_stdin"}
	toolperm.capability == "shell.exec" with input as {"tool": "shell", "action": "run"}
}

test_claude_code_names if {
	toolperm.capability == "fs.read" with input as {"tool": "Read"}
	toolperm.capability == "fs.write" with input as {"tool": "Write"}
	toolperm.capability == "fs.edit" with input as {"tool": "MultiEdit"}
	toolperm.capability == "shell.exec" with input as {"tool": "Bash"}
	toolperm.capability == "fs.list" with input as {"tool": "LS"}
	toolperm.capability == "net.fetch" with input as {"tool": "WebFetch"}
	toolperm.capability == "task.spawn" with input as {"tool": "Task"}
}

test_claude_code_mcp_names if {
	toolperm.capability == "mcp.github.create_issue" with input as {"tool": "mcp__github__create_issue"}
	toolperm.capability == "mcp.srv.tool" with input as {"tool": "mcp__srv__tool"}
	toolperm.capability == "mcp.notion.search" with input as {"tool": "mcp__Notion__search"}
	not toolperm.capability with input as {"tool": "mcp__only"}
	not toolperm.capability with input as {"tool": "mcp__bad server__x"}
}

test_capability_as_tool if {
	toolperm.capability == "fs.read" with input as {"tool": "fs.read"}
	toolperm.capability == "plugin.lint.run" with input as {"tool": "plugin.lint.run"}
}

test_unknown_tool if {
	not toolperm.capability with input as {"tool": "frobnicate"}
	not toolperm.capability with input as {"tool": "Fs.Read"}
}

test_capability_without_tool if {
	toolperm.capability == "net.fetch" with input as {"capability": "net.fetch"}
}

test_capability_mismatch if {
	toolperm.capability_mismatch with input as {"tool": "Bash", "capability": "fs.read"}
	toolperm.capability_mismatch with input as {"tool": "frobnicate", "capability": "fs.read"}
	not toolperm.capability_mismatch with input as {"tool": "Bash", "capability": "shell.exec"}
}

test_candidates_most_specific_first if {
	toolperm.candidates("mcp.github.create_issue") == ["mcp.github.create_issue", "mcp.github.*", "mcp.*"]
	toolperm.candidates("fs.read") == ["fs.read", "fs.*"]
	toolperm.candidates("single") == ["single"]
}

test_stdin_write_carrying_a_command_is_shell_exec if {
	toolperm.capability == "shell.exec" with input as {"tool": "shell", "action": "write_stdin", "shell": {"parsed": true, "commands": []}}

	# A command that did not parse is a command all the same.
	toolperm.capability == "shell.exec" with input as {"tool": "shell", "action": "write_stdin", "shell": {"parsed": false, "commands": []}}
	toolperm.capability == "shell.stdin" with input as {"tool": "shell", "action": "write_stdin"}
}

test_catalogue_entries_name_the_capability if {
	toolperm.capability == "fs.edit" with input as {"tool": "apply_patch"}
	toolperm.capability == "fs.edit" with input as {"tool": "my_editor"}
		with data.tools.my_editor as {"capability": "fs.edit", "args": {"target": "path"}}
}

# Every tool Claude Code 2.1 offers its model has an honest capability.
test_claude_code_2_1_names if {
	toolperm.capability == "task.spawn" with input as {"tool": "Agent"}
	every tool in ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"] {
		toolperm.capability == "plan.update" with input as {"tool": tool}
	}
	toolperm.capability == "shell.jobs" with input as {"tool": "TaskOutput"}
	toolperm.capability == "shell.jobs" with input as {"tool": "TaskStop"}
	toolperm.capability == "schedule.create" with input as {"tool": "CronCreate"}
	toolperm.capability == "schedule.create" with input as {"tool": "ScheduleWakeup"}
	toolperm.capability == "schedule.delete" with input as {"tool": "CronDelete"}
	toolperm.capability == "schedule.list" with input as {"tool": "CronList"}
	toolperm.capability == "task.message" with input as {"tool": "SendMessage"}
	toolperm.capability == "review.report" with input as {"tool": "ReportFindings"}
	toolperm.capability == "workflow.run" with input as {"tool": "Workflow"}
	toolperm.capability == "workspace.enter" with input as {"tool": "EnterWorktree"}
	toolperm.capability == "workspace.exit" with input as {"tool": "ExitWorktree"}
	toolperm.capability == "ask.user" with input as {"tool": "AskUserQuestion"}

	# Claude Code loads its deferred tools (WebFetch, NotebookEdit, Cron…)
	# through ToolSearch: denying it would take those tools away.
	toolperm.capability == "tool.search" with input as {"tool": "ToolSearch"}
	toolperm.capability == "tool.search" with input as {"tool": "DeferredToolPlaceholder"}
	toolperm.capability == "task.list" with input as {"tool": "ListAgents"}
	toolperm.capability == "shell.jobs" with input as {"tool": "Monitor"}
}

# The tools the pinned Codex and Gemini CLI offer beside their files and
# shells (tests/agents lists them from each CLI's own request).
test_goal_topic_and_background_tools if {
	every tool in ["get_goal", "create_goal", "update_goal", "update_topic"] {
		toolperm.capability == "plan.update" with input as {"tool": tool}
	}
	toolperm.capability == "tool.search" with input as {"tool": "tool_search"}
	toolperm.capability == "shell.jobs" with input as {"tool": "list_background_processes"}
	toolperm.capability == "shell.jobs" with input as {"tool": "read_background_output"}
}

test_codex_names if {
	toolperm.capability == "shell.exec" with input as {"tool": "exec_command"}
	toolperm.capability == "shell.exec" with input as {"tool": "shell_command"}
	toolperm.capability == "shell.stdin" with input as {"tool": "write_stdin"}
	toolperm.capability == "task.spawn" with input as {"tool": "spawn_agent"}
	toolperm.capability == "plan.update" with input as {"tool": "update_plan"}
	toolperm.capability == "fs.edit" with input as {"tool": "apply_patch", "runtime": {"agent": "codex"}}
	toolperm.capability == "shell.exec" with input as {"tool": "shell", "runtime": {"agent": "codex"}}
	toolperm.capability == "shell.exec" with input as {"tool": "Bash", "runtime": {"agent": "codex"}}
	toolperm.capability == "mcp.github.create_issue" with input as {"tool": "mcp__github__create_issue", "runtime": {"agent": "codex"}}
}

test_gemini_cli_names if {
	rt := {"agent": "gemini-cli"}
	toolperm.capability == "shell.exec" with input as {"tool": "run_shell_command", "runtime": rt}
	toolperm.capability == "fs.write" with input as {"tool": "write_file", "runtime": rt}
	toolperm.capability == "fs.edit" with input as {"tool": "replace", "runtime": rt}
	toolperm.capability == "fs.read" with input as {"tool": "read_file", "runtime": rt}
	toolperm.capability == "fs.read" with input as {"tool": "read_many_files", "runtime": rt}
	toolperm.capability == "fs.glob" with input as {"tool": "glob", "runtime": rt}
	toolperm.capability == "fs.grep" with input as {"tool": "search_file_content", "runtime": rt}
	toolperm.capability == "fs.grep" with input as {"tool": "grep_search", "runtime": rt}
	toolperm.capability == "fs.list" with input as {"tool": "list_directory", "runtime": rt}
	toolperm.capability == "net.fetch" with input as {"tool": "web_fetch", "runtime": rt}
	toolperm.capability == "net.search" with input as {"tool": "google_web_search", "runtime": rt}
	toolperm.capability == "memory.save" with input as {"tool": "save_memory", "runtime": rt}
}

test_cursor_names if {
	rt := {"agent": "cursor"}
	toolperm.capability == "shell.exec" with input as {"tool": "Shell", "runtime": rt}
	toolperm.capability == "fs.write" with input as {"tool": "Write", "runtime": rt}
	toolperm.capability == "fs.edit" with input as {"tool": "StrReplace", "runtime": rt}
	toolperm.capability == "fs.edit" with input as {"tool": "Edit", "runtime": rt}
	toolperm.capability == "fs.read" with input as {"tool": "Read", "runtime": rt}
	toolperm.capability == "fs.delete" with input as {"tool": "Delete", "runtime": rt}
}

# A name one agent declares means nothing for another, and an agent
# without an entry of its own gets the shared one.
test_agent_entries_are_the_agents_own if {
	not toolperm.capability with input as {"tool": "Shell"}
	not toolperm.capability with input as {"tool": "Delete", "runtime": {"agent": "claude-code"}}
	not toolperm.capability with input as {"tool": "replace", "runtime": {"agent": "codex"}}
	toolperm.capability == "fs.read" with input as {"tool": "Read", "runtime": {"agent": "claude-code"}}
	toolperm.capability == "fs.read" with input as {"tool": "Read", "runtime": {}}
	not toolperm.capability with input as {"tool": "frobnicate", "runtime": {"agent": "cursor"}}

	# An entry's own key is no tool name: another agent's (or no
	# runtime's) "cursor/Edit" is an unknown tool.
	not toolperm.capability with input as {"tool": "cursor/Edit"}
	not toolperm.capability with input as {"tool": "cursor/Edit", "runtime": {"agent": "claude-code"}}
	not toolperm.capability with input as {"tool": "cursor/Edit", "runtime": {"agent": "cursor"}}
	not toolperm.capability with input as {"tool": "codex/apply_patch", "runtime": {"agent": "gemini-cli"}}
}
