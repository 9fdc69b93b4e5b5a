package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/pdp"
)

type mcpProxyFlags struct {
	url, token, session, name, workspace string
	wait, timeout                        time.Duration
}

func mcpProxyCommand() *cobra.Command {
	var f mcpProxyFlags
	cmd := &cobra.Command{
		Use:   "mcp-proxy --session ID --name SERVER [flags] -- CMD [ARGS...]",
		Short: "Run an MCP server over stdio and ask the PDP before every tool call",
		Long: `Runs the MCP server CMD over stdio and sits between it and the MCP client
(this process's stdin and stdout). Every tools/call is decided by the PDP
at --url as the tool mcp__SERVER__<tool> with the call's arguments, the
session --session and the workspace as cwd, so the rules mcp.SERVER.<tool>
and mcp.SERVER.*, the dangerous list (an MCP tool without a rule is
denied) and path confinement apply:

  allow  the call is relayed to the server
  deny   the client gets a tool result with isError: true and the reason;
         the server never sees the call
  ask    the call waits up to --wait for a person's answer (the PDP's
         inbox, pdp answer); allowed, it is relayed; denied or not
         answered, it is refused as a deny

A decision that cannot be had (the PDP unreachable, an error answer) is a
deny. Everything else — initialize, lists, notifications, progress,
cancellation, the server's own requests and their answers — is relayed
byte for byte, in order. A tool call waiting for its decision holds up
nothing else; a notifications/cancelled for it drops it. When the client
closes stdin, the decisions under way finish, the server's stdin is
closed and its output is relayed until it exits, so every request sent
gets its answer. The exit status is the server's.

The session is created on the first tool call with --workspace (default:
the working directory) as its workspace; an existing session with the
same id is used as it is (create it first, with a person's token, to give
it rules: a dispatcher token may add deny rules only).

The relay is plain newline-delimited JSON-RPC, not an MCP SDK: only
tools/call is read, so messages the proxy does not gate reach the other
side exactly as sent, whatever protocol version the two speak. Lines that
are not one JSON value, and objects with a key twice (compared without
case, as some decoders match keys), are refused with a JSON-RPC error
rather than relayed: a lenient server could read them as another call
than the one decided. A batch holding a tool call is split into single
messages.

  pdp mcp-proxy --session desktop --name filesystem --workspace ~/proj -- \
    npx -y @modelcontextprotocol/server-filesystem ~/proj`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return errors.New("put the MCP server's command after --: pdp mcp-proxy [flags] -- CMD [ARGS...]")
			}
			return runMCPProxy(cmd, f, args)
		},
	}
	cmd.Flags().StringVar(&f.url, "url", "http://127.0.0.1:8181", "the PDP's base URL")
	cmd.Flags().StringVar(&f.token, "token", "", "dispatcher token (default: $PDP_TOKEN)")
	cmd.Flags().StringVar(&f.session, "session", "", "the PDP session the calls are decided in (required)")
	cmd.Flags().StringVar(&f.name, "name", "", "the server's name in capabilities: mcp.NAME.<tool> (required; [a-z0-9_-], no __)")
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "the directory calls must stay in (default: the working directory)")
	cmd.Flags().DurationVar(&f.wait, "wait", 30*time.Second, "how long an ask waits for a person's answer (0: an ask is refused at once)")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Second, "how long a decision may take before the call is refused")
	_ = cmd.MarkFlagRequired("session")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// serverName is what --name may be: one capability segment that the
// policy's mcp__SERVER__tool mapping splits back unchanged.
var serverName = regexp.MustCompile(`^[a-z0-9_-]+$`)

func (f *mcpProxyFlags) check() error {
	if !pdp.ValidSessionID(f.session) {
		return fmt.Errorf("--session %q: a session id is 1-128 characters of [A-Za-z0-9._:-]", f.session)
	}
	if !serverName.MatchString(f.name) || strings.Contains(f.name, "__") {
		return fmt.Errorf("--name %q: use lower-case letters, digits, - and _ (not __), e.g. filesystem", f.name)
	}
	if f.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("the working directory (the default --workspace): %w", err)
		}
		f.workspace = wd
	}
	abs, err := filepath.Abs(f.workspace)
	if err != nil {
		return fmt.Errorf("--workspace: %w", err)
	}
	f.workspace = abs
	if f.token == "" {
		f.token = os.Getenv("PDP_TOKEN")
	}
	return nil
}

func runMCPProxy(cmd *cobra.Command, f mcpProxyFlags, argv []string) error {
	if err := f.check(); err != nil {
		return err
	}
	server := exec.Command(argv[0], argv[1:]...)
	server.Stderr = cmd.ErrOrStderr()
	toServer, err := server.StdinPipe()
	if err != nil {
		return err
	}
	fromServer, err := server.StdoutPipe()
	if err != nil {
		return err
	}
	if err := server.Start(); err != nil {
		return fmt.Errorf("starting the MCP server: %w", err)
	}
	// The client stops a stdio server with SIGTERM after closing stdin:
	// pass it on and leave when the server does.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		for s := range signals {
			_ = server.Process.Signal(s)
		}
	}()

	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	// No client-side timeout: contexts bound every request, and an ask's
	// wait is longer than any fixed timeout.
	httpClient := &http.Client{Transport: completeDecisions{http.DefaultTransport}}
	p := &mcpProxy{
		flags:    f,
		pdp:      client.New(f.url, client.WithToken(f.token), client.WithHTTPClient(httpClient)),
		ctx:      ctx,
		toServer: toServer,
		toClient: cmd.OutOrStdout(),
		log:      cmd.ErrOrStderr(),
		pending:  map[string]*gatedCall{},
	}
	go p.relayClient(cmd.InOrStdin())
	relayErr := p.relayServer(fromServer)
	waitErr := server.Wait()
	if relayErr != nil {
		return fmt.Errorf("relaying the MCP server's output: %w", relayErr)
	}
	if waitErr != nil {
		return fmt.Errorf("the MCP server %s: %w", argv[0], waitErr)
	}
	return nil
}

// mcpProxy relays one MCP stdio session and gates its tool calls.
type mcpProxy struct {
	flags mcpProxyFlags
	pdp   *client.Client
	ctx   context.Context

	serverMu sync.Mutex // one message at a time to the server
	toServer io.WriteCloser
	clientMu sync.Mutex // one message at a time to the client
	toClient io.Writer
	logMu    sync.Mutex
	log      io.Writer

	// pending are the tool calls being decided, by request id; deciding
	// a call and forwarding it happen under pendingMu, so a cancellation
	// either drops the call or reaches the server after it.
	pendingMu sync.Mutex
	pending   map[string]*gatedCall
	deciding  sync.WaitGroup

	sessionMu    sync.Mutex
	sessionReady bool
}

// gatedCall is a tool call waiting for its decision.
type gatedCall struct {
	cancel    context.CancelFunc
	cancelled bool
}

// relayClient reads the client's messages in order until stdin ends,
// then lets the decisions under way finish and closes the server's stdin.
func (p *mcpProxy) relayClient(in io.Reader) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			p.fromClient(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.logf("reading the client: %v", err)
			}
			break
		}
	}
	p.deciding.Wait()
	p.serverMu.Lock()
	defer p.serverMu.Unlock()
	_ = p.toServer.Close()
}

// relayServer copies the server's messages to the client as they are,
// line by line, so none interleaves with an answer of the proxy.
func (p *mcpProxy) relayServer(out io.Reader) error {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if werr := p.writeClient(line); werr != nil {
				_, _ = io.Copy(io.Discard, r) // let the server finish
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// fromClient handles one line from the client.
func (p *mcpProxy) fromClient(line []byte) {
	m := classifyLine(line)
	switch m.kind {
	case rpcPass:
		p.noteCancellations(m)
		p.writeServer(line)
	case rpcToolCall:
		p.gate(m, line)
	case rpcBatch:
		for _, e := range m.batch {
			p.fromClient(append(append([]byte{}, e...), '\n'))
		}
	case rpcUnparsable:
		p.logf("refused a line that is not one JSON-RPC message (%s)", m.why)
		_ = p.writeClient(rpcError(nil, -32700, "Parse error: "+m.why))
	case rpcAmbiguous:
		p.logf("refused an ambiguous message: %s", m.why)
		_ = p.writeClient(rpcError(nil, -32600, "Invalid Request: "+m.why))
	}
}

// noteCancellations drops the tool calls still being decided that the
// client cancels (a batch may cancel several); the cancellation itself
// is relayed like any notification.
func (p *mcpProxy) noteCancellations(m rpcMessage) {
	msgs := []rpcMessage{m}
	if m.batch != nil {
		msgs = msgs[:0]
		for _, e := range m.batch {
			msgs = append(msgs, classifyObject(e))
		}
	}
	for _, m := range msgs {
		id := cancelledRequest(m)
		if id == nil {
			continue
		}
		p.pendingMu.Lock()
		if c, ok := p.pending[requestIDKey(id)]; ok {
			c.cancelled = true
			c.cancel()
		}
		p.pendingMu.Unlock()
	}
}

// gate decides a tool call off the reading goroutine, so a call waiting
// for a person holds up no other message, and then relays it or answers
// it with the reason it may not run.
func (p *mcpProxy) gate(m rpcMessage, line []byte) {
	ctx, cancel := context.WithCancel(p.ctx)
	c := &gatedCall{cancel: cancel}
	key := ""
	if m.id != nil {
		key = requestIDKey(m.id)
		p.pendingMu.Lock()
		p.pending[key] = c
		p.pendingMu.Unlock()
	}
	p.deciding.Add(1)
	go func() {
		defer p.deciding.Done()
		defer cancel()
		call, err := parseToolCall(line, m.params)
		allowed, reason := false, ""
		if err != nil {
			reason = "toolperm: the call was not run: " + err.Error()
		} else {
			allowed, reason = p.decide(ctx, call)
		}
		p.pendingMu.Lock()
		defer p.pendingMu.Unlock()
		if m.id != nil && p.pending[key] == c {
			delete(p.pending, key)
		}
		switch {
		case c.cancelled:
			p.logf("tools/call %s: cancelled by the client before its decision", call.name)
		case allowed:
			p.writeServer(line)
		case m.id != nil:
			_ = p.writeClient(toolError(m.id, reason))
		default:
			p.logf("dropped a tools/call notification (it has no id to answer): %s", reason)
		}
	}()
}

// decide asks the PDP about one call, waiting for a person when it asks;
// the call may run only on an allow. The reason says why not.
func (p *mcpProxy) decide(ctx context.Context, call toolCall) (bool, string) {
	tool := "mcp__" + p.flags.name + "__" + call.name
	refuse := func(err error) (bool, string) {
		p.logf("tools/call %s: no decision, refused: %v", call.name, err)
		return false, fmt.Sprintf("toolperm: the call was not run: no decision from the PDP (%v)", err)
	}
	if err := p.ensureSession(ctx); err != nil {
		return refuse(fmt.Errorf("creating session %s: %w", p.flags.session, err))
	}
	dctx, cancel := context.WithTimeout(ctx, p.flags.timeout)
	defer cancel()
	d, err := p.pdp.Decide(dctx, client.DecideRequest{SessionID: p.flags.session, Tool: tool, Args: call.args, Cwd: p.flags.workspace}, false)
	if err != nil {
		return refuse(err)
	}
	p.logf("tools/call %s: %s (rule %s, decision %s)", call.name, d.Decision, d.Rule, d.DecisionID)
	switch d.Decision {
	case client.Allow:
		return true, ""
	case client.Ask:
		return p.awaitPerson(ctx, call, d)
	}
	return false, fmt.Sprintf("toolperm: denied: %s (rule %s, decision %s)", d.Reason, d.Rule, d.DecisionID)
}

// awaitPerson parks on the ask until a person answers or --wait ends;
// the server caps one wait (server.max_wait), so it asks again while
// time is left.
func (p *mcpProxy) awaitPerson(ctx context.Context, call toolCall, d client.Decision) (bool, string) {
	unanswered := fmt.Sprintf("toolperm: not run: no one answered within %s. %s (rule %s, decision %s)", p.flags.wait, d.Reason, d.Rule, d.DecisionID)
	deadline := time.Now().Add(p.flags.wait)
	for {
		left := time.Until(deadline).Truncate(time.Millisecond)
		if left <= 0 {
			return false, unanswered
		}
		asked := time.Now()
		wctx, cancel := context.WithTimeout(ctx, left+p.flags.timeout)
		ev, err := p.pdp.Decision(wctx, d.DecisionID, left)
		cancel()
		if err == nil && ev.DecisionID != d.DecisionID {
			err = fmt.Errorf("the PDP answered with decision %q", ev.DecisionID)
		}
		if err != nil {
			p.logf("tools/call %s: waiting for decision %s: %v", call.name, d.DecisionID, err)
			return false, fmt.Sprintf("toolperm: not run: waiting for a person's answer failed (%v). %s (rule %s, decision %s)", err, d.Reason, d.Rule, d.DecisionID)
		}
		if ev.Answer == nil {
			// A server that ends waits early is not asked in a busy loop.
			if pause := time.Second - time.Since(asked); pause > 0 {
				select {
				case <-time.After(pause):
				case <-ctx.Done():
				}
			}
			continue
		}
		// Only a person's answer decides; a runtime's outcome on the ask
		// (ev.Outcome) is a record, never a permission.
		a := ev.Answer
		p.logf("tools/call %s: answered %s (%s), decision %s", call.name, a.Answer, a.Channel, d.DecisionID)
		if a.Allows() {
			return true, ""
		}
		if a.ReportedBy != "" {
			return false, fmt.Sprintf("toolperm: not run: a runtime's report is no person's answer. %s (rule %s, decision %s)", d.Reason, d.Rule, d.DecisionID)
		}
		return false, fmt.Sprintf("toolperm: denied by a person (%s) — decision %s", a.Channel, d.DecisionID)
	}
}

// ensureSession creates the session on the first call, with the
// workspace; one that exists already is used as it is. A failure is
// tried again on the next call.
func (p *mcpProxy) ensureSession(ctx context.Context) error {
	p.sessionMu.Lock()
	defer p.sessionMu.Unlock()
	if p.sessionReady {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.flags.timeout)
	defer cancel()
	_, err := p.pdp.Sessions().Create(ctx, client.Session{ID: p.flags.session, Workspace: p.flags.workspace, ExecutionMode: "LOCAL"})
	if err != nil && !errors.Is(err, client.ErrConflict) {
		return err
	}
	p.sessionReady = true
	return nil
}

func (p *mcpProxy) writeServer(line []byte) {
	p.serverMu.Lock()
	defer p.serverMu.Unlock()
	if _, err := p.toServer.Write(line); err != nil {
		p.logf("writing to the MCP server: %v", err)
	}
}

func (p *mcpProxy) writeClient(line []byte) error {
	p.clientMu.Lock()
	defer p.clientMu.Unlock()
	_, err := p.toClient.Write(line)
	return err
}

func (p *mcpProxy) logf(format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.log, "pdp mcp-proxy: "+format+"\n", args...)
}
