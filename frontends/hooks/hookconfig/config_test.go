package hookconfig_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookconfig"
	"github.com/toolperm/pdp/internal/agents"
)

func agent(t *testing.T, name string) hookconfig.Agent {
	t.Helper()
	a, err := hookconfig.Lookup(agents.All, name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func read(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func decoded(t *testing.T, text string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, text)
	}
	return v
}

// Claude Code settings with other settings and another hook on the same
// event: pdp init adds its own entries and keeps everything else, in
// order; a second run changes nothing; --remove gives back the file.
const claudeSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-commands.sh <args>", "timeout": 5}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "env": {"FOO": "1.50"}
}
`

func TestInstallKeepsEverythingElseAndRemoveTakesOnlyItsOwn(t *testing.T) {
	file := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(claudeSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	a := agent(t, "claude-code")
	c, err := hookconfig.Install(a, file, hookconfig.Hook{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Added, []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied"}) || c.Backup != file+".pdp-backup" {
		t.Fatalf("%+v", c)
	}
	if read(t, c.Backup) != claudeSettings {
		t.Fatal("the backup is not the file as it was")
	}
	got := read(t, file)
	v := decoded(t, got)
	pre := v["hooks"].(map[string]any)["PreToolUse"].([]any)
	if len(pre) != 2 || !strings.Contains(got, "./lint-commands.sh <args>") || !strings.Contains(got, `"notify-send done"`) {
		t.Fatalf("the other hooks are not kept:\n%s", got)
	}
	if pre[1].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"] != "pdp hook claude-code || exit 2" {
		t.Fatalf("%v", pre[1])
	}
	// Order and numbers as they were: "model" first, "env" last, "1.50" a string still.
	if !(strings.Index(got, `"model"`) < strings.Index(got, `"permissions"`) && strings.Index(got, `"hooks"`) < strings.Index(got, `"env"`)) {
		t.Fatalf("the order of the settings changed:\n%s", got)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}

	again, err := hookconfig.Install(a, file, hookconfig.Hook{})
	if err != nil || again.Changed() || read(t, file) != got {
		t.Fatalf("a second run changed the file: %+v %v", again, err)
	}

	removed, err := hookconfig.Remove(a, file)
	if err != nil || len(removed.Removed) != 4 {
		t.Fatalf("%+v %v", removed, err)
	}
	if !reflect.DeepEqual(decoded(t, read(t, file)), decoded(t, claudeSettings)) {
		t.Fatalf("--remove did not give back the settings:\n%s", read(t, file))
	}
	if again, _ := hookconfig.Remove(a, file); again.Changed() {
		t.Fatalf("a second --remove changed the file: %+v", again)
	}
}

func TestInstallIntoAFreshFile(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		hook hookconfig.Hook
		want string
	}{
		"claude-code": {hookconfig.Hook{HTTP: true, URL: "https://pdp.example:8181"}, `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "http",
            "url": "https://pdp.example:8181/v1/hooks/claude-code",
            "headers": {
              "Authorization": "Bearer $PDP_TOKEN"
            },
            "allowedEnvVars": [
              "PDP_TOKEN"
            ],
            "onFailure": "block"
          }
        ]
      }
    ],`},
		"codex":      {hookconfig.Hook{}, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"pdp hook codex || exit 2"}]}],"PermissionRequest":[{"hooks":[{"type":"command","command":"pdp hook codex || exit 2"}]}],"PostToolUse":[{"hooks":[{"type":"command","command":"pdp hook codex || exit 2"}]}]}}`},
		"gemini-cli": {hookconfig.Hook{URL: "http://10.0.0.5:8181"}, `{"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"pdp hook gemini-cli --url http://10.0.0.5:8181 || exit 2"}]}]}}`},
		"cursor":     {hookconfig.Hook{}, `{"version":1,"hooks":{"preToolUse":[{"command":"pdp hook cursor","failClosed":true}],"beforeShellExecution":[{"command":"pdp hook cursor","failClosed":true}],"beforeMCPExecution":[{"command":"pdp hook cursor","failClosed":true}],"beforeReadFile":[{"command":"pdp hook cursor","failClosed":true}]}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := agent(t, name)
			file, err := a.File(hookconfig.Where{Project: filepath.Join(dir, name)})
			if err != nil {
				t.Fatal(err)
			}
			c, err := hookconfig.Install(a, file, tc.hook)
			if err != nil || !c.Changed() || c.Backup != "" {
				t.Fatalf("%+v %v", c, err)
			}
			got := read(t, file)
			if strings.HasPrefix(tc.want, "{\n") {
				if !strings.HasPrefix(got, tc.want) {
					t.Fatalf("got\n%s", got)
				}
				return
			}
			if !reflect.DeepEqual(decoded(t, got), decoded(t, tc.want)) {
				t.Fatalf("got\n%s", got)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		file := filepath.Join(dir, name)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	cases := map[string]struct {
		agent, text string
		hook        hookconfig.Hook
		says        string
	}{
		"unparsable":             {"claude-code", `{"hooks": {`, hookconfig.Hook{}, "does not parse"},
		"comments":               {"gemini-cli", "// mine\n{}", hookconfig.Hook{}, "does not parse"},
		"a member twice":         {"claude-code", `{"hooks": {}, "hooks": {}}`, hookconfig.Hook{}, "appears twice"},
		"hooks not an object":    {"claude-code", `{"hooks": []}`, hookconfig.Hook{}, `"hooks" is not an object`},
		"event not an array":     {"codex", `{"hooks": {"PreToolUse": {}}}`, hookconfig.Hook{}, "is not an array"},
		"another version":        {"cursor", `{"version": 2, "hooks": {}}`, hookconfig.Hook{}, `"version" is 2`},
		"http for codex":         {"codex", `{}`, hookconfig.Hook{HTTP: true}, "has no HTTP hooks"},
		"a url to quote":         {"gemini-cli", `{}`, hookconfig.Hook{URL: "http://x/$(reboot)"}, "quote"},
		"an array, not settings": {"claude-code", `[]`, hookconfig.Hook{}, "not a JSON object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := write(strings.ReplaceAll(name, " ", "_")+".json", tc.text)
			_, err := hookconfig.Install(agent(t, tc.agent), file, tc.hook)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one that says %q", err, tc.says)
			}
			if read(t, file) != tc.text {
				t.Fatal("a refused file was changed")
			}
			if _, err := os.Stat(file + ".pdp-backup"); err == nil {
				t.Fatal("a refused file got a backup")
			}
		})
	}
}

// --remove leaves another tool's hook in a group the PDP shares, and a
// Cursor hook of someone else.
func TestRemoveTakesExactlyItsOwnEntries(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hooks.json")
	text := `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./audit.sh"}, {"command": "/usr/local/bin/pdp hook cursor --url http://h:1", "failClosed": true}], "afterFileEdit": [{"command": "prettier"}]}}`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := hookconfig.Remove(agent(t, "cursor"), file)
	if err != nil || !reflect.DeepEqual(c.Removed, []string{"beforeShellExecution"}) {
		t.Fatalf("%+v %v", c, err)
	}
	want := `{"version": 1, "hooks": {"beforeShellExecution": [{"command": "./audit.sh"}], "afterFileEdit": [{"command": "prettier"}]}}`
	if !reflect.DeepEqual(decoded(t, read(t, file)), decoded(t, want)) {
		t.Fatalf("%s", read(t, file))
	}
	// A claude-code group shared with another hook keeps that hook.
	claude := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(claude, []byte(`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code"},{"type":"command","command":"./other"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := hookconfig.Remove(agent(t, "claude-code"), claude); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded(t, read(t, claude)), decoded(t, `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"./other"}]}]}}`)) {
		t.Fatalf("%s", read(t, claude))
	}
	// Another agent's hook is not this one's.
	if ok, _ := hookconfig.Configured(agent(t, "codex"), claude); ok {
		t.Fatal("codex found in claude-code's entries")
	}
}

// TestAnAgentsHomeVariableHoldsItsUserFile: $CODEX_HOME, when set, holds
// Codex's hooks.json; unset, the home directory's .codex does.
func TestAnAgentsHomeVariableHoldsItsUserFile(t *testing.T) {
	codex := agent(t, "codex")
	env := map[string]string{"CODEX_HOME": "/srv/codex"}
	if f, err := codex.File(hookconfig.Where{Home: "/home/u", Getenv: func(k string) string { return env[k] }}); err != nil || f != "/srv/codex/hooks.json" {
		t.Fatalf("with CODEX_HOME: %q %v", f, err)
	}
	if f, err := codex.File(hookconfig.Where{Home: "/home/u", Getenv: func(string) string { return "" }}); err != nil || f != "/home/u/.codex/hooks.json" {
		t.Fatalf("without CODEX_HOME: %q %v", f, err)
	}
	// Another agent's files are not moved by Codex's variable.
	if f, err := agent(t, "claude-code").File(hookconfig.Where{Home: "/home/u", Getenv: func(k string) string { return env[k] }}); err != nil || f != "/home/u/.claude/settings.json" {
		t.Fatalf("claude-code: %q %v", f, err)
	}
}
