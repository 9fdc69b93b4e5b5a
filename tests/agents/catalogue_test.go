// The catalogue tests list every tool each CLI offers its model (from its
// own request to the scripted endpoint) and fail on one the tool
// catalogue lacks: go test ./tests/agents -run ToolsInCatalogue -v lists
// the tools and the gaps.

package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// catalogue is the tool catalogue of the repository's policy data.
func catalogue(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "policies", "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Tools map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	return data.Tools
}

// missingFromCatalogue returns the offered tools the catalogue has no
// entry for: neither the agent's own ("<agent>/<tool>") nor a shared one.
func missingFromCatalogue(t *testing.T, agent string, offered []string) []string {
	t.Helper()
	tools := catalogue(t)
	var missing []string
	for _, name := range offered {
		if _, ok := tools[agent+"/"+name]; ok {
			continue
		}
		if _, ok := tools[name]; ok {
			continue
		}
		missing = append(missing, name)
	}
	slices.Sort(missing)
	return missing
}

// checkCatalogue fails on every tool the agent offered its model that
// the catalogue lacks: such a tool is denied at every level.
func checkCatalogue(t *testing.T, agent string, offered []string) {
	t.Helper()
	if len(offered) == 0 {
		t.Fatalf("%s offered its model no tools: the scripted endpoint read none", agent)
	}
	t.Logf("%s offers its model %d tools: %s", agent, len(offered), strings.Join(offered, " "))
	if missing := missingFromCatalogue(t, agent, offered); len(missing) > 0 {
		t.Errorf("the tool catalogue (policies/data.json tools) lacks %d of the %d tools %s offers its model, so each is denied as UNKNOWN_TOOL: %s",
			len(missing), len(offered), agent, strings.Join(missing, " "))
	}
}

// deferredTools reads the tools Claude Code names to its model without
// their schemas (loaded through ToolSearch), from the system reminder
// that lists them.
var deferredList = regexp.MustCompile(`(?s)The following deferred tools are now available via ToolSearch[^\n]*\n(.*?)</system-reminder>`)

func (m *messagesAPI) deferredTools() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var names []string
	for _, req := range m.requests {
		for _, msg := range req.Messages {
			for _, b := range blocks(msg.Content) {
				for _, match := range deferredList.FindAllStringSubmatch(b.Text, -1) {
					for _, line := range strings.Split(match[1], "\n") {
						if name := strings.TrimSpace(line); name != "" && !seen[name] {
							seen[name] = true
							names = append(names, name)
						}
					}
				}
			}
		}
	}
	return names
}

// TestClaudeCodeToolsInCatalogue: every tool Claude Code offers its model
// — with its schema in the request, or deferred (named in a system
// reminder, loaded through ToolSearch) — has a catalogue entry.
func TestClaudeCodeToolsInCatalogue(t *testing.T) {
	claude := cli(t, "claude", "@anthropic-ai/claude-code@"+claudeCodeVersion)
	model, out := runClaudeCode(t, claude, t.TempDir(), t.TempDir(), nil, "")
	offered := model.offeredTools()
	deferred := model.deferredTools()
	if slices.Contains(offered, "ToolSearch") && len(deferred) == 0 {
		t.Fatalf("Claude Code offers ToolSearch but the list of deferred tools was not found in its request\n%s", out)
	}
	checkCatalogue(t, "claude-code", append(offered, deferred...))
}

// TestCodexToolsInCatalogue: every tool Codex offers its model has a
// catalogue entry.
func TestCodexToolsInCatalogue(t *testing.T) {
	codex := cli(t, "codex", "@openai/codex@"+codexVersion)
	model, _ := runCodex(t, codex, t.TempDir(), t.TempDir(), nil, "")
	checkCatalogue(t, "codex", model.offeredTools())
}

// TestGeminiCLIToolsInCatalogue: every tool Gemini CLI offers its model
// in --yolo mode (where it offers all of them) has a catalogue entry.
func TestGeminiCLIToolsInCatalogue(t *testing.T) {
	gemini := cli(t, "gemini", "@google/gemini-cli@"+geminiVersion)
	home := t.TempDir()
	geminiSettings(t, home, "")
	model, _ := runGemini(t, gemini, home, t.TempDir(), nil)
	checkCatalogue(t, "gemini-cli", model.offeredTools())
}
