package pdp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// A shell command is judged by what it does, through the engine with a
// real workspace: what only reads runs at READ_ONLY, what writes inside
// the workspace at READ_WRITE, and a word outside the workspace, a
// program or option the table does not describe, stays shell.exec.
func TestShellCommandsJudgedByTheirEffects(t *testing.T) {
	ws := newWorkspace(t, "app.py", "src/a.py", ".env", "notes.txt")
	// A link in the workspace to a file outside is outside.
	if err := os.Symlink("/etc/hostname", filepath.Join(ws, "host")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	cases := []struct {
		cmd   string
		level api.Level
		want  string
		rule  string
	}{
		{"nl -ba app.py | sed -n '1,80p'", api.ReadOnly, api.Allow, "fs.read"},
		{"sed -n 1,5p app.py", api.ReadOnly, api.Allow, "fs.read"},
		{"cd " + ws + " && grep -n \"import os\" src/a.py | head -20", api.ReadOnly, api.Allow, "fs.read"},
		{"cd src && cat a.py", api.ReadOnly, api.Allow, "fs.read"},
		{"find . -name '*.py' -type f", api.ReadOnly, api.Allow, "fs.read"},
		{"git status && git log --oneline -5", api.ReadOnly, api.Allow, "fs.read"},
		{"git branch --show-current", api.ReadOnly, api.Allow, "fs.read"},
		{"cd src && git status", api.ReadOnly, api.Ask, "shell.exec"},
		{"src/cat app.py", api.ReadOnly, api.Ask, "shell.exec"},
		{"grep -R x .", api.ReadOnly, api.Ask, "shell.exec"},
		{"echo $ANTHROPIC_API_KEY", api.ReadOnly, api.Ask, "shell.exec"},
		{"rg -n foo -g\"*.py\"", api.ReadOnly, api.Allow, "fs.read"},
		{"pwd", api.ReadOnly, api.Allow, "fs.read"},
		{"python --version", api.ReadOnly, api.Allow, "fs.read"},
		{"sed -n 1,5p app.py", api.Smart, api.Allow, "fs.read"},
		// Writes inside the workspace: READ_WRITE, not READ_ONLY.
		{"cat <<'EOF' > new.py\nprint(1)\nEOF", api.ReadWrite, api.Allow, "fs.write"},
		{"sed -i 's/x/y/' app.py", api.ReadWrite, api.Allow, "fs.write"},
		{"mkdir -p build && touch build/x", api.ReadWrite, api.Allow, "fs.write"},
		{"sed -i 's/x/y/' app.py", api.ReadOnly, api.Ask, "shell.exec"},
		// Outside, through a link, after cd, as a redirection.
		{"cat ../../etc/passwd", api.ReadOnly, api.Ask, "shell.exec"},
		{"cat /etc/hostname", api.ReadOnly, api.Ask, "shell.exec"},
		{"cat host", api.ReadOnly, api.Ask, "shell.exec"},
		{"cd / && cat etc/passwd", api.ReadOnly, api.Ask, "shell.exec"},
		{"cat < /etc/hostname", api.ReadOnly, api.Ask, "shell.exec"},
		{"echo x > /tmp/x", api.ReadWrite, api.Ask, "shell.exec"},
		{"cp app.py /tmp/", api.ReadWrite, api.Ask, "shell.exec"},
		{"cd $HOME && cat .bashrc", api.ReadOnly, api.Ask, ""},
		// A toolchain's library is a place the shipped path rules let
		// reads through: the Read tool and a shell read alike.
		{"sed -n 1,40p /usr/lib/python3.11/wsgiref/handlers.py", api.ReadOnly, api.Allow, "fs.read"},
		{"grep -rn 'func Join' /usr/local/go/src/path/filepath", api.ReadOnly, api.Allow, "fs.read"},
		{"echo x >> /usr/lib/python3.11/site.py", api.ReadWrite, api.Ask, "shell.exec"},
		{"cp /usr/include/stdio.h .", api.ReadWrite, api.Ask, "shell.exec"},
		// Path rules hold first.
		{"cat .env", api.ReadOnly, api.Deny, ".env"},
		// A pattern is text, not a path; but a word that splits into a
		// pattern and a file (grep {^,.env} runs grep ^ .env) is not
		// known to be text, at FULL too.
		{"grep -rn .env src", api.Full, api.Allow, ""},
		{"grep -rn .env src", api.ReadOnly, api.Allow, "fs.read"},
		{"grep {^,.env}", api.Full, api.Ask, ""},
		{"rg {^,.env}", api.Full, api.Ask, ""},
		{"jq -R {.,.env}", api.Full, api.Ask, ""},
		{"grep --context x .env", api.Full, api.Deny, ".env"},
		// Code stays code (an ask, whichever step asks first).
		{"sed -n '1e id' app.py", api.ReadOnly, api.Ask, "shell.exec"},
		{"find . -exec id \\;", api.ReadOnly, api.Ask, "shell.exec"},
		{"git diff --output=x", api.ReadOnly, api.Ask, "shell.exec"},
		{"python3 repro.py", api.ReadWrite, api.Ask, "shell.exec"},
		{"echo x | python3", api.ReadWrite, api.Ask, "shell.exec"},
		{"cat app.py | sh", api.ReadWrite, api.Ask, ""},
		{"cat $(echo app.py)", api.ReadOnly, api.Ask, ""},
	}
	for _, c := range cases {
		t.Run(string(c.level)+"/"+c.cmd, func(t *testing.T) {
			s := &pdp.SessionTree{Workspace: ws, PermissionLevel: c.level}
			d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": c.cmd}, Cwd: ws}, Session: s})
			if d.Decision != c.want || (c.rule != "" && d.Rule != c.rule) {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Rule, d.Reason, c.want, c.rule)
			}
			if d.Capability == nil || *d.Capability != "shell.exec" {
				t.Errorf("the capability is %v: the call stays shell.exec", d.Capability)
			}
		})
	}
}

// data.shell.effects false restores the first source document's
// READ_ONLY: every shell command asks.
func TestTheEffectsSwitchRestoresTheSeed(t *testing.T) {
	ws := t.TempDir()
	off := newEngineWithPolicy(t, builtinPolicyWith(t, func(data map[string]any) {
		data["shell"].(map[string]any)["effects"] = false
	}), pdp.Components{})
	on := newEngine(t, pdp.Components{})
	for name, c := range map[string]struct {
		e    *pdp.Engine
		want string
	}{"on": {on, api.Allow}, "off": {off, api.Ask}} {
		s := &pdp.SessionTree{Workspace: ws}
		d := decide(t, c.e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "Bash", Args: map[string]any{"command": "cat app.py"}, Cwd: ws}, Session: s})
		if d.Decision != c.want {
			t.Fatalf("%s: got %s/%s (%s), want %s", name, d.Decision, d.Rule, d.Reason, c.want)
		}
	}
}

// The shipped places of toolchains' libraries: read, never written.
func TestToolchainLibrariesAreReadable(t *testing.T) {
	ws := t.TempDir()
	e := newEngine(t, pdp.Components{Workspace: paths.Resolver{FollowSymlinks: true}})
	for _, c := range []struct {
		tool, path, want, rule string
	}{
		{"Read", "/usr/lib/python3.12/wsgiref/handlers.py", api.Allow, "fs.read"},
		{"Read", "/usr/local/go/src/fmt/print.go", api.Allow, "fs.read"},
		{"Read", "/home/dev/go/pkg/mod/golang.org/x/text@v0.3.0/doc.go", api.Allow, "fs.read"},
		{"Read", "/home/dev/.cargo/registry/src/index/serde-1.0/src/lib.rs", api.Allow, "fs.read"},
		{"Read", "/usr/include/stdio.h", api.Allow, "fs.read"},
		{"Write", "/usr/lib/python3.12/site.py", api.Deny, "OUTSIDE_WORKSPACE"},
		{"Read", "/home/dev/.cargo/credentials.toml", api.Deny, "OUTSIDE_WORKSPACE"},
		{"Read", "/usr/lib/ssl/private/key.pem", api.Deny, "OUTSIDE_WORKSPACE"},
	} {
		t.Run(c.tool+" "+c.path, func(t *testing.T) {
			s := &pdp.SessionTree{Workspace: ws, PermissionLevel: api.ReadWrite}
			d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: c.tool, Args: map[string]any{"file_path": c.path, "content": "x"}, Cwd: ws}, Session: s})
			if d.Decision != c.want || d.Rule != c.rule {
				t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Rule, d.Reason, c.want, c.rule)
			}
		})
	}
}
