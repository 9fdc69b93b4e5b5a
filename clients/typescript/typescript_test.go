// Package typescript_test runs the TypeScript client's own tests (Node's
// test runner, node --test) against a real `pdp serve` built from this
// tree, and type-checks its declarations with tsc when tsc is there.
package typescript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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

// tool finds a command: on PATH, else in the directory .ci/run installs
// the pinned npm tools into ($PDP_NPM_TOOLS/node_modules/.bin). Missing,
// the test skips, unless env (set by .ci/run) requires it.
func tool(t *testing.T, name, require string) string {
	t.Helper()
	if dir := os.Getenv("PDP_NPM_TOOLS"); dir != "" {
		if p := filepath.Join(dir, "node_modules", ".bin", name); isExecutable(p) {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv(require) == "1" {
		t.Fatalf("%s is not installed, and %s=1 requires it (.ci/run installs it)", name, require)
	}
	t.Skipf("%s is not installed: skipping (install Node.js 20+ to run the TypeScript client's tests; .ci/run does)", name)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// TestNodeSuite: node --test test/*.test.js with PDP_BIN set; the tests
// start their own servers.
func TestNodeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pdp and runs the Node suite")
	}
	node := tool(t, "node", "PDP_REQUIRE_NODE")
	bin := buildPDP(t)
	cmd := exec.Command(node, "--test", "--test-reporter=spec", filepath.Join("test", "client.test.js"), filepath.Join("test", "example.test.js"))
	cmd.Env = append(os.Environ(), "PDP_BIN="+bin, "PDP_CONFIG="+filepath.Join("..", "..", "config.yaml"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestDeclarations: tsc checks index.d.ts and test/types.ts, whose
// @ts-expect-error lines prove the declarations refuse misuse.
func TestDeclarations(t *testing.T) {
	tsc := tool(t, "tsc", "PDP_REQUIRE_TSC")
	out, err := exec.Command(tsc, "-p", "tsconfig.json").CombinedOutput()
	if err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
}
