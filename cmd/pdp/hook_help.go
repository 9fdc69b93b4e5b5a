package main

const claudeCodeShort = "Claude Code hook: PreToolUse and PermissionRequest ask the PDP; PostToolUse records a person's answer in Claude Code"

const claudeCodeLong = `Reads a Claude Code hook event on stdin, asks the PDP (a running server at
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

const codexShort = "Codex CLI hook: PreToolUse and PermissionRequest ask the PDP; an ask is held for a person, then denied"

const codexLong = `Reads a Codex CLI hook event (PreToolUse, PermissionRequest, PostToolUse)
on stdin and asks the PDP (a server at --url, or in-process with --local).

Codex blocks a call only on deny: its PreToolUse takes no ask and no bare
allow. So an allow prints nothing and exits 0, and a deny exits 2 with the
reason on stderr. An ask is held at the PDP for --wait for a person's
answer (pdp answer ID, the console's inbox); without one the call is
denied, and the reason says where to answer it before the model retries.
Keep --timeout plus --wait under the hook's timeout in Codex's config.
Every failure (no server, a slow or garbled answer, an event it cannot
read) is a deny. PermissionRequest (Codex's own approval) is answered
allow or deny from the PDP's decision for the same call. PostToolUse
records allow_once on the call's ask (channel codex).

Sessions are codex:<session_id> (Codex's thread); a sub-agent's calls
(agent_id) are decided in a child session. Against a server, Codex's
permission_mode is a fact for the policy; with --local it picks the level
as for Claude Code. With --local, --workspace is required for calls that
may touch files.

Install it in ~/.codex/config.toml (or run pdp init --agent codex):

  [[hooks.PreToolUse]]
  matcher = ".*"
  [[hooks.PreToolUse.hooks]]
  type = "command"
  command = "pdp hook codex || exit 2"`

const geminiShort = "Gemini CLI hook: BeforeTool asks the PDP"

const geminiLong = `Reads a Gemini CLI BeforeTool event on stdin, asks the PDP (a server at
--url, or in-process with --local) and prints {"decision":"allow|deny|ask",
"reason":"…"} — the only fields Gemini CLI reads. It always exits 0;
every failure is a deny. An ask becomes Gemini CLI's own confirmation
(headless, the turn ends without running the tool); with --wait it is
held at the PDP for a person's answer first. MCP tools (mcp_<server>_<tool>)
are judged as mcp.<server>.<tool>. AfterTool carries no id of the call and
prints {}.

The workspace is --workspace, else $GEMINI_PROJECT_DIR (Gemini CLI sets it
for hooks). Gemini CLI's default hook timeout is 60 s: keep --timeout plus
--wait under it, or a timed-out hook lets the tool run.

Install it in .gemini/settings.json (or run pdp init --agent gemini-cli):

  {"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"pdp hook gemini-cli || exit 2"}]}]}}`

const cursorShort = "Cursor hook: preToolUse, beforeShellExecution, beforeMCPExecution and beforeReadFile ask the PDP"

const cursorLong = `Reads a Cursor agent hook event on stdin, asks the PDP (a server at --url,
or in-process with --local) and prints {"permission":"allow|deny|ask",
"user_message":"…","agent_message":"…"}. It always exits 0; every failure
is a deny. beforeReadFile takes no ask: an ask there is held for --wait
and then denied, saying where to answer it. The session is
cursor:<conversation_id>, its workspace the first of workspace_roots
(or --workspace); an event without workspace_roots (no folder open in
Cursor) is denied, its cwd never taken for the workspace. Cursor runs the action when a hook fails unless the
hook has "failClosed": true, which pdp init sets.

Install it in .cursor/hooks.json (or run pdp init --agent cursor):

  {"version":1,"hooks":{"preToolUse":[{"command":"pdp hook cursor","failClosed":true}],
   "beforeShellExecution":[{"command":"pdp hook cursor","failClosed":true}],
   "beforeMCPExecution":[{"command":"pdp hook cursor","failClosed":true}],
   "beforeReadFile":[{"command":"pdp hook cursor","failClosed":true}]}}`
