package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runInit runs `pdp init args…` as a child process with HOME at home,
// in dir, with the agents' programs of bin on PATH.
func runInit(t *testing.T, home, dir, bin string, args ...string) pdpRun {
	t.Helper()
	cmd := pdpProcess(append([]string{"init"}, args...), "HOME="+home, "CODEX_HOME=", "PATH="+bin)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := pdpRun{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.status = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

func TestInitOnRealFiles(t *testing.T) {
	home, project, bin := t.TempDir(), t.TempDir(), t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	existing := `{"theme": "dark", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}`
	if err := os.WriteFile(settings, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}

	// Existing settings with another hook: its own entries added, the rest kept.
	r := runInit(t, home, project, bin, "--agent", "claude-code", "--http", "--url", "http://127.0.0.1:8181")
	if r.status != 0 || !strings.Contains(r.stdout, "added the PDP's hook for PreToolUse") || !strings.Contains(r.stdout, ".pdp-backup") {
		t.Fatalf("%s", r)
	}
	written, _ := os.ReadFile(settings)
	var v map[string]any
	if err := json.Unmarshal(written, &v); err != nil || v["theme"] != "dark" || !strings.Contains(string(written), "./guard.sh") ||
		!strings.Contains(string(written), `"onFailure": "block"`) || !strings.Contains(string(written), `"Bearer $PDP_TOKEN"`) {
		t.Fatalf("%s %v", written, err)
	}
	// A second run changes nothing.
	if r := runInit(t, home, project, bin, "--agent", "claude-code", "--http"); r.status != 0 || !strings.Contains(r.stdout, "unchanged") {
		t.Fatalf("%s", r)
	}
	if again, _ := os.ReadFile(settings); !bytes.Equal(again, written) {
		t.Fatal("a second run changed the file")
	}

	// A fresh project file.
	if r := runInit(t, home, project, bin, "--agent", "cursor", "--project"); r.status != 0 {
		t.Fatalf("%s", r)
	}
	if raw, err := os.ReadFile(filepath.Join(project, ".cursor", "hooks.json")); err != nil || !strings.Contains(string(raw), `"failClosed": true`) {
		t.Fatalf("%s %v", raw, err)
	}

	// An unparsable file is refused and left alone.
	gemini := filepath.Join(home, ".gemini", "settings.json")
	if err := os.MkdirAll(filepath.Dir(gemini), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gemini, []byte(`{"hooks": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runInit(t, home, project, bin, "--agent", "gemini-cli"); r.status == 0 || !strings.Contains(r.stderr, "does not parse") {
		t.Fatalf("%s", r)
	}
	if raw, _ := os.ReadFile(gemini); string(raw) != `{"hooks": ` {
		t.Fatalf("the unparsable file was changed: %s", raw)
	}

	// The listing: installed agents and where the hook is.
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r = runInit(t, home, project, bin)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.status != 0 || len(lines) != 4 {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{"claude-code  not found on PATH; the PDP's hook is in " + settings, "codex        installed (" + filepath.Join(bin, "codex") + ")",
		"cursor       not found on PATH; the PDP's hook is in " + filepath.Join(project, ".cursor", "hooks.json"), "does not parse"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("the listing does not say %q:\n%s", want, r.stdout)
		}
	}

	// --remove gives back the settings as they were.
	if r := runInit(t, home, project, bin, "--agent", "claude-code", "--remove"); r.status != 0 || !strings.Contains(r.stdout, "removed") {
		t.Fatalf("%s", r)
	}
	var before, after map[string]any
	raw, _ := os.ReadFile(settings)
	if json.Unmarshal([]byte(existing), &before) != nil || json.Unmarshal(raw, &after) != nil || !jsonEqual(before, after) {
		t.Fatalf("after --remove:\n%s", raw)
	}
	if r := runInit(t, home, project, bin, "--agent", "codex", "--http"); r.status == 0 || !strings.Contains(r.stderr, "no HTTP hooks") {
		t.Fatalf("%s", r)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// The hook that pdp init writes is one the agent can run: its command,
// run by a shell as the agent runs it, answers an event.
func TestInitWritesAHookThatRuns(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	srv, _ := pdpTestServer(t)
	if r := runInit(t, home, project, t.TempDir(), "--agent", "gemini-cli", "--url", srv.URL); r.status != 0 {
		t.Fatalf("%s", r)
	}
	raw, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(raw, &s); err != nil || len(s.Hooks["BeforeTool"]) != 1 {
		t.Fatalf("%s %v", raw, err)
	}
	command := s.Hooks["BeforeTool"][0].Hooks[0].Command
	// The agent runs "pdp …" through a shell; here pdp is this test binary.
	if !strings.HasPrefix(command, "pdp ") {
		t.Fatalf("command %q", command)
	}
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "pdp")); err != nil {
		t.Fatal(err)
	}
	run := func(path string) hookRun {
		cmd := pdpProcess(nil, "PATH="+path, "GEMINI_PROJECT_DIR=", "CLAUDE_PROJECT_DIR=")
		cmd.Path, cmd.Args = "/bin/sh", []string{"/bin/sh", "-c", command}
		cmd.Stdin = strings.NewReader(agentEvent(t, "geminicli", "before_read_outside.json"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		r := hookRun{out.String(), errOut.String(), 0}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			r.exit = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if got, why := seenBy["gemini-cli"](run(bin + ":" + os.Getenv("PATH"))); got != "deny" || !strings.Contains(why, "OUTSIDE_WORKSPACE") {
		t.Fatalf("%s (%s)", got, why)
	}
	// Without pdp on the PATH the command still blocks (exit status 2).
	if r := run(t.TempDir()); r.exit != 2 {
		t.Fatalf("without pdp: %+v", r)
	}
}

// runAgentHookArgs runs pdp with exactly these arguments and the event on
// stdin.
func runAgentHookArgs(t *testing.T, args []string, stdin string) hookRun {
	t.Helper()
	cmd := pdpProcess(args, "GEMINI_PROJECT_DIR=", "CLAUDE_PROJECT_DIR=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := hookRun{out.String(), errOut.String(), 0}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.exit = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each agent's README section: the pdp init line writes exactly the
// hand-written snippet beside it.
func TestREADMEAgentSections(t *testing.T) {
	for heading, file := range map[string]string{
		"### Claude Code:":          ".claude/settings.json",
		"### Claude Code over HTTP": ".claude/settings.json",
		"### Codex CLI":             ".codex/hooks.json",
		"### Gemini CLI":            ".gemini/settings.json",
		"### Cursor":                ".cursor/hooks.json",
	} {
		t.Run(heading, func(t *testing.T) {
			var args []string
			for _, line := range strings.Split(readmeBlock(t, heading, "sh"), "\n") {
				if strings.HasPrefix(line, "pdp init ") {
					args = strings.Fields(line)[2:]
				}
			}
			if args == nil {
				t.Fatal("the section has no pdp init line")
			}
			home := t.TempDir()
			if r := runInit(t, home, t.TempDir(), t.TempDir(), args...); r.status != 0 {
				t.Fatalf("%s", r)
			}
			written, err := os.ReadFile(filepath.Join(home, file))
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(written, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(readmeBlock(t, heading, "json")), &want); err != nil {
				t.Fatalf("the README's snippet: %v", err)
			}
			if !jsonEqual(got, want) {
				t.Fatalf("pdp init %v writes\n%s\nthe README shows\n%s", args, written, readmeBlock(t, heading, "json"))
			}
		})
	}
}

// TestInitNamesAPdpTheAgentCanRun: where pdp is not on the PATH the
// agent will see, the hook names the absolute path of the pdp that wrote
// it; a temporary build (go run) cannot be named, and is warned about.
func TestInitNamesAPdpTheAgentCanRun(t *testing.T) {
	installed := filepath.Join(t.TempDir(), "bin", "pdp")
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installed, self, 0o755); err != nil {
		t.Fatal(err)
	}
	hookCommand := func(home string) string {
		raw, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct{ Command string }
			}
		}
		if err := json.Unmarshal(raw, &s); err != nil || len(s.Hooks["BeforeTool"]) != 1 {
			t.Fatalf("%s %v", raw, err)
		}
		return s.Hooks["BeforeTool"][0].Hooks[0].Command
	}
	initWith := func(program, path string) (string, pdpRun) {
		home := t.TempDir()
		cmd := pdpProcess([]string{"init", "--agent", "gemini-cli"}, "HOME="+home, "PATH="+path)
		cmd.Path, cmd.Args[0] = program, program
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
		}
		return hookCommand(home), pdpRun{stdout: out.String(), stderr: errOut.String()}
	}

	if command, r := initWith(installed, t.TempDir()); !strings.HasPrefix(command, installed+" hook gemini-cli") || !strings.Contains(r.stderr, "pdp is not on this PATH") {
		t.Fatalf("pdp not on PATH: the hook should run %s: %q\n%s", installed, command, r)
	}
	if command, r := initWith(installed, filepath.Dir(installed)); !strings.HasPrefix(command, "pdp hook gemini-cli") || r.stderr != "" {
		t.Fatalf("pdp on PATH: the hook should run pdp: %q\n%s", command, r)
	}
	// This test's own binary is a temporary build, and not named pdp.
	if command, r := initWith(os.Args[0], t.TempDir()); !strings.HasPrefix(command, "pdp hook gemini-cli") || !strings.Contains(r.stderr, "warning: pdp is not on this PATH") || !strings.Contains(r.stderr, "--hook-binary") {
		t.Fatalf("a temporary build: the hook keeps pdp, with a warning: %q\n%s", command, r)
	}
}
