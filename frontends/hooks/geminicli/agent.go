package geminicli

import "github.com/toolperm/pdp/frontends/hooks/hookflow"

// Hook describes this agent's hooks as the PDP's hook endpoint, `pdp hook
// <agent>` and `pdp init` know them (hookflow.Agent).
var Hook = hookflow.Agent{
	Name:       Agent,
	Parse:      Parse,
	Reply:      Reply,
	CanAsk:     hookflow.Always,
	ProjectEnv: "GEMINI_PROJECT_DIR",
	LevelOf:    hookflow.FallbackLevel,
	Short:      short,
	Long:       long,
	Settings: hookflow.Settings{
		Binaries: []string{"gemini"}, UserFile: ".gemini/settings.json", ProjectFile: ".gemini/settings.json",
		Events: []string{"BeforeTool"}, Matcher: ".*",
	},
}

const short = "Gemini CLI hook: BeforeTool asks the PDP"

const long = `Reads a Gemini CLI BeforeTool event on stdin, asks the PDP (a server at
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
