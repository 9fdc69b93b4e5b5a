package hookflow

// Agent is everything the PDP knows of one agent's hooks, in one value:
// each agent's package exports its own (claudecode.Hook, codex.Hook, …),
// and one list of them (internal/agents) feeds the hook endpoint's
// routes, `pdp hook`'s sub-commands, `pdp init` and the API document's
// enum. A fifth agent is a package that exports one and a line in that
// list.
type Agent struct {
	// Name is the agent as `pdp hook <name>`, POST /v1/hooks/{name} and
	// `pdp init --agent <name>` name it.
	Name string
	// Parse reads one event the agent writes to a hook.
	Parse func([]byte) (Call, error)
	// Reply is the agent's own answer to the event.
	Reply func(Call, Verdict) Reply
	// CanAsk says the agent shows its own prompt for an ask of the call.
	CanAsk func(Call) bool
	// ProjectEnv is the variable the agent sets to the project root for
	// its hooks ("" when it sets none); WorkspaceHelp says where the
	// workspace comes from otherwise (Cursor: the event's workspace_roots).
	ProjectEnv, WorkspaceHelp string
	// LevelOf is the level `pdp hook --local` gives the agent's own
	// permission mode, fallback where the mode says none.
	LevelOf func(mode, fallback string) string
	// Short and Long are the help of `pdp hook <name>`.
	Short, Long string
	// Settings are the configuration files `pdp init` edits.
	Settings Settings
}

// Settings describe where an agent reads its hooks and how an entry is
// written (frontends/hooks/hookconfig writes them).
type Settings struct {
	// Binaries are the agent's programs, to tell whether it is installed.
	Binaries []string
	// UserFile and ProjectFile are its configuration files, relative to
	// the home directory and to the project; HomeEnv, when set and given,
	// is the directory that holds UserFile's base name instead
	// ($CODEX_HOME).
	UserFile, ProjectFile, HomeEnv string
	// Events are the hook events the PDP's hook is installed for.
	Events []string
	// Matcher selects every tool ("" for none: the agent's hook entry
	// has no matcher).
	Matcher string
	// Flat: the event's array holds the hooks themselves (Cursor), not
	// matcher groups of them.
	Flat bool
	// Version is the top-level "version" the file must have, 0 for none.
	Version int
	// HTTP says the agent has HTTP hooks.
	HTTP bool
	// OffSwitch is a top-level key that, true, turns every hook of the
	// file off (Claude Code's disableAllHooks): pdp init refuses to add
	// a hook it would not run.
	OffSwitch string
}

// Always is CanAsk for an agent that prompts for every ask.
func Always(Call) bool { return true }

// Never is CanAsk for an agent that has no prompt of its own.
func Never(Call) bool { return false }

// ModeLevel maps the permission modes Claude Code and Codex send
// (permission_mode) to levels: plan is READ_ONLY, acceptEdits
// READ_WRITE, bypassPermissions FULL; any other mode is fallback.
func ModeLevel(mode, fallback string) string {
	switch mode {
	case "plan":
		return "READ_ONLY"
	case "acceptEdits":
		return "READ_WRITE"
	case "bypassPermissions":
		return "FULL"
	}
	return fallback
}

// FallbackLevel is LevelOf for an agent whose modes say no level.
func FallbackLevel(_, fallback string) string { return fallback }
