// Package agents drives the real coding agents' CLIs (installed from npm,
// pinned in tests/agents/npm) end to end, offline: a scripted model
// endpoint on loopback speaks each CLI's model API and asks for tool
// calls, a real `pdp serve` decides them through the hook the CLI is
// configured with, and the file system shows which calls ran.
package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// TestMain removes the pdp binary the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	bin       string
	buildErr  error
)

// buildPDP builds the pdp binary once for all the tests.
func buildPDP(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "pdp-agents-"); buildErr != nil {
			return
		}
		bin = filepath.Join(binDir, "pdp")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/toolperm/pdp/cmd/pdp").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building pdp: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// cli finds an agent's CLI: in $PDP_NPM_TOOLS/node_modules/.bin (where
// .ci/run installs the pinned versions), else on PATH. Missing, the test
// skips, unless PDP_REQUIRE_AGENTS=1 (set by .ci/run).
func cli(t *testing.T, name, pkg string) string {
	t.Helper()
	if dir := os.Getenv("PDP_NPM_TOOLS"); dir != "" {
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("PDP_REQUIRE_AGENTS") == "1" {
		t.Fatalf("%s (npm %s) is not installed, and PDP_REQUIRE_AGENTS=1 requires it: .ci/run installs it into $PDP_NPM_TOOLS", name, pkg)
	}
	t.Skipf("%s (npm %s) is not installed: skipping. Install the pinned tools with: cp tests/agents/npm/package*.json DIR && (cd DIR && npm ci), then PDP_NPM_TOOLS=DIR", name, pkg)
	return ""
}

// startPDP runs `pdp serve` on a free loopback port with a SQLite file
// of its own and the repository's config. With commands, it serves the
// repository's policy with these command rules added to its data (for
// sessions the agent names only once it runs).
func startPDP(t *testing.T, bin string, commands ...map[string]string) string {
	t.Helper()
	var env []string
	if len(commands) > 0 {
		env = append(env, "PDP_POLICY_PATH="+policyWith(t, commands[0]))
	}
	return servePDP(t, bin, env...)
}

// servePDP runs `pdp serve` as startPDP does, with these variables set.
func servePDP(t *testing.T, bin string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "pdp.db"), "--config", filepath.Join("..", "..", "config.yaml"))
	cmd.Env = append(os.Environ(), env...)
	url, _ := testserver.Process(t, cmd, 60*time.Second)
	return url
}

// policyWith copies the repository's policy into a directory of its own
// with rules added to its data's command rules.
func policyWith(t *testing.T, rules map[string]string) string {
	t.Helper()
	src := filepath.Join("..", "..", "policies")
	dst := filepath.Join(t.TempDir(), "policy")
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || (filepath.Ext(e.Name()) != ".rego" && e.Name() != "data.json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "data.json" {
			var data map[string]any
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
			commands, _ := data["commands"].(map[string]any)
			if commands == nil {
				commands = map[string]any{}
			}
			for k, v := range rules {
				commands[k] = v
			}
			data["commands"] = commands
			if raw, err = json.Marshal(data); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// person answers the asks of the sessions whose id starts with session
// from the live event stream as answerOf says (by the call's command:
// its "command" or "cmd" argument), as a person in the console would; it
// stops when the test ends.
func person(t *testing.T, c *client.Client, session string, answerOf func(command string) string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := c.Events(ctx, "")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if ev, err := stream.Next(); err != nil || ev.Kind != client.EventReady {
		cancel()
		t.Fatalf("the event stream's first event: %+v %v", ev, err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); stream.Close(); <-done })
	go func() {
		defer close(done)
		for {
			ev, err := stream.Next()
			if err != nil {
				return
			}
			if ev.Kind != client.EventAsk || ev.Decision == nil || !strings.HasPrefix(ev.Decision.SessionID, session) {
				continue
			}
			command := commandOf(ev.Decision.Args)
			if answer := answerOf(command); answer != "" {
				if _, err := c.Answer(ctx, ev.Decision.DecisionID, answer, "console"); err != nil && ctx.Err() == nil {
					t.Errorf("answering %q: %v", command, err)
				}
			}
		}
	}()
}

// commandOf is a shell call's command, whichever argument names it.
func commandOf(args map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		if s, ok := args[k].(string); ok {
			return s
		}
	}
	return ""
}

// cleanEnv is the environment an agent runs in: nothing of this
// process's (no credentials, no configuration of the machine's own
// agents), a HOME of its own, and extra.
func cleanEnv(home string, extra ...string) []string {
	env := []string{
		"HOME=" + home,
		// pdp first: the hooks pdp init writes run `pdp hook …`.
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
	if os.Geteuid() == 0 {
		// Claude Code refuses to bypass its permissions as root outside
		// a sandbox; this temporary HOME and workspace are one.
		env = append(env, "IS_SANDBOX=1")
	}
	return append(env, extra...)
}

// exists says whether the workspace has the file name.
func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// The four calls every agent's scripted model asks for, and whether each
// must run: a command the rules allow, one they deny, and two that ask,
// which the person allows and denies.
var wantRan = map[string]bool{"allowed": true, "denied": false, "asked-allowed": true, "asked-denied": false}

// checkRan: the workspace has exactly the files of the calls that ran.
func checkRan(t *testing.T, ws, agentOutput string) {
	t.Helper()
	for name, ran := range wantRan {
		if exists(ws, name) != ran {
			t.Errorf("touch %s: ran %v, want %v\nthe agent's output:\n%s", name, !ran, ran, agentOutput)
		}
	}
}

// checkTrail: the PDP's audit trail has the four calls (in the sessions
// whose id starts with session) with the decision each got, each with
// the workspace as its cwd and, when the agent sends one (withID), the
// agent's id of the call.
func checkTrail(t *testing.T, c *client.Client, session, ws string, withID bool) {
	t.Helper()
	page, err := c.Decisions(context.Background(), client.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ev := range page.Decisions {
		if !strings.HasPrefix(ev.SessionID, session) {
			continue
		}
		command := commandOf(ev.Args)
		got[command] = ev.Decision.Decision
		if (withID && ev.ToolUseID == "") || ev.Cwd != ws {
			t.Errorf("%q: tool_use_id %q, cwd %q (want the agent's id of the call and %s)", command, ev.ToolUseID, ev.Cwd, ws)
		}
	}
	want := map[string]string{"touch allowed": "allow", "touch denied": "deny", "touch asked-allowed": "ask", "touch asked-denied": "ask"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the audit trail: %v, want %v", got, want)
	}
}
