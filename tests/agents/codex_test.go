package agents

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// codexVersion is the version tests/agents/npm pins.
const codexVersion = "0.169.0"

// codexModel is a model Codex's own catalogue knows (codex debug
// models), so Codex offers that model's tools (exec_command, apply_patch,
// …) rather than a fallback set.
const codexModel = "gpt-5.5"

// TestCodex drives the real Codex CLI (codex exec) with pdp hook codex
// in its config: the scripted model asks for four exec_command calls —
// one the policy's command rules allow, one they deny, two that ask,
// which a person allows and denies at the PDP while the hook waits
// (Codex has no ask of its own) — and the workspace shows that exactly
// the allowed ones ran. Codex runs without its sandbox and approvals, so
// the hook is the only thing between the model and the shell.
func TestCodex(t *testing.T) {
	codex := cli(t, "codex", "@openai/codex@"+codexVersion)
	bin := buildPDP(t)
	// Codex names its session (its thread) only once it runs, so the
	// command rules are the policy's, and the person answers the asks of
	// any Codex session.
	url := startPDP(t, bin, map[string]string{"touch allowed": "allow", "touch denied": "deny"})
	c := client.New(url)
	answers := map[string]string{"touch asked-allowed": client.AllowOnce, "touch asked-denied": client.DenyAnswer}
	person(t, c, "codex:", func(command string) string { return answers[command] })

	home, ws := t.TempDir(), t.TempDir()
	call := func(cmd string) toolCall { return toolCall{Name: "exec_command", Input: map[string]any{"cmd": cmd}} }
	script := []toolCall{call("touch allowed"), call("touch denied"), call("touch asked-allowed"), call("touch asked-denied")}
	hook := fmt.Sprintf("%s hook codex --url %s --workspace %s --wait 60s", bin, url, ws)
	model, out := runCodex(t, codex, home, ws, script, hook)

	checkRan(t, ws, out)
	outputs := model.outputs()
	if len(outputs) != len(script) {
		t.Fatalf("Codex sent %d call outputs, want %d: %v", len(outputs), len(script), outputs)
	}
	for id, want := range map[string]string{"call_02": "toolperm: The policy command rule", "call_04": "denied by a person"} {
		if !strings.Contains(outputs[id], want) {
			t.Errorf("the model was told for %s: %q, want the PDP's reason (%q)", id, outputs[id], want)
		}
	}
	checkTrail(t, c, "codex:", ws, true)
}

// runCodex runs `codex exec` in ws with CODEX_HOME in home: the scripted
// model as a custom provider on loopback and, unless hook is "", hook as
// the PreToolUse command hook. It returns the model's record and what
// codex printed.
func runCodex(t *testing.T, codex, home, ws string, script []toolCall, hook string) (*responsesAPI, string) {
	t.Helper()
	model, modelURL := newResponsesAPI(t, script)
	// No update check, no sync of the curated plugins (from GitHub), no
	// apps or analytics: nothing leaves the machine.
	config := fmt.Sprintf(`model = %q
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
in_app_updates = false

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
`, codexModel, modelURL+"/v1")
	if hook != "" {
		config += fmt.Sprintf(`
[[hooks.PreToolUse]]
matcher = ".*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
timeout = 90
`, hook)
	}
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, codex, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
		"--dangerously-bypass-approvals-and-sandbox", "Run the commands.")
	cmd.Dir = ws
	cmd.Env = cleanEnv(home, "CODEX_HOME="+codexHome)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	t.Logf("codex exec:\n%s", out)
	if err != nil {
		t.Fatalf("codex exec: %v\nrequests the scripted model did not serve: %v", err, model.other)
	}
	return model, string(out)
}

// TestCodexServerDown: with the PDP unreachable, pdp hook codex blocks
// the call (exit status 2) and Codex runs nothing.
func TestCodexServerDown(t *testing.T) {
	codex := cli(t, "codex", "@openai/codex@"+codexVersion)
	bin := buildPDP(t)
	ws := t.TempDir()
	script := []toolCall{{Name: "exec_command", Input: map[string]any{"cmd": "touch ran-while-down"}}}
	model, out := runCodex(t, codex, t.TempDir(), ws, script, fmt.Sprintf("%s hook codex --url %s --workspace %s", bin, deadURL(t), ws))
	if exists(ws, "ran-while-down") {
		t.Fatalf("the call ran with the PDP down\n%s", out)
	}
	if got := model.outputs()["call_01"]; !strings.Contains(got, "toolperm") {
		t.Errorf("the model was told: %q, want the hook's block", got)
	}
}
