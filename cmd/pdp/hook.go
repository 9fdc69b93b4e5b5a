package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/adapters/claudecode"
	"github.com/toolperm/pdp/adapters/hookflow"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/service"
	"github.com/toolperm/pdp/pdp"
)

func hookCommand() *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "Agent-runtime hooks that ask the PDP before every tool call",
	}
	hook.AddCommand(claudeCodeHookCommand())
	return hook
}

type hookFlags struct {
	url, tokenEnv, workspaceDir string
	local                       bool
	timeout, wait               time.Duration
}

// project is the root the calls of a Claude Code session must stay in:
// --workspace, else $CLAUDE_PROJECT_DIR (Claude Code sets it for hooks),
// else "" (not known). A later event's cwd never is: it follows the
// model's `cd /`.
func (f hookFlags) project() string {
	if f.workspaceDir != "" {
		return f.workspaceDir
	}
	return os.Getenv("CLAUDE_PROJECT_DIR")
}

func claudeCodeHookCommand() *cobra.Command {
	var f hookFlags
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Claude Code hook: PreToolUse asks the PDP; PostToolUse records a person's answer in Claude Code",
		Long: `Reads a Claude Code PreToolUse hook event on stdin, asks the PDP (a running
server at --url, or in-process with --local) and prints the hook's answer:

  {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow|deny|ask","permissionDecisionReason":"…"}}

It always exits 0: if the PDP cannot be reached, is slower than --timeout
or answers garbage or an incomplete decision, the answer is deny (a
failing hook would let the tool run). Sub-agent calls (agent_id) are
decided in a child session of the main session. With --wait, an ask is
held at the PDP until a person answers it in the PDP's inbox (then allow
or deny), falling back to Claude Code's own prompt when the wait ends.

The workspace is --workspace, else $CLAUDE_PROJECT_DIR. Against a server
without either, the session's first cwd becomes it. With --local there is
no session to remember a first cwd, so without either every call of a
tool that may touch files is denied.

When PreToolUse answered ask and the person allowed the call in Claude
Code's own prompt, Claude Code runs it and then sends PostToolUse (or
PostToolUseFailure) with the same tool_use_id: the hook records that
outcome on the ask — allow_once, channel claude-code, naming the token —
so the audit trail shows the call ran. PermissionDenied (Claude Code's
rules or auto mode refused the call) records deny. These events print
nothing and never fail; an ask with an outcome already, or a call the
PDP did not ask about, is left as it is. An outcome is a record, apart
from a person's answer: it creates no grant, the ask stays pending in
the PDP's inbox, and --wait never takes it for an answer.

Install it for every tool in .claude/settings.json:

  {"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code"}]}],
            "PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"pdp hook claude-code"}]}]}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ev, err := claudecode.ReadEvent(cmd.InOrStdin())
			if err == nil && ev.Outcome() != "" {
				recordClaudeCodeOutcome(cmd, f, ev)
				return nil
			}
			out := runClaudeCodeHook(cmd, f, ev, err)
			return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
		},
	}
	cmd.Flags().StringVar(&f.url, "url", envOr("PDP_URL", "http://127.0.0.1:8181"), "the PDP's base URL (env PDP_URL)")
	cmd.Flags().StringVar(&f.tokenEnv, "token-env", "PDP_TOKEN", "environment variable holding the dispatcher token")
	cmd.Flags().BoolVar(&f.local, "local", false, "decide in-process with the configured policy instead of asking a server")
	cmd.Flags().String("policies", "", "with --local: policy directory, bundle or URL (default: config's policy.path)")
	// Well above the assessor's timeout (6s by default), so a SMART
	// verdict is not cut off by the hook.
	cmd.Flags().DurationVar(&f.timeout, "timeout", 20*time.Second, "give up (deny) after this long")
	cmd.Flags().DurationVar(&f.wait, "wait", 0, "hold an ask this long for a person's answer at the PDP")
	cmd.Flags().StringVar(&f.workspaceDir, "workspace", "", "the project root calls must stay in (default $CLAUDE_PROJECT_DIR; without either, --local denies file calls and a server keeps the session's first cwd)")
	return cmd
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// runClaudeCodeHook answers a PreToolUse event; it never fails: every
// error (readErr too) becomes a deny answer.
func runClaudeCodeHook(cmd *cobra.Command, f hookFlags, ev claudecode.Event, err error) claudecode.Output {
	if err != nil {
		return claudecode.Deny(err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	var d, reason string
	if f.local {
		d, reason, err = hookLocal(ctx, cmd, f, ev)
	} else {
		d, reason, err = hookServer(ctx, f, ev)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", f.timeout, err)
		}
		return claudecode.Deny(err)
	}
	return claudecode.Answer(d, reason)
}

func hookServer(ctx context.Context, f hookFlags, ev claudecode.Event) (string, string, error) {
	// No client-side timeout: the contexts bound every call, and a --wait
	// may hold a request longer than any fixed timeout.
	httpClient := &http.Client{Transport: completeDecisions{http.DefaultTransport}}
	c := client.New(f.url, client.WithToken(os.Getenv(f.tokenEnv)), client.WithRetries(1, 50*time.Millisecond), client.WithHTTPClient(httpClient))
	// The main session is created with the project as its workspace when
	// the project is known (otherwise the first cwd becomes it), and a
	// sub-agent's session as its child.
	workspace := f.project()
	if workspace == "" {
		workspace = ev.Cwd
	}
	var sessions []client.Session
	if child := ev.ChildSession(); child != "" || workspace != ev.Cwd {
		sessions = append(sessions, client.Session{ID: ev.MainSession(), Workspace: workspace, ExecutionMode: "LOCAL"})
		if child != "" {
			sessions = append(sessions, client.Session{ID: child, ParentSessionID: ev.MainSession()})
		}
	}
	for _, s := range sessions {
		if _, err := c.Sessions().Create(ctx, s); err != nil && !errors.Is(err, client.ErrConflict) {
			return "", "", err
		}
	}
	d, err := c.Decide(ctx, client.DecideRequest{SessionID: ev.Session(), Tool: ev.ToolName, Args: ev.Args(), Cwd: ev.Cwd, ToolUseID: ev.ToolUseID}, false)
	if err != nil {
		return "", "", err
	}
	if d.Decision != client.Ask || f.wait <= 0 {
		return d.Decision, hookReason(d.Reason, d.Rule, d.DecisionID), nil
	}
	waitCtx, cancel := context.WithTimeout(context.Background(), f.wait+5*time.Second)
	defer cancel()
	// Only a person's answer decides here; a runtime's outcome on the ask
	// (answered.Outcome) is a record of what a runtime did, never a
	// permission, so without an answer Claude Code's own prompt asks.
	answered, err := c.Decision(waitCtx, d.DecisionID, f.wait)
	if err != nil || answered.DecisionID != d.DecisionID || answered.Answer == nil || answered.Answer.ReportedBy != "" {
		return client.Ask, hookReason(d.Reason, d.Rule, d.DecisionID), nil
	}
	if a := answered.Answer; a.Allows() {
		return client.Allow, fmt.Sprintf("toolperm: allowed by a person (%s, %s) — decision %s", a.Channel, a.Answer, d.DecisionID), nil
	}
	return client.Deny, fmt.Sprintf("toolperm: denied by a person (%s) — decision %s", answered.Answer.Channel, d.DecisionID), nil
}

// outcomeChannel is the runtime's channel the outcome of an ask shown in
// Claude Code's own prompt is recorded with.
const outcomeChannel = "claude-code"

// recordClaudeCodeOutcome records what an event after the call says
// became of its ask. It is only a record: it prints nothing and never
// fails the hook; a call the PDP did not ask about, or an ask with an
// outcome already, is left as it is, and anything else is said on
// stderr.
func recordClaudeCodeOutcome(cmd *cobra.Command, f hookFlags, ev claudecode.Event) {
	if f.local || ev.ToolUseID == "" {
		return // no server keeps the ask, or nothing names it
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), f.timeout)
	defer cancel()
	c := client.New(f.url, client.WithToken(os.Getenv(f.tokenEnv)), client.WithRetries(1, 50*time.Millisecond))
	_, err := c.RecordOutcome(ctx, ev.ToolUseID, ev.Outcome(), outcomeChannel)
	if err == nil || errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrNotFound) {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "toolperm: could not record %s of %s (%s) at the PDP: %v\n", ev.Outcome(), ev.ToolName, ev.ToolUseID, err)
}

func hookLocal(ctx context.Context, cmd *cobra.Command, f hookFlags, ev claudecode.Event) (string, string, error) {
	workspace := f.project()
	if workspace == "" {
		if !ev.FileFree() {
			return client.Deny, fmt.Sprintf("toolperm: no workspace is set, so %s (a tool that may touch files) is denied: "+
				"pass --workspace <project dir> to `pdp hook claude-code --local` or set CLAUDE_PROJECT_DIR "+
				"(the event's cwd %q is not a workspace: it follows the model's cd)", ev.ToolName, ev.Cwd), nil
		}
		workspace = ev.Cwd // nothing to confine
	}
	cfg, err := loadConfig(cmd)
	if err != nil {
		return "", "", err
	}
	engine, err := service.LocalEngine(ctx, cfg, nil)
	if err != nil {
		return "", "", err
	}
	session := &pdp.SessionTree{
		ID:              ev.MainSession(),
		PermissionLevel: api.Level(ev.Level(cfg.Sessions.PermissionLevel)),
		Mode:            api.Mode(cfg.Sessions.Mode),
		Workspace:       workspace,
	}
	if child := ev.ChildSession(); child != "" {
		session = &pdp.SessionTree{ID: child, PermissionLevel: session.PermissionLevel, Mode: session.Mode, Workspace: session.Workspace, Parent: session}
	}
	d, err := engine.Decide(ctx, pdp.Call{Request: api.DecideRequest{SessionID: session.ID, Tool: ev.ToolName, Args: ev.Args(), Cwd: ev.Cwd}, Session: session})
	if err != nil {
		return "", "", err
	}
	return d.Decision, hookReason(d.Reason, d.Rule, d.DecisionID), nil
}

func hookReason(reason, rule, id string) string {
	return fmt.Sprintf("toolperm: %s (rule %s, decision %s)", reason, rule, id)
}

// completeDecisions hands the client only complete answers of POST
// /v1/decide. The client's typed decode would fill a missing field with
// its zero value (a bare {"decision":"allow"} would read as an allow), so
// the bytes are checked first and replaced by exactly what was checked;
// any other answer is an error, and so a deny.
type completeDecisions struct{ next http.RoundTripper }

// RoundTrip checks the answer of a decide request.
func (t completeDecisions) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/v1/decide") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the PDP's answer: %w", err)
	}
	d, err := hookflow.ParseDecision(raw)
	if err != nil {
		return nil, err
	}
	checked, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the PDP's answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(checked))
	resp.ContentLength = int64(len(checked))
	resp.Header.Del("Content-Length")
	return resp, nil
}
