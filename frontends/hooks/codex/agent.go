package codex

import "github.com/toolperm/pdp/frontends/hooks/hookflow"

// Hook describes this agent's hooks as the PDP's hook endpoint, `pdp hook
// <agent>` and `pdp init` know them (hookflow.Agent).
var Hook = hookflow.Agent{
	Name:    Agent,
	Parse:   Parse,
	Reply:   Reply,
	CanAsk:  hookflow.Never,
	LevelOf: hookflow.ModeLevel,
	Short:   short,
	Long:    long,
	Settings: hookflow.Settings{
		Binaries: []string{"codex"}, UserFile: ".codex/hooks.json", ProjectFile: ".codex/hooks.json", HomeEnv: "CODEX_HOME",
		Events: []string{"PreToolUse", "PermissionRequest", "PostToolUse"},
	},
}

const short = "Codex CLI hook: PreToolUse and PermissionRequest ask the PDP; an ask is held for a person, then denied"

const long = `Reads a Codex CLI hook event (PreToolUse, PermissionRequest, PostToolUse)
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
