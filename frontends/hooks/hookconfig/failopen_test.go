package hookconfig_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookconfig"
	"github.com/toolperm/pdp/internal/agents"
)

// A settings file can hold an entry that looks like the PDP's hook but
// never guards a call: a matcher that matches no tool, a timeout the
// hook cannot answer within (the agent then runs the tool), a command
// that ignores the hook's answer, a URL elsewhere without onFailure,
// a Cursor entry that fails open. pdp init must not take any of these
// for its own hook and report "unchanged": it adds the entry it writes.
func TestInstallIsNotFooledByAnEntryThatGuardsNothing(t *testing.T) {
	cases := map[string]struct{ agent, file, event string }{
		"a matcher that matches nothing": {"claude-code",
			`{"hooks":{"PreToolUse":[{"matcher":"NoSuchTool","hooks":[{"type":"command","command":"pdp hook claude-code"}]}]}}`, "PreToolUse"},
		"a one-second timeout": {"claude-code",
			`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code","timeout":1}]}]}}`, "PreToolUse"},
		"an answer thrown away": {"claude-code",
			`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code >/dev/null; exit 0"}]}]}}`, "PreToolUse"},
		"another server, failing open": {"claude-code",
			`{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"http","url":"http://203.0.113.9/v1/hooks/claude-code"}]}]}}`, "PreToolUse"},
		"a Gemini matcher for one tool": {"gemini-cli",
			`{"hooks":{"BeforeTool":[{"matcher":"read_file","hooks":[{"type":"command","command":"pdp hook gemini-cli"}]}]}}`, "BeforeTool"},
		"a Cursor entry without failClosed": {"cursor",
			`{"version":1,"hooks":{"beforeShellExecution":[{"command":"pdp hook cursor"}]}}`, "beforeShellExecution"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			a := agent(t, tc.agent)
			c, err := hookconfig.Install(a, file, hookconfig.Hook{})
			if err != nil {
				t.Fatal(err)
			}
			added := false
			for _, e := range c.Added {
				added = added || e == tc.event
			}
			if !added {
				t.Fatalf("%s: %s was taken as the PDP's hook (%s)\n%s", tc.agent, tc.event, c, read(t, file))
			}
			// What was there stays (it is not pdp init's to judge), and a
			// second run changes nothing.
			if got := read(t, file); !strings.Contains(got, "hooks") {
				t.Fatal(got)
			}
			again, err := hookconfig.Install(a, file, hookconfig.Hook{})
			if err != nil || again.Changed() {
				t.Fatalf("second run: %s %v", again, err)
			}
		})
	}
}

// Claude Code's disableAllHooks turns every hook off: installing into a
// file that sets it would report a hook that never runs.
func TestInstallRefusesAFileThatDisablesAllHooks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	const text = `{"disableAllHooks": true}`
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := hookconfig.Install(agent(t, "claude-code"), file, hookconfig.Hook{})
	if err == nil || !strings.Contains(err.Error(), "disableAllHooks") {
		t.Fatalf("error %v, want one that names disableAllHooks", err)
	}
	if read(t, file) != text {
		t.Fatal("the file was changed")
	}
}

// --remove takes out what pdp init writes and nothing that only mentions
// it: another guard's HTTP hook on the same path (NeMo Guardrails'
// hooks server serves /v1/hooks/claude-code), a user's command that
// merely names `pdp hook claude-code`, one that runs it after something
// else. Taking those out would switch off a guard that is not the PDP's.
func TestRemoveLeavesHooksThatOnlyLookLikeItsOwn(t *testing.T) {
	file := filepath.Join(t.TempDir(), "settings.json")
	const theirs = `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[` +
		`{"type":"http","url":"http://127.0.0.1:8000/v1/hooks/claude-code"},` +
		`{"type":"command","command":"echo pdp hook claude-code >> /tmp/audit.log"},` +
		`{"type":"command","command":"./guard.sh && pdp hook claude-code"}]}]}}`
	if err := os.WriteFile(file, []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	a := agent(t, "claude-code")
	for _, h := range []hookconfig.Hook{{}, {HTTP: true, URL: "http://pdp.internal:8181"}, {URL: "http://10.0.0.5:8181"}} {
		if _, err := hookconfig.Install(a, file, h); err != nil {
			t.Fatal(err)
		}
	}
	// pdp's own entries, also by a path to pdp and with flags of its own.
	raw := strings.Replace(read(t, file), `"command": "pdp hook claude-code --url http://10.0.0.5:8181 || exit 2"`, `"command": "/usr/local/bin/pdp hook claude-code --url http://10.0.0.5:8181 --wait 30s"`, 1)
	if err := os.WriteFile(file, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := hookconfig.Remove(a, file)
	if err != nil || !c.Changed() {
		t.Fatalf("%s %v", c, err)
	}
	got := decoded(t, read(t, file))
	want := decoded(t, theirs)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after --remove:\n%s\nwant what was there before pdp init:\n%s", read(t, file), theirs)
	}
}

// pdp init's listing says "configured" only for a file whose hook guards
// every tool on every event pdp init installs it for.
func TestConfiguredOnlyWhenEveryToolIsGuarded(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		agent, text string
		want        bool
	}{
		"a matcher that matches nothing": {"claude-code", `{"hooks":{"PreToolUse":[{"matcher":"NoSuchTool","hooks":[{"type":"command","command":"pdp hook claude-code"}]}]}}`, false},
		"after the call only":            {"claude-code", `{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code"}]}]}}`, false},
		"cursor without failClosed":      {"cursor", `{"version":1,"hooks":{"preToolUse":[{"command":"pdp hook cursor"}],"beforeShellExecution":[{"command":"pdp hook cursor"}],"beforeMCPExecution":[{"command":"pdp hook cursor"}],"beforeReadFile":[{"command":"pdp hook cursor"}]}}`, false},
		"nothing":                        {"codex", `{}`, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
			if err := os.WriteFile(file, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if got, err := hookconfig.Configured(agent(t, tc.agent), file); err != nil || got != tc.want {
				t.Fatalf("configured %t %v, want %t", got, err, tc.want)
			}
		})
	}
	for _, described := range agents.All {
		a := hookconfig.For(described)
		for _, h := range []hookconfig.Hook{{}, {HTTP: true}} {
			if h.HTTP && a.Name != "claude-code" {
				continue
			}
			file := filepath.Join(dir, a.Name+fmt.Sprint(h.HTTP)+".json")
			if _, err := hookconfig.Install(a, file, h); err != nil {
				t.Fatal(err)
			}
			if got, err := hookconfig.Configured(a, file); err != nil || !got {
				t.Fatalf("%s %+v after Install: configured %t %v", a.Name, h, got, err)
			}
		}
	}
}

// The hook command pdp init writes blocks the call when it cannot run at
// all — pdp not on the agent's PATH, killed by a signal: Claude Code,
// Codex and Gemini CLI take any status but 0 and 2 for a failed hook and
// run the tool. Run as the agents run it, by a shell.
func TestHookCommandBlocksWhenItCannotRun(t *testing.T) {
	for _, name := range []string{"claude-code", "codex", "gemini-cli"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			if _, err := hookconfig.Install(agent(t, name), file, hookconfig.Hook{}); err != nil {
				t.Fatal(err)
			}
			var v struct {
				Hooks map[string][]struct {
					Hooks []struct{ Command string }
				}
			}
			if err := json.Unmarshal([]byte(read(t, file)), &v); err != nil {
				t.Fatal(err)
			}
			for event, groups := range v.Hooks {
				command := groups[0].Hooks[0].Command
				cmd := exec.Command("/bin/sh", "-c", command)
				cmd.Env = []string{"PATH=" + t.TempDir()} // no pdp there
				cmd.Stdin = strings.NewReader("{}")
				err := cmd.Run()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 {
					t.Fatalf("%s: %q without pdp: %v, want exit status 2", event, command, err)
				}
			}
		})
	}
}
