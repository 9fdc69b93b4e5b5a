package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/toolperm/pdp/internal/agents"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// goTool is the go command that builds this package.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command to build pdp-hook with: %v", err)
	}
	return p
}

// buildHookBinary builds pdp-hook as scripts/release does (-tags
// hookonly, no cgo) and returns its path.
func buildHookBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pdp-hook")
	cmd := exec.Command(goTool(t), "build", "-tags", "hookonly", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building pdp-hook: %v\n%s", err, out)
	}
	return bin
}

// runHookBinary runs `pdp-hook hook <agent>` as the agent does: a child
// process, the event on stdin.
func runHookBinary(t *testing.T, bin, agent, stdin string, args ...string) hookRun {
	t.Helper()
	return runProcess(t, exec.Command(bin, append([]string{"hook", agent}, args...)...), stdin, "CLAUDE_PROJECT_DIR=", "GEMINI_PROJECT_DIR=")
}

// runProcess runs cmd with stdin and env added to this environment.
func runProcess(t *testing.T, cmd *exec.Cmd, stdin string, env ...string) hookRun {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := hookRun{out.String(), errOut.String(), 0}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// TestHookBuildLinksNoServerParts: pdp-hook, the laptop's binary, links
// neither OPA nor a store (SQLite, Postgres) nor the decision core, and
// no cgo, on every platform it is released for — so it starts without
// OPA's initialisation and cross-compiles without a C compiler.
func TestHookBuildLinksNoServerParts(t *testing.T) {
	forbidden := []string{
		"github.com/open-policy-agent/",
		"github.com/mattn/go-sqlite3",
		"github.com/jackc/pgx",
		"github.com/toolperm/pdp/pdp",
		"github.com/toolperm/pdp/internal/app",
		"github.com/toolperm/pdp/store/sqlite",
		"github.com/toolperm/pdp/store/postgres",
		"runtime/cgo",
	}
	for _, target := range []string{"linux/amd64", "darwin/arm64", "windows/amd64"} {
		t.Run(target, func(t *testing.T) {
			goos, goarch, _ := strings.Cut(target, "/")
			cmd := exec.Command(goTool(t), "list", "-deps", "-tags", "hookonly", ".")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, errOut.String())
			}
			deps := strings.Fields(string(out))
			if !contains(deps, "github.com/toolperm/pdp/frontends/hooks/claudecode") {
				t.Fatalf("go list -deps names no hook adapter: %q", deps)
			}
			for _, dep := range deps {
				for _, f := range forbidden {
					if dep == strings.TrimSuffix(f, "/") || strings.HasPrefix(dep, f) || strings.HasPrefix(dep, f+"/") {
						t.Errorf("pdp-hook links %s", dep)
					}
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// decisionIDs are the ids of decisions in an answer: they differ from
// run to run.
var decisionIDs = regexp.MustCompile(`\b[0-9a-f]{24}\b`)

// TestHookBinaryAnswersAsPdpHookDoes: pdp-hook's hook commands take the
// same flags and answer every event exactly as `pdp hook <agent>` does
// against a server — allow, ask, deny, a malformed event, a server that
// is down — and fail closed where pdp would decide in-process (--local).
func TestHookBinaryAnswersAsPdpHookDoes(t *testing.T) {
	srv, _ := pdpTestServer(t)
	bin := buildHookBinary(t)
	url := []string{"--url", srv.URL}
	down := []string{"--url", "http://127.0.0.1:1", "--timeout", "2s"}
	type event struct {
		agent, event string
		args         []string
	}
	events := map[string]event{
		"claude-code malformed":   {"claude-code", `{"hook_event_name":"PreToolUse"`, url},
		"claude-code server down": {"claude-code", payload(t, "read_inside.json"), down},
		"codex ask":               {"codex", agentEvent(t, "codex", "pre_bash.json"), url},
		"codex deny":              {"codex", agentEvent(t, "codex", "pre_mcp.json"), url},
		"codex server down":       {"codex", agentEvent(t, "codex", "pre_bash.json"), down},
		"gemini-cli deny":         {"gemini-cli", agentEvent(t, "geminicli", "before_read_outside.json"), url},
		"gemini-cli ask":          {"gemini-cli", agentEvent(t, "geminicli", "before_shell.json"), url},
		"cursor deny":             {"cursor", agentEvent(t, "cursor", "before_read_file.json"), url},
		"cursor ask":              {"cursor", agentEvent(t, "cursor", "before_shell.json"), url},
	}
	for name := range hookCases {
		events["claude-code "+name] = event{"claude-code", payload(t, name), url}
	}
	for name, ev := range events {
		t.Run(name, func(t *testing.T) {
			want := runAgentHook(t, ev.agent, ev.event, ev.args...)
			got := runHookBinary(t, bin, ev.agent, ev.event, ev.args...)
			if got.exit != want.exit || decisionIDs.ReplaceAllString(got.stdout, "ID") != decisionIDs.ReplaceAllString(want.stdout, "ID") ||
				decisionIDs.ReplaceAllString(got.stderr, "ID") != decisionIDs.ReplaceAllString(want.stderr, "ID") {
				t.Fatalf("pdp-hook:\n%+v\npdp:\n%+v", got, want)
			}
			if d, _ := commandVerdict(ev.agent, got); d == "runs anyway" {
				t.Fatalf("the agent would run the tool: %+v", got)
			}
		})
	}
	for _, a := range agents.All {
		t.Run(a.Name+" flags", func(t *testing.T) {
			want := runAgentHook(t, a.Name, "", "--help")
			got := runHookBinary(t, bin, a.Name, "", "--help")
			flags := func(help string) string { _, f, _ := strings.Cut(help, "\nFlags:\n"); return f }
			if flags(got.stdout) == "" || flags(got.stdout) != flags(want.stdout) {
				t.Fatalf("pdp-hook hook %s takes other flags:\n%s\npdp hook %s:\n%s", a.Name, flags(got.stdout), a.Name, flags(want.stdout))
			}
		})
	}
	// --local needs the policy engine, which pdp-hook leaves out: a deny
	// that says so, in the agent's own shape.
	r := runHookBinary(t, bin, "claude-code", payload(t, "read_inside.json"), "--local", "--workspace", "/home/dev/proj")
	if d, why := commandVerdict("claude-code", r); d != "deny" || !strings.Contains(why, "pdp-hook leaves out") || !strings.Contains(why, "pdp hook claude-code --local") {
		t.Fatalf("--local: %s (%s), want a deny saying to use pdp", d, why)
	}
	r = runHookBinary(t, bin, "codex", agentEvent(t, "codex", "pre_bash.json"), "--local", "--workspace", "/home/dev/proj")
	if d, why := commandVerdict("codex", r); d != "deny" || !strings.Contains(why, "pdp-hook leaves out") {
		t.Fatalf("codex --local: %s (%s), want a deny", d, why)
	}
}

// TestHookBinaryInit: pdp-hook init writes hooks that run pdp-hook, pdp
// init --hook-binary writes the program it names, and the command
// written, run by a shell as the agent runs it with pdp-hook on PATH,
// answers from the server.
func TestHookBinaryInit(t *testing.T) {
	srv, _ := pdpTestServer(t)
	bin := buildHookBinary(t)
	home, project := t.TempDir(), t.TempDir()

	// pdp-hook is on the PATH the agent will see (TestInitNamesAPdpTheAgentCanRun: where it is not).
	r := runProcess(t, exec.Command(bin, "init", "--agent", "claude-code", "--url", srv.URL), "", "HOME="+home, "CODEX_HOME=", "PATH="+filepath.Dir(bin)+":/usr/bin:/bin")
	if r.exit != 0 {
		t.Fatalf("pdp-hook init: %+v", r)
	}
	settings, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil || len(doc.Hooks["PreToolUse"]) != 1 {
		t.Fatalf("%s %v", settings, err)
	}
	command := doc.Hooks["PreToolUse"][0].Hooks[0].Command
	if command != "pdp-hook hook claude-code --url "+srv.URL+" || exit 2" {
		t.Fatalf("the hook command is %q", command)
	}
	// Run as Claude Code runs it: sh -c, pdp-hook found on PATH.
	sh := exec.Command("/bin/sh", "-c", command)
	r = runProcess(t, sh, payload(t, "read_inside.json"), "PATH="+filepath.Dir(bin)+":/usr/bin:/bin", "CLAUDE_PROJECT_DIR=")
	if d, why := commandVerdict("claude-code", r); d != "allow" {
		t.Fatalf("the installed hook answered %s (%s): %+v", d, why, r)
	}
	// pdp-hook init lists it as the PDP's hook, and --remove takes it out.
	r = runProcess(t, exec.Command(bin, "init"), "", "HOME="+home, "CODEX_HOME=", "PATH="+t.TempDir())
	if !strings.Contains(r.stdout, "the PDP's hook is in "+filepath.Join(home, ".claude", "settings.json")) {
		t.Fatalf("pdp-hook init does not see its hook: %+v", r)
	}

	// pdp init --hook-binary: the laptop's binary by its path.
	ir := runInit(t, home, project, t.TempDir(), "--agent", "codex", "--hook-binary", "/opt/toolperm/pdp-hook", "--url", "https://pdp.example.com:8181")
	hooks, _ := os.ReadFile(filepath.Join(home, ".codex", "hooks.json"))
	if ir.status != 0 || !strings.Contains(string(hooks), `"/opt/toolperm/pdp-hook hook codex --url https://pdp.example.com:8181 || exit 2"`) {
		t.Fatalf("%s\n%s", ir, hooks)
	}
	for _, bad := range []string{`C:\Tools\pdp-hook.exe`, "/opt/my tools/pdp-hook", "/usr/local/bin/curl"} {
		ir = runInit(t, home, project, t.TempDir(), "--agent", "gemini-cli", "--hook-binary", bad)
		if ir.status == 0 || !strings.Contains(ir.stderr, "--hook-binary") {
			t.Fatalf("--hook-binary %q was taken: %s", bad, ir)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini", "settings.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused --hook-binary wrote the settings: %v", err)
	}
}
