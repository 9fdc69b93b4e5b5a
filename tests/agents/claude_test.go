package agents

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// claudeCodeVersion is the version tests/agents/npm pins.
const claudeCodeVersion = "2.1.332"

// TestClaudeCode drives the real Claude Code (claude -p) with the PDP's
// command hook in its user settings: the scripted model asks for four
// Bash calls — one the session's rules allow, one they deny, and two
// that ask, which a person allows and denies at the PDP while the hook
// waits — and the workspace shows that exactly the allowed ones ran.
// Claude Code runs in bypassPermissions mode, so the hook is the only
// thing between the model and the shell.
func TestClaudeCode(t *testing.T) {
	claude := cli(t, "claude", "@anthropic-ai/claude-code@"+claudeCodeVersion)
	bin := buildPDP(t)
	url := startPDP(t, bin)
	c := client.New(url)
	ctx := context.Background()

	home, ws := t.TempDir(), t.TempDir()
	sessionID := newUUID(t)
	pdpSession := "cc:" + sessionID
	if _, err := c.Sessions().Create(ctx, client.Session{ID: pdpSession, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{"touch allowed": "allow", "touch denied": "deny"}
	if _, err := c.Sessions().Update(ctx, pdpSession, client.SessionChange{CommandRules: &rules}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{"touch asked-allowed": client.AllowOnce, "touch asked-denied": client.DenyAnswer}
	person(t, c, pdpSession, func(command string) string { return answers[command] })

	hook := fmt.Sprintf("%s hook claude-code --url %s --wait 60s", bin, url)
	hooks := map[string]any{
		"PreToolUse":  []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": hook, "timeout": 90}}}},
		"PostToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": hook}}}},
	}
	script := []toolCall{bash("touch allowed"), bash("touch denied"), bash("touch asked-allowed"), bash("touch asked-denied")}
	claudeSettings(t, home, hooks)
	model, out := runClaudeCode(t, claude, home, ws, script, sessionID)

	checkRan(t, ws, out)
	results := model.results()
	if len(results) != len(script) {
		t.Fatalf("Claude Code sent %d tool results, want %d: %+v\n%s", len(results), len(script), results, out)
	}
	for id, want := range map[string]string{"toolu_02": "toolperm:", "toolu_04": "denied by a person"} {
		if r := results[id]; !strings.Contains(resultText(r), want) {
			t.Errorf("the model was told for %s: %q, want the PDP's reason (%q)", id, resultText(r), want)
		}
	}
	checkTrail(t, c, pdpSession, ws, true)
}

// bash is a Bash call of Claude Code's model.
func bash(command string) toolCall {
	return toolCall{Name: "Bash", Input: map[string]any{"command": command, "description": "scripted"}}
}

// claudeSettings writes Claude Code's user settings in home with these
// hooks.
func claudeSettings(t *testing.T, home string, hooks map[string]any) {
	t.Helper()
	writeJSON(t, filepath.Join(home, ".claude", "settings.json"), map[string]any{"hooks": hooks})
}

// runClaudeCode runs `claude -p` in ws with HOME home (and the settings
// there) against the scripted model, and returns the model's record and
// what claude printed. sessionID "" is a new one.
func runClaudeCode(t *testing.T, claude, home, ws string, script []toolCall, sessionID string) (*messagesAPI, string) {
	t.Helper()
	if sessionID == "" {
		sessionID = newUUID(t)
	}
	model, modelURL := newMessagesAPI(t, script)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Run the commands.", "--output-format", "json", "--session-id", sessionID,
		"--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5")
	cmd.Dir = ws
	cmd.Env = cleanEnv(home,
		"ANTHROPIC_BASE_URL="+modelURL,
		"ANTHROPIC_API_KEY=sk-ant-scripted-model-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	t.Logf("claude -p:\n%s", out)
	if err != nil {
		t.Fatalf("claude -p: %v\nrequests the scripted model did not serve: %v", err, model.other)
	}
	return model, string(out)
}

// writeJSON writes v as JSON to path, creating its directory.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// newUUID is a random version 4 UUID.
func newUUID(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
