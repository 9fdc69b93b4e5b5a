package agents

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
)

// pdpInit runs `pdp init --agent agent --url url [extra…]` as the user
// whose HOME is home (and CODEX_HOME home/.codex), with the directory of
// bin on PATH, as the agent will find it.
func pdpInit(t *testing.T, bin, home, agent, url string, extra ...string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"init", "--agent", agent, "--url", url}, extra...)...)
	cmd.Dir = home
	cmd.Env = cleanEnv(home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pdp init --agent %s: %v\n%s", agent, err, out)
	}
	t.Logf("pdp init --agent %s:\n%s", agent, out)
}

// TestAgentsWithInit drives each agent with the hook configuration pdp
// init wrote (the command form, `pdp hook <agent>` found on PATH, no
// --wait; and Claude Code's HTTP form, --http): a call the policy allows
// runs, one it denies does not, and one that asks does not either — no
// agent runs an ask headless, and Codex, which has no ask, is told where
// to answer it.
func TestAgentsWithInit(t *testing.T) {
	bin := buildPDP(t)
	url := startPDP(t, bin, map[string]string{"touch allowed": "allow", "touch denied": "deny"})
	c := client.New(url)
	claude := func(cli, home, ws string) (string, func() []string) {
		model, out := runClaudeCode(t, cli, home, ws, []toolCall{bash("touch allowed"), bash("touch denied"), bash("touch asked")}, "")
		return out, func() []string { return claudeResults(model) }
	}
	for _, agent := range []struct {
		name, cli, pkg, session string
		flags                   []string
		run                     func(cli, home, ws string) (string, func() []string)
	}{
		{"claude-code", "claude", "@anthropic-ai/claude-code@" + claudeCodeVersion, "cc:", nil, claude},
		{"claude-code", "claude", "@anthropic-ai/claude-code@" + claudeCodeVersion, "cc:", []string{"--http"}, claude},
		{"codex", "codex", "@openai/codex@" + codexVersion, "codex:", nil, func(cli, home, ws string) (string, func() []string) {
			call := func(cmd string) toolCall { return toolCall{Name: "exec_command", Input: map[string]any{"cmd": cmd}} }
			model, out := runCodex(t, cli, home, ws, []toolCall{call("touch allowed"), call("touch denied"), call("touch asked")}, "")
			return out, func() []string { return codexOutputs(model) }
		}},
		{"gemini-cli", "gemini", "@google/gemini-cli@" + geminiVersion, "gemini:", nil, func(cli, home, ws string) (string, func() []string) {
			call := func(cmd string) toolCall {
				return toolCall{Name: "run_shell_command", Input: map[string]any{"command": cmd}}
			}
			model, out := runGemini(t, cli, home, ws, []toolCall{call("touch allowed"), call("touch denied"), call("touch asked")})
			return out, model.responses
		}},
	} {
		t.Run(strings.Join(append([]string{agent.name}, agent.flags...), " "), func(t *testing.T) {
			cli := cli(t, agent.cli, agent.pkg)
			home, ws := t.TempDir(), t.TempDir()
			if agent.name == "gemini-cli" {
				// pdp init adds its hook to the settings as they are.
				geminiSettings(t, home, "")
			}
			pdpInit(t, bin, home, agent.name, url, agent.flags...)
			out, results := agent.run(cli, home, ws)
			for name, ran := range map[string]bool{"allowed": true, "denied": false, "asked": false} {
				if exists(ws, name) != ran {
					t.Errorf("touch %s: ran %v, want %v\n%s", name, !ran, ran, out)
				}
			}
			if got := results(); len(got) < 2 || !strings.Contains(got[1], "toolperm") {
				t.Errorf("the model was told for the denied call: %q, want the PDP's reason", got)
			}
			page, err := c.Decisions(t.Context(), client.Filter{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, ev := range page.Decisions {
				if strings.HasPrefix(ev.SessionID, agent.session) && ev.Cwd == ws {
					got[commandOf(ev.Args)] = ev.Decision.Decision
				}
			}
			if got["touch allowed"] != "allow" || got["touch denied"] != "deny" || got["touch asked"] != "ask" {
				t.Errorf("the audit trail of %s: %v", agent.name, got)
			}
		})
	}
}

// claudeResults is what Claude Code sent back for each call, in order.
func claudeResults(m *messagesAPI) []string {
	results := m.results()
	var out []string
	for i := 1; ; i++ {
		r, ok := results[fmt.Sprintf("toolu_%02d", i)]
		if !ok {
			return out
		}
		out = append(out, resultText(r))
	}
}

// codexOutputs is what Codex sent back for each call, in order.
func codexOutputs(m *responsesAPI) []string {
	outputs := m.outputs()
	var out []string
	for i := 1; ; i++ {
		o, ok := outputs[fmt.Sprintf("call_%02d", i)]
		if !ok {
			return out
		}
		out = append(out, o)
	}
}
