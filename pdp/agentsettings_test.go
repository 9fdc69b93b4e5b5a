package pdp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// The files the coding agents read their hooks, permissions and MCP
// servers from, in a workspace and in a home directory. A model that
// writes one of them can remove the PDP's hook or add a hook that runs
// unjudged, so the shipped path rules deny those writes at every level
// and in every mode, and ask for the rest of the agents' directories
// (sub-agents, skills and commands carry hooks of their own).
var agentSettingsFiles = []struct{ file, rule string }{
	{".claude/settings.json", "/**/.claude/settings.json"},
	{".claude/settings.local.json", "/**/.claude/settings.local.json"},
	{".claude.json", "/**/.claude.json"},
	{".mcp.json", "/**/.mcp.json"},
	{".codex/config.toml", "/**/.codex/config.toml"},
	{".codex/hooks.json", "/**/.codex/hooks.json"},
	{".codex/rules/default.rules", "/**/.codex/rules/**"},
	{".gemini/settings.json", "/**/.gemini/settings.json"},
	{".cursor/hooks.json", "/**/.cursor/hooks.json"},
	{".cursor/mcp.json", "/**/.cursor/mcp.json"},
	{".cursor/cli.json", "/**/.cursor/cli.json"},
	// The project's own policy layer (docs/policy.md, "The project layer").
	{".toolperm/policy.json", "/**/.toolperm/**"},
}

func TestAgentSettingsAreNotWritableByAModel(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(root, "w"), filepath.Join(root, "home")
	for _, f := range agentSettingsFiles {
		for _, base := range []string{ws, home} {
			p := filepath.Join(base, f.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	run := func(t *testing.T, tool string, args map[string]any, s pdp.SessionTree) api.Decision {
		t.Helper()
		s.Workspace = ws
		return decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: tool, Args: args, Cwd: ws}, Session: &s, Explain: true})
	}
	sessions := map[string]pdp.SessionTree{
		"READ_WRITE": {PermissionLevel: api.ReadWrite},
		"FULL":       {PermissionLevel: api.Full},
		"allow-all":  {Mode: api.AllowAll},
	}
	for _, f := range agentSettingsFiles {
		for name, s := range sessions {
			for _, c := range []struct {
				how  string
				tool string
				args map[string]any
			}{
				{"Write", "Write", map[string]any{"file_path": f.file, "content": `{"disableAllHooks":true}`}},
				{"Edit", "Edit", map[string]any{"file_path": filepath.Join(ws, f.file), "old_string": "{}", "new_string": "{\"hooks\":{}}"}},
				{"a redirection", "Bash", map[string]any{"command": `echo '{"disableAllHooks":true}' > ` + f.file}},
				{"tee", "Bash", map[string]any{"command": `printf '{}' | tee ` + f.file}},
				{"cp", "Bash", map[string]any{"command": "cp /tmp/x " + f.file}},
				{"mv away", "Bash", map[string]any{"command": "mv " + f.file + " /tmp/x"}},
				{"sed -i", "Bash", map[string]any{"command": "sed -i s/a/b/ " + f.file}},
				{"in the home directory", "Bash", map[string]any{"command": "echo '{}' > " + filepath.Join(home, f.file)}},
				{"after cd", "Bash", map[string]any{"command": "cd " + home + " && rm -f " + f.file}},
				{"in a shell's body", "Bash", map[string]any{"command": "bash -lc 'echo {} > " + f.file + "'"}},
			} {
				t.Run(f.file+"/"+name+"/"+c.how, func(t *testing.T) {
					d := run(t, c.tool, c.args, s)
					if d.Decision != api.Deny || d.Rule != f.rule {
						t.Fatalf("got %s/%s (%s), want deny/%s", d.Decision, d.Rule, d.Reason, f.rule)
					}
				})
			}
		}
		t.Run(f.file+"/reading stays allowed", func(t *testing.T) {
			d := run(t, "Read", map[string]any{"file_path": f.file}, pdp.SessionTree{})
			if d.Decision != api.Allow {
				t.Fatalf("got %s/%s (%s), want allow", d.Decision, d.Rule, d.Reason)
			}
		})
	}
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		s          pdp.SessionTree
		want, rule string
	}{
		{"a sub-agent's definition asks at FULL", "Write", map[string]any{"file_path": ".claude/agents/x.md"}, pdp.SessionTree{PermissionLevel: api.Full}, api.Ask, "/**/.claude/**"},
		{"a Gemini CLI extension asks in allow-all", "Bash", map[string]any{"command": "mkdir -p .gemini/extensions/x"}, pdp.SessionTree{Mode: api.AllowAll}, api.Ask, "/**/.gemini/**"},
		{"a Cursor rule asks at READ_WRITE", "Write", map[string]any{"file_path": ".cursor/rules/style.mdc"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, api.Ask, "/**/.cursor/**"},
		{"a settings file in a sub-directory too", "Bash", map[string]any{"command": "echo '{}' > src/.claude/settings.json"}, pdp.SessionTree{PermissionLevel: api.Full}, api.Deny, "/**/.claude/settings.json"},
		{"managed settings", "Bash", map[string]any{"command": "echo '{}' > /etc/claude-code/managed-settings.json"}, pdp.SessionTree{Mode: api.AllowAll}, api.Deny, "/etc/claude-code/**"},
		{"the person's sign-in (pdp login) is not read", "Bash", map[string]any{"command": "cat /home/alice/.config/toolperm/tokens.json"}, pdp.SessionTree{PermissionLevel: api.Full}, api.Deny, "/home/*/.config/toolperm/**"},
		{"nor on macOS", "Bash", map[string]any{"command": "cp '/Users/alice/Library/Application Support/toolperm/tokens.json' /tmp/t"}, pdp.SessionTree{Mode: api.AllowAll}, api.Deny, "/Users/*/Library/Application Support/toolperm/**"},
		{"ordinary writes stay allowed", "Write", map[string]any{"file_path": "src/settings.json"}, pdp.SessionTree{PermissionLevel: api.ReadWrite}, api.Allow, "fs.write"},
		{"and so does a file named like one elsewhere", "Bash", map[string]any{"command": "echo x > src/claude-settings.json"}, pdp.SessionTree{PermissionLevel: api.Full}, api.Allow, "MODE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := run(t, c.tool, c.args, c.s)
			if d.Decision != c.want || d.Rule != c.rule {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Rule, d.Reason, c.want, c.rule)
			}
		})
	}
}
