package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentsHonourTheProjectPolicy: through each agent's real CLI and
// hook, against a PDP that reads no workspace of its own host (a central
// server: paths.project_policy hook) with sessions at FULL, a
// repository whose .toolperm/policy.json denies a command stops it (the
// hook sent the file), and the same command runs in a repository without
// one.
func TestAgentsHonourTheProjectPolicy(t *testing.T) {
	bin := buildPDP(t)
	const made = "made-by-the-model.txt"
	for name, run := range shellAgents(bin) {
		t.Run(name, func(t *testing.T) {
			url := servePDP(t, bin, "PDP_SESSIONS_PERMISSION_LEVEL=FULL", "PDP_PATHS_PROJECT_POLICY=hook")
			guarded, plain := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(guarded, ".toolperm"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(guarded, ".toolperm", "policy.json"), []byte(`{"command_rules": {"touch": "deny"}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			told := run(t, url, guarded, []string{"touch " + made})
			if _, err := os.Stat(filepath.Join(guarded, made)); err == nil {
				t.Fatalf("the project's deny did not hold: the model made %s (told %q)", made, told)
			}
			if len(told) == 1 && !strings.Contains(told[0], "project") {
				t.Fatalf("the model was told %q; want the project's deny", told[0])
			}
			run(t, url, plain, []string{"touch " + made})
			if _, err := os.Stat(filepath.Join(plain, made)); err != nil {
				t.Fatalf("without a project policy the command did not run at FULL: %v", err)
			}
		})
	}
}
