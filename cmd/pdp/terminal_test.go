package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// runTerminal runs the pdp command line in-process and returns its stdout.
func runTerminal(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := rootCommand()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return out.String(), err
}

// askIn makes an ask in a session and returns its decision.
func askIn(t *testing.T, c *client.Client, session, tool string, args map[string]any) client.Decision {
	t.Helper()
	d, err := c.Decide(context.Background(), client.DecideRequest{SessionID: session, Tool: tool, Args: args, Cwd: "/home/me/proj"}, false)
	if err != nil || d.Decision != client.Ask {
		t.Fatalf("%s in %s: %+v %v", tool, session, d, err)
	}
	return d
}

// askRows splits what pdp asks prints into its rows (the header first)
// and, by decision id, the line under an ask that says what allow for the
// session grants.
func askRows(out string) (rows []string, grants map[string]string) {
	rows, under := askLines(out)
	grants = map[string]string{}
	for id, lines := range under {
		for _, l := range lines {
			if strings.HasPrefix(l, "allow for") {
				grants[id] = l
			}
		}
	}
	return rows, grants
}

// askLines splits what pdp asks prints into its rows and, by decision
// id, the lines under each.
func askLines(out string) (rows []string, under map[string][]string) {
	under = map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, " ") && len(rows) > 0 {
			id := strings.Fields(rows[len(rows)-1])[0]
			under[id] = append(under[id], strings.TrimSpace(line))
			continue
		}
		rows = append(rows, line)
	}
	return rows, under
}

func TestTerminalAsksAnswerLevel(t *testing.T) {
	t.Setenv("PDP_TOKEN", "")
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	url := []string{"--url", srv.URL}

	if out, err := runTerminal(t, append([]string{"asks"}, url...)...); err != nil || strings.TrimSpace(out) != "no pending asks" {
		t.Fatalf("no asks: %q %v", out, err)
	}
	status := askIn(t, c, "t1", "shell", map[string]any{"command": "make check"})
	write := askIn(t, c, "t2", "write_file", map[string]any{"path": "src/a.go", "content": "package a"})
	escape := askIn(t, c, "t1", "shell", map[string]any{"command": "say \x1b[2J\u202egone"})
	answered := askIn(t, c, "t1", "shell", map[string]any{"command": "make docs"})
	if _, err := c.Answer(context.Background(), answered.DecisionID, client.DenyAnswer, "desktop"); err != nil {
		t.Fatal(err)
	}

	out, err := runTerminal(t, append([]string{"asks"}, url...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Under an ask allow_session can grant, the line of what it grants.
	lines, grants := askRows(out)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("asks:\n%s", out)
	}
	if want := map[string]string{status.DecisionID: "allow for this session grants: `make check`"}; !maps.Equal(grants, want) {
		t.Fatalf("what allow for the session grants: %q, want %q\n%s", grants, want, out)
	}
	for i, want := range []struct {
		d    client.Decision
		bits []string
	}{
		{status, []string{"t1", "shell.exec", "make check"}},
		{write, []string{"t2", "fs.write", "src/a.go"}},
		{escape, []string{`say \x1b[2J\u202egone`}},
	} {
		if !strings.HasPrefix(lines[i+1], want.d.DecisionID) {
			t.Fatalf("line %d is not %s (oldest first):\n%s", i+1, want.d.DecisionID, out)
		}
		for _, b := range want.bits {
			if !strings.Contains(lines[i+1], b) {
				t.Fatalf("line %d lacks %q:\n%s", i+1, b, out)
			}
		}
	}
	if strings.ContainsAny(out, "\x1b\u202e") || strings.Contains(out, answered.DecisionID) {
		t.Fatalf("a control character or an answered ask in the list:\n%q", out)
	}

	// Answers: a grant for a fingerprint, the server's refusals passed on.
	out, err = runTerminal(t, append([]string{"answer", status.DecisionID, "allow_session"}, url...)...)
	if err != nil || !strings.Contains(out, "allow_session") || !strings.Contains(out, `grant 1 for "make check"`) {
		t.Fatalf("answer: %q %v", out, err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"already answered":               {[]string{"answer", status.DecisionID, "deny"}, "409"},
		"not grantable":                  {[]string{"answer", write.DecisionID, "allow_session"}, "422"},
		"an unknown answer":              {[]string{"answer", write.DecisionID, "allow_forever"}, "want one of allow_once, allow_session, allow_project, deny"},
		"an unknown ask":                 {[]string{"answer", "nope", "deny"}, "404"},
		"an unknown level":               {[]string{"level", "t1", "LOUD"}, "invalid_level"},
		"an unknown session":             {[]string{"level", "nobody", "FULL"}, "404"},
		"an unknown level in lower case": {[]string{"level", "t1", "loud"}, "invalid_level"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runTerminal(t, append(tc.args, url...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
	if out, err := runTerminal(t, append([]string{"answer", escape.DecisionID, "deny"}, url...)...); err != nil || !strings.Contains(out, `\x1b`) {
		t.Fatalf("deny: %q %v", out, err)
	}
	out, _ = runTerminal(t, append([]string{"asks"}, url...)...)
	if lines, _ := askRows(out); len(lines) != 2 || !strings.HasPrefix(lines[1], write.DecisionID) {
		t.Fatalf("after answering two:\n%s", out)
	}

	// The level applies to the session's next decision.
	if out, err := runTerminal(t, append([]string{"level", "t2", "read_write"}, url...)...); err != nil || strings.TrimSpace(out) != "t2: READ_WRITE" {
		t.Fatalf("level: %q %v", out, err)
	}
	d, err := c.Decide(context.Background(), client.DecideRequest{SessionID: "t2", Tool: "write_file", Args: map[string]any{"path": "src/a.go"}, Cwd: "/home/me/proj"}, false)
	if err != nil || d.Decision != client.Allow {
		t.Fatalf("a write after the switch: %+v %v", d, err)
	}
}

// A failure is a message on stderr and a non-zero exit status.
func TestTerminalFailsClearly(t *testing.T) {
	cmd := pdpProcess([]string{"answer", "--url", "http://127.0.0.1:1", "18eca58498b75c1c506d0b40", "deny"})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() == 0 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.HasPrefix(stderr.String(), "pdp: answer 18eca58498b75c1c506d0b40: cannot reach the PDP at http://127.0.0.1:1") {
		t.Fatalf("stderr: %q", stderr.String())
	}
}

func TestTerminalAsksFollow(t *testing.T) {
	t.Setenv("PDP_TOKEN", "")
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	before := askIn(t, c, "f1", "shell", map[string]any{"command": "make check"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	cmd := rootCommand()
	cmd.SetArgs([]string{"asks", "--follow", "--url", srv.URL})
	cmd.SetOut(out)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	waitFor := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.Contains(out.String(), id) {
				return
			}
		}
		t.Fatalf("%s not listed within 5s:\n%s", id, out.String())
	}
	waitFor(before.DecisionID)
	later := askIn(t, c, "f2", "write_file", map[string]any{"path": "x"})
	start := time.Now()
	waitFor(later.DecisionID)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("a new ask took %s to appear", took)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("--follow did not stop")
	}
	if n := strings.Count(out.String(), before.DecisionID); n != 1 {
		t.Fatalf("the first ask is listed %d times:\n%s", n, out.String())
	}
}

// The README's terminal commands run as written against a server with
// the ask and the session they name.
func TestREADMETerminal(t *testing.T) {
	t.Setenv("PDP_TOKEN", "")
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ask := askIn(t, c, "desktop-filesystem", "shell", map[string]any{"command": "make check"})
	block := readmeBlock(t, "### The terminal", "sh")
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		line, _, _ = strings.Cut(line, "#")
		args := strings.Fields(strings.ReplaceAll(line, "18eca58498b75c1c506d0b40", ask.DecisionID))
		if len(args) == 0 || args[0] != "pdp" {
			t.Fatalf("not a pdp command: %q", line)
		}
		args = append(args[1:], "--url", srv.URL)
		if slices.Contains(args, "--follow") {
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			cmd := rootCommand()
			cmd.SetArgs(args)
			cmd.SetOut(io.Discard)
			err := cmd.ExecuteContext(ctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			ran++
			continue
		}
		if out, err := runTerminal(t, args...); err != nil {
			t.Fatalf("%s: %v", line, err)
		} else {
			t.Logf("%s\n%s", line, out)
		}
		ran++
	}
	if ran != 4 {
		t.Fatalf("ran %d commands", ran)
	}
}

// TestTerminalAsksShowTheFlow: under an ask, pdp asks says what it
// means for the session's flow: the Rule of Two's reason for its own
// ask, else the labels allowing the call would give the session.
func TestTerminalAsksShowTheFlow(t *testing.T) {
	t.Setenv("PDP_TOKEN", "")
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ctx := context.Background()
	if _, err := c.Sessions().Create(ctx, client.Session{ID: "fl", PermissionLevel: "FULL", Workspace: "/home/me/proj"}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"curl -sL https://example.com/README", "printenv"} {
		if d, err := c.Decide(ctx, client.DecideRequest{SessionID: "fl", Tool: "shell", Args: map[string]any{"command": cmd}, Cwd: "/home/me/proj"}, false); err != nil || d.Decision != client.Allow {
			t.Fatalf("%s: %+v %v", cmd, d, err)
		}
	}
	stop := askIn(t, c, "fl", "shell", map[string]any{"command": "git push"})
	fetch := askIn(t, c, "other", "shell", map[string]any{"command": "curl -sL https://example.com/x"})
	out, err := runTerminal(t, "asks", "--url", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, under := askLines(out)
	if got := strings.Join(under[stop.DecisionID], "\n"); !strings.HasPrefix(got, "flow: This session read untrusted input (shell curl -sL https://example.com/README, decision ") ||
		!strings.Contains(got, "`git push` would send data out") {
		t.Fatalf("under the flow's ask: %q\n%s", got, out)
	}
	if got := strings.Join(under[fetch.DecisionID], "\n"); got != "flow: allowing it gives the session untrusted_input" {
		t.Fatalf("under an ask that carries a label: %q\n%s", got, out)
	}
}
