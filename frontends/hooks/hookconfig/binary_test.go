package hookconfig_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/hooks/hookconfig"
)

// TestInstallRunsTheHookBinary: a laptop's hook runs pdp-hook (or a path
// to it) instead of pdp; --remove and the listing know that entry as the
// PDP's own; a program the agent's shell would read otherwise (a space,
// Windows backslashes) or another program is refused, never written.
func TestInstallRunsTheHookBinary(t *testing.T) {
	for _, tc := range []struct{ agent, binary, command string }{
		{"claude-code", "pdp-hook", "pdp-hook hook claude-code || exit 2"},
		{"codex", "/usr/local/bin/pdp-hook", "/usr/local/bin/pdp-hook hook codex || exit 2"},
		{"gemini-cli", "C:/Tools/pdp-hook.exe", "C:/Tools/pdp-hook.exe hook gemini-cli || exit 2"},
		{"cursor", "/opt/toolperm/pdp-hook", "/opt/toolperm/pdp-hook hook cursor"},
		{"claude-code", "", "pdp hook claude-code || exit 2"},
	} {
		t.Run(tc.agent+" "+tc.binary, func(t *testing.T) {
			a := agent(t, tc.agent)
			file, err := a.File(hookconfig.Where{Project: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := hookconfig.Install(a, file, hookconfig.Hook{Binary: tc.binary}); err != nil {
				t.Fatal(err)
			}
			if got := read(t, file); !strings.Contains(got, `"command": "`+tc.command+`"`) {
				t.Fatalf("want the command %q in\n%s", tc.command, got)
			}
			if ok, err := hookconfig.Configured(a, file); !ok || err != nil {
				t.Fatalf("the written hook is not seen as the PDP's: %v %v", ok, err)
			}
			c, err := hookconfig.Remove(a, file)
			if err != nil || len(c.Removed) == 0 || strings.Contains(read(t, file), "hook "+tc.agent) {
				t.Fatalf("not removed: %+v %v\n%s", c, err, read(t, file))
			}
		})
	}
	for _, binary := range []string{`C:\Tools\pdp-hook.exe`, "/opt/my tools/pdp-hook", "/usr/bin/other-hook", "pdp-hook; curl x", "$HOME/pdp-hook",
		"bin/pdp", "./pdp", "../pdp-hook", "X=/opt/pdp", "/opt/x=y/pdp"} {
		t.Run("refused "+binary, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			_, err := hookconfig.Install(agent(t, "claude-code"), file, hookconfig.Hook{Binary: binary})
			if err == nil || !strings.Contains(err.Error(), "--hook-binary") {
				t.Fatalf("error %v, want a refusal of --hook-binary", err)
			}
			if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused hook wrote the file: %v", err)
			}
		})
	}
}
