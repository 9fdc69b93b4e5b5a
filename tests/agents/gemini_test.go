package agents

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// geminiVersion is the version tests/agents/npm pins.
const geminiVersion = "0.61.0"

// TestGeminiCLI drives the real Gemini CLI (gemini -p, --yolo) with pdp
// hook gemini-cli as its BeforeTool hook: the scripted model asks for
// four run_shell_command calls — one the policy's command rules allow,
// one they deny, two that ask, which a person allows and denies at the
// PDP while the hook waits — and the workspace shows that exactly the
// allowed ones ran. --yolo turns Gemini CLI's own confirmations off, so
// the hook is the only thing between the model and the shell.
func TestGeminiCLI(t *testing.T) {
	gemini := cli(t, "gemini", "@google/gemini-cli@"+geminiVersion)
	bin := buildPDP(t)
	url := startPDP(t, bin, map[string]string{"touch allowed": "allow", "touch denied": "deny"})
	c := client.New(url)
	answers := map[string]string{"touch asked-allowed": client.AllowOnce, "touch asked-denied": client.DenyAnswer}
	person(t, c, "gemini:", func(command string) string { return answers[command] })

	home, ws := t.TempDir(), t.TempDir()
	call := func(command string) toolCall {
		return toolCall{Name: "run_shell_command", Input: map[string]any{"command": command}}
	}
	script := []toolCall{call("touch allowed"), call("touch denied"), call("touch asked-allowed"), call("touch asked-denied")}
	// Gemini CLI's hook timeout is 60 s by default: the wait stays under it.
	hook := fmt.Sprintf("%s hook gemini-cli --url %s --wait 30s", bin, url)
	geminiSettings(t, home, hook)
	model, out := runGemini(t, gemini, home, ws, script)

	checkRan(t, ws, out)
	responses := model.responses()
	if len(responses) != len(script) {
		t.Fatalf("Gemini CLI sent %d function responses, want %d: %v", len(responses), len(script), responses)
	}
	for i, want := range map[int]string{1: "toolperm: The policy command rule", 3: "denied by a person"} {
		if !strings.Contains(responses[i], want) {
			t.Errorf("the model was told for call %d: %q, want the PDP's reason (%q)", i+1, responses[i], want)
		}
	}
	// BeforeTool carries no id of the call.
	checkTrail(t, c, "gemini:", ws, false)
}

// geminiSettings writes Gemini CLI's user settings in home: folder
// trust off, the API key's auth, nothing that calls out, and unless hook
// is "" hook as the BeforeTool command hook.
func geminiSettings(t *testing.T, home, hook string) {
	t.Helper()
	// No update check, usage statistics or telemetry: nothing leaves the
	// machine.
	settings := map[string]any{
		"security":  map[string]any{"folderTrust": map[string]any{"enabled": false}, "auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	if hook != "" {
		settings["hooks"] = map[string]any{
			"BeforeTool": []any{map[string]any{"matcher": ".*", "hooks": []any{map[string]any{"type": "command", "command": hook}}}},
		}
	}
	writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), settings)
}

// runGemini runs `gemini -p --yolo` in ws with HOME home (and the
// settings there), the scripted model through GOOGLE_GEMINI_BASE_URL,
// and returns the model's record and what gemini printed.
func runGemini(t *testing.T, gemini, home, ws string, script []toolCall) (*generateContentAPI, string) {
	t.Helper()
	model, modelURL := newGenerateContentAPI(t, script)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gemini, "-p", "Run the commands.", "-m", "gemini-2.5-pro", "--yolo", "--output-format", "json")
	cmd.Dir = ws
	cmd.Env = cleanEnv(home,
		"GEMINI_API_KEY=scripted-model-not-a-key",
		"GOOGLE_GEMINI_BASE_URL="+modelURL,
		"GEMINI_CLI_NO_RELAUNCH=true",
	)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	t.Logf("gemini -p:\n%s", out)
	if err != nil {
		t.Fatalf("gemini -p: %v\nrequests the scripted model did not serve: %v", err, model.other)
	}
	return model, string(out)
}

// TestGeminiCLIServerDown: with the PDP unreachable, pdp hook gemini-cli
// answers deny and Gemini CLI runs nothing.
func TestGeminiCLIServerDown(t *testing.T) {
	gemini := cli(t, "gemini", "@google/gemini-cli@"+geminiVersion)
	bin := buildPDP(t)
	home, ws := t.TempDir(), t.TempDir()
	geminiSettings(t, home, fmt.Sprintf("%s hook gemini-cli --url %s", bin, deadURL(t)))
	script := []toolCall{{Name: "run_shell_command", Input: map[string]any{"command": "touch ran-while-down"}}}
	model, out := runGemini(t, gemini, home, ws, script)
	if exists(ws, "ran-while-down") {
		t.Fatalf("the call ran with the PDP down\n%s", out)
	}
	if got := model.responses(); len(got) != 1 || !strings.Contains(got[0], "toolperm") {
		t.Errorf("the model was told: %q, want the hook's block", got)
	}
}
