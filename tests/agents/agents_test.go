// Package agents drives the real coding agents' CLIs (installed from npm,
// pinned in tests/agents/npm) end to end, offline: a scripted model
// endpoint on loopback speaks each CLI's model API and asks for tool
// calls, a real `pdp serve` decides them through the hook the CLI is
// configured with, and the file system shows which calls ran.
package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// buildPDP builds the pdp binary into a temporary directory.
func buildPDP(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pdp")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/toolperm/pdp/cmd/pdp").CombinedOutput()
	if err != nil {
		t.Fatalf("building pdp: %v\n%s", err, out)
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
// of its own and the repository's config.
func startPDP(t *testing.T, bin string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "pdp.db"), "--config", filepath.Join("..", "..", "config.yaml"))
	url, _ := testserver.Process(t, cmd, 60*time.Second)
	return url
}

// person answers the asks of one session from the live event stream as
// answerOf says (by the call's command), as a person in the console
// would; it stops when the test ends.
func person(t *testing.T, c *client.Client, sessionID string, answerOf func(command string) string) {
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
			if ev.Kind != client.EventAsk || ev.Decision == nil || ev.Decision.SessionID != sessionID {
				continue
			}
			command, _ := ev.Decision.Args["command"].(string)
			if answer := answerOf(command); answer != "" {
				if _, err := c.Answer(ctx, ev.Decision.DecisionID, answer, "console"); err != nil && ctx.Err() == nil {
					t.Errorf("answering %q: %v", command, err)
				}
			}
		}
	}()
}

// cleanEnv is the environment an agent runs in: nothing of this
// process's (no credentials, no configuration of the machine's own
// agents), a HOME of its own, and extra.
func cleanEnv(home string, extra ...string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
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
