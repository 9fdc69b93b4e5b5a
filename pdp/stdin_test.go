package pdp_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// Typed input: what a model writes into a running process may reach a
// shell, so every complete line meets the deny floor, command rules and
// path rules, at every level and in every mode, while the level's verdict
// for shell.stdin decides the rest (y, q and keystrokes to a pager).
func TestTypedInputIsJudgedAsTheCommandsItCompletes(t *testing.T) {
	ws := t.TempDir()
	type write struct {
		tool string
		args map[string]any
	}
	codex := func(id int, chars string) write {
		return write{"write_stdin", map[string]any{"session_id": id, "chars": chars, "yield_time_ms": 250}}
	}
	action := func(input string) write {
		return write{"shell", map[string]any{"action": "write_stdin", "input": input}}
	}
	sessions := map[string]pdp.SessionTree{
		"READ_ONLY": {PermissionLevel: api.ReadOnly},
		"FULL":      {PermissionLevel: api.Full},
		"allow-all": {Mode: api.AllowAll},
	}
	cases := []struct {
		name   string
		writes []write // the last one is judged; the ones before are typed first
		rules  map[string]string
		want   string
		rule   string
	}{
		{"a floor command typed", []write{codex(1, "rm -rf ~\n")}, nil, api.Deny, "rm -rf /"},
		{"through the shell tool's write_stdin action", []write{action("rm -rf ~\n")}, nil, api.Deny, "rm -rf /"},
		{"onto a disk", []write{codex(1, "dd if=/dev/zero of=/dev/sda\n")}, nil, api.Deny, "dd onto a disk"},
		{"a carriage return ends a line too", []write{codex(1, "ls\rrm -rf ~\r")}, nil, api.Deny, "rm -rf /"},
		{"split over two writes", []write{codex(7, "rm -rf "), codex(7, "~\n")}, nil, api.Deny, "rm -rf /"},
		{"split over three writes", []write{codex(7, "r"), codex(7, "m -rf /"), codex(7, "\n")}, nil, api.Deny, "rm -rf /"},
		{"erased back to the root", []write{codex(7, "rm -rf /tmpx"), codex(7, "\x7f\x7f\x7f\x7f\n")}, nil, api.Deny, "rm -rf /"},
		{"a killed line is gone", []write{codex(7, "rm -rf /tmp/x"), codex(7, "\x15ls\n")}, nil, api.Allow, ""},
		// A program that applies no editing (a pipe; ^H to a terminal,
		// which erases on DEL) runs the text as typed.
		{"^H erases nothing in a terminal", []write{codex(1, "rm -rf ~;\b\b\b\b\b\b\b\b\b\n")}, nil, api.Deny, "rm -rf /"},
		{"^U kills nothing in a pipe", []write{codex(1, "rm -rf ~ #\x15\n")}, nil, api.Deny, "rm -rf /"},
		{"^C neither", []write{codex(1, "rm -rf ~;\x03\n")}, nil, api.Deny, "rm -rf /"},
		// The held line is the session's: words naming a process are the
		// model's to choose.
		{"an extra process argument", []write{codex(1, "dd if=/dev/zero of=/dev/s"), {"write_stdin", map[string]any{"session_id": 1, "chars": "da\n", "pid": 1}}}, nil, api.Deny, "dd onto a disk"},
		{"a process id spelled as a string", []write{codex(1, "rm -rf "), {"write_stdin", map[string]any{"session_id": "1", "chars": "/\n"}}}, nil, api.Deny, "rm -rf /"},
		{"a path rule", []write{codex(1, "cat .env\n")}, nil, api.Deny, ".env"},
		{"a command rule", []write{codex(1, "git status\ngit push origin main\n")}, map[string]string{"git push": "deny"}, api.Deny, "git push"},
		{"a history expansion may be any command", []write{codex(1, "!rm\n")}, nil, api.Ask, "rm -rf /"},
		{"so may a cursor key", []write{codex(1, "\x1b[A\n")}, nil, api.Ask, "rm -rf /"},
		{"an answer to a prompt", []write{codex(1, "y\n")}, nil, api.Allow, ""},
		{"a pager's q", []write{codex(1, "q")}, nil, api.Allow, ""},
		{"a control character", []write{codex(1, "\x03")}, nil, api.Allow, ""},
		{"a cursor key to a pager", []write{codex(1, "\x1b[B")}, nil, api.Allow, ""},
		{"another process's partial line is read with it", []write{codex(7, "rm -rf "), codex(8, "/\n")}, nil, api.Deny, "rm -rf /"},
		{"an ordinary line", []write{codex(1, "go test ./...\n")}, nil, api.Allow, ""},
	}
	for _, c := range cases {
		for name, s := range sessions {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				e := newEngine(t, pdp.Components{})
				s := s
				s.Workspace = ws
				s.CommandRules = c.rules
				var d api.Decision
				for _, w := range c.writes {
					d = decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: w.tool, Args: w.args, Cwd: ws}, Session: &s})
				}
				if d.Decision != c.want || (c.rule != "" && d.Rule != c.rule) {
					t.Fatalf("got %s/%s (%s), want %s/%s", d.Decision, d.Rule, d.Reason, c.want, c.rule)
				}
				if d.Capability == nil || *d.Capability != "shell.stdin" {
					t.Errorf("capability = %v, want shell.stdin", d.Capability)
				}
				if d.Grantable || d.Fingerprint != nil {
					t.Errorf("a write is never grantable: %+v", d)
				}
			})
		}
	}
}

// A simulation or a refused request holds nothing: only a decision
// holds a partial line for the process's next write.
func TestTypedInputHeldOnlyByDecisions(t *testing.T) {
	ws := t.TempDir()
	e := newEngine(t, pdp.Components{})
	s := &pdp.SessionTree{PermissionLevel: api.Full, Workspace: ws}
	call := func(chars any) pdp.Call {
		return pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "write_stdin", Args: map[string]any{"session_id": 3, "chars": chars}, Cwd: ws}, Session: s}
	}
	if _, err := e.Simulate(context.Background(), call("rm -rf "), false); err != nil {
		t.Fatal(err)
	}
	if d := decide(t, e, call("/\n")); d.Decision != api.Allow {
		t.Fatalf("a simulated write was held: %s/%s (%s)", d.Decision, d.Rule, d.Reason)
	}
	_, err := e.Decide(context.Background(), call(42))
	var bad *pdp.Error
	if !errors.As(err, &bad) || bad.Code != "invalid_args" {
		t.Fatalf("chars of another type: %v, want invalid_args", err)
	}
	if d := decide(t, e, call("rm -rf ")); d.Decision != api.Allow {
		t.Fatalf("a partial line runs nothing yet: %s/%s (%s)", d.Decision, d.Rule, d.Reason)
	}
	if d := decide(t, e, call("/\n")); d.Decision != api.Deny || d.Rule != "rm -rf /" {
		t.Fatalf("the held line completed: %s/%s (%s)", d.Decision, d.Rule, d.Reason)
	}
	if d := decide(t, e, call("ls\n")); d.Decision != api.Allow {
		t.Fatalf("a completed line is no longer held: %s/%s (%s)", d.Decision, d.Rule, d.Reason)
	}
}
