package claudecode

import "github.com/toolperm/pdp/frontends/hooks/hookflow"

// Hook describes this agent's hooks as the PDP's hook endpoint, `pdp hook
// <agent>` and `pdp init` know them (hookflow.Agent).
var Hook = hookflow.Agent{
	Name:       Agent,
	Parse:      Parse,
	Reply:      Reply,
	CanAsk:     hookflow.Always,
	ProjectEnv: "CLAUDE_PROJECT_DIR",
	LevelOf:    hookflow.ModeLevel,
	Short:      short,
	Long:       long,
	Settings: hookflow.Settings{
		Binaries: []string{"claude"}, UserFile: ".claude/settings.json", ProjectFile: ".claude/settings.json",
		Events: []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied"}, Matcher: "*", HTTP: true, OffSwitch: "disableAllHooks",
	},
}

const short = "Claude Code hook: PreToolUse and PermissionRequest ask the PDP; PostToolUse records a person's answer in Claude Code"

const long = `Reads a Claude Code hook event on stdin, asks the PDP (a running server at
--url, or in-process with --local) and prints the hook's answer:

  {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}}

It always exits 0: if the PDP cannot be reached, is slower than --timeout
or answers garbage or an incomplete decision, the answer is deny (a
failing hook would let the tool run). Sub-agent calls (agent_id) are
decided in a child session of the main session. With --wait, an ask is
held at the PDP until a person answers it in the PDP's inbox (then allow
or deny), falling back to Claude Code's own prompt when the wait ends.
Against a server, Claude Code's permission_mode is a fact for the policy
(input.runtime.permission_mode); with --local it picks the level (plan:
READ_ONLY, acceptEdits: READ_WRITE, bypassPermissions: FULL).

PermissionRequest (sent before Claude Code shows its own dialog) is
answered from the PDP's decision for the same call: allow or deny with
hookEventName PermissionRequest, and nothing for an ask, so the dialog
asks.

The workspace is --workspace, else $CLAUDE_PROJECT_DIR. Against a server
without either, the session's first cwd becomes it. With --local there is
no session to remember a first cwd, so without either every call of a
tool that may touch files is denied.

When PreToolUse answered ask and the person allowed the call in Claude
Code's own prompt, Claude Code runs it and then sends PostToolUse (or
PostToolUseFailure) with the same tool_use_id: the hook records that
outcome on the ask — allow_once, channel claude-code, naming the token —
so the audit trail shows the call ran. PermissionDenied (Claude Code's
rules or auto mode refused the call) records deny. These events print
nothing and never fail; an ask with an outcome already, or a call the
PDP did not ask about, is left as it is. An outcome is a record, apart
from a person's answer: it creates no grant, the ask stays pending in
the PDP's inbox, and --wait never takes it for an answer.

Install it for every tool in .claude/settings.json (or run pdp init --agent claude-code):

  {"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code || exit 2"}]}],
            "PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code || exit 2"}]}]}}`
