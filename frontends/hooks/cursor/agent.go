package cursor

import "github.com/toolperm/pdp/frontends/hooks/hookflow"

// Hook describes this agent's hooks as the PDP's hook endpoint, `pdp hook
// <agent>` and `pdp init` know them (hookflow.Agent).
var Hook = hookflow.Agent{
	Name:          Agent,
	Parse:         Parse,
	Reply:         Reply,
	CanAsk:        CanAsk,
	WorkspaceHelp: "the first of the event's workspace_roots",
	LevelOf:       hookflow.FallbackLevel,
	Short:         short,
	Long:          long,
	Settings: hookflow.Settings{
		Binaries: []string{"cursor-agent", "cursor"}, UserFile: ".cursor/hooks.json", ProjectFile: ".cursor/hooks.json",
		Events: []string{"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile"}, Flat: true, Version: 1,
	},
}

const short = "Cursor hook: preToolUse, beforeShellExecution, beforeMCPExecution and beforeReadFile ask the PDP"

const long = `Reads a Cursor agent hook event on stdin, asks the PDP (a server at --url,
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
