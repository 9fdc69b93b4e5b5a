// Command dispatcher is an agent runtime's tool dispatcher that embeds
// the PDP's decision: before it runs a tool call it asks the PDP; an
// allow runs the call, a deny refuses it with the reason, and an ask
// waits for a person's answer (the console's inbox, or `pdp asks` and
// `pdp answer` in a terminal). Any error is a deny: the call never runs
// without an allow.
//
// With `go run ./cmd/pdp serve` running:
//
//	go run ./examples/dispatcher --url http://127.0.0.1:8181
//	pdp asks                 # in another terminal: the shell command waits here
//	pdp answer ID allow_once
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/toolperm/pdp/client"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.url, "url", "http://127.0.0.1:8181", "the PDP's base URL")
	flag.StringVar(&cfg.token, "token", "", "dispatcher token (default: $PDP_TOKEN)")
	flag.StringVar(&cfg.session, "session", "example-dispatcher", "the session the calls are decided in")
	flag.DurationVar(&cfg.wait, "wait", 60*time.Second, "how long an ask waits for a person's answer")
	flag.Parse()
	if cfg.token == "" {
		cfg.token = os.Getenv("PDP_TOKEN")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dispatcher:", err)
		os.Exit(1)
	}
}

type config struct {
	url, token, session string
	wait                time.Duration
}

// run dispatches three calls of a pretend agent: a read in the workspace
// (READ_ONLY allows it), a read outside it (always denied) and a shell
// command (READ_ONLY asks a person).
func run(ctx context.Context, cfg config, out io.Writer) error {
	workspace, err := os.Getwd()
	if err != nil {
		return err
	}
	d := dispatcher{
		// No client timeout: an ask's wait is long; each request has a context.
		pdp:       client.New(cfg.url, client.WithToken(cfg.token), client.WithHTTPClient(&http.Client{})),
		session:   cfg.session,
		workspace: workspace,
		wait:      cfg.wait,
		out:       out,
	}
	// The session carries the workspace no call may leave; one that
	// exists already (an earlier run) is used as it is.
	_, err = d.pdp.Sessions().Create(ctx, client.Session{ID: cfg.session, Workspace: workspace})
	if err != nil && !errors.Is(err, client.ErrConflict) {
		return fmt.Errorf("creating the session: %w", err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "go.mod"}},
		{"read_file", map[string]any{"path": "/etc/passwd"}},
		{"shell", map[string]any{"command": "make check"}},
	}
	for _, c := range calls {
		result, err := d.dispatch(ctx, c.tool, c.args)
		if err != nil {
			result = "not run: " + err.Error()
		}
		fmt.Fprintf(out, "%s %v\n  → %s\n", c.tool, c.args, result)
	}
	return nil
}

// dispatcher runs tool calls the PDP allows.
type dispatcher struct {
	pdp       *client.Client
	session   string
	workspace string
	wait      time.Duration
	out       io.Writer
}

// dispatch asks the PDP about one call and runs it only on an allow.
func (d dispatcher) dispatch(ctx context.Context, tool string, args map[string]any) (string, error) {
	decideCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	dec, err := d.pdp.Decide(decideCtx, client.DecideRequest{SessionID: d.session, Tool: tool, Args: args, Cwd: d.workspace}, false)
	if err != nil {
		return "", fmt.Errorf("no decision: %w", err) // fail closed
	}
	switch dec.Decision {
	case client.Allow:
		return runTool(tool, args)
	case client.Deny:
		return "", fmt.Errorf("denied: %s", dec.Reason)
	}
	// An ask: park on the decision until a person answers or the wait
	// ends (the server caps one wait at its server.max_wait).
	fmt.Fprintf(d.out, "waiting up to %s for a person: pdp answer %s allow_once\n", d.wait, dec.DecisionID)
	waitCtx, cancel := context.WithTimeout(ctx, d.wait+10*time.Second)
	defer cancel()
	ev, err := d.pdp.Decision(waitCtx, dec.DecisionID, d.wait)
	switch {
	case err != nil:
		return "", fmt.Errorf("waiting for an answer: %w", err)
	case ev.Answer == nil:
		// A runtime's outcome (ev.Outcome) is no answer: it never runs a call.
		return "", fmt.Errorf("no answer within %s: %s", d.wait, dec.Reason)
	case ev.Answer.Allows():
		return runTool(tool, args)
	}
	return "", fmt.Errorf("denied by a person (%s)", ev.Answer.Channel)
}

// runTool stands for the runtime's own tools.
func runTool(tool string, args map[string]any) (string, error) {
	return fmt.Sprintf("ran %s", tool), nil
}
