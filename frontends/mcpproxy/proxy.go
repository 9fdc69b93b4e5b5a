// Package mcpproxy relays one MCP session over stdio between a client and
// the server it starts, and asks the PDP before every tools/call: the
// call reaches the server only on an allow (a person's allow, for an
// ask). Everything else is relayed byte for byte, in order. The relay is
// plain newline-delimited JSON-RPC (jsonrpc.go), not an MCP SDK: only
// tools/call is read.
package mcpproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/pdp"
)

// Config is one proxy's settings.
type Config struct {
	// PDP decides the calls; build it with a transport that hands it only
	// complete decisions.
	PDP *client.Client
	// Session is the PDP session the calls are decided in.
	Session string
	// Name is the server's name in capabilities: mcp.NAME.<tool>.
	Name string
	// Workspace is the directory calls must stay in; empty: the session's
	// workspace when it exists with one, else the working directory.
	Workspace string
	// Wait is how long an ask waits for a person's answer; Timeout how
	// long one decision may take.
	Wait, Timeout time.Duration
}

// serverName is what Name may be: one capability segment that the
// policy's mcp__SERVER__tool mapping splits back unchanged.
var serverName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Check validates the settings that need no PDP.
func (c Config) Check() error {
	if !pdp.ValidSessionID(c.Session) {
		return fmt.Errorf("--session %q: a session id is 1-128 characters of [A-Za-z0-9._:-]", c.Session)
	}
	if !serverName.MatchString(c.Name) || strings.Contains(c.Name, "__") {
		return fmt.Errorf("--name %q: use lower-case letters, digits, - and _ (not __), e.g. filesystem", c.Name)
	}
	return nil
}

// Stdio is the client's side of the session.
type Stdio struct {
	In       io.Reader
	Out, Log io.Writer
}

// startTimeout bounds the look at the session before the server starts.
const startTimeout = 5 * time.Second

// Run starts the MCP server argv and relays between it and the client
// until the server exits; the error is the server's. Before it starts the
// server it settles the workspace (Config.Workspace): a --workspace that
// differs from an existing session's is refused here, not on every call.
func Run(ctx context.Context, cfg Config, argv []string, stdio Stdio) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if len(argv) == 0 {
		return errors.New("no MCP server command")
	}
	p := &proxy{cfg: cfg, pdp: cfg.PDP, ctx: ctx, toClient: stdio.Out, log: stdio.Log, pending: map[string]*gatedCall{}}
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	err := p.ensureSession(sctx)
	cancel()
	var mismatch *workspaceMismatch
	switch {
	case errors.As(err, &mismatch):
		return err
	case err != nil:
		// The PDP may come up after its MCP clients: the session is looked
		// at again on the first call, and every call is refused until then.
		p.logf("the PDP is not reachable yet (%v); the session is set up on the first tool call", err)
	}
	server := exec.Command(argv[0], argv[1:]...)
	server.Stderr = stdio.Log
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
	p.toServer = toServer
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
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	p.ctx = ctx
	go p.relayClient(stdio.In)
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

// proxy relays one MCP stdio session and gates its tool calls.
type proxy struct {
	cfg Config
	pdp *client.Client
	ctx context.Context

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
	// workspace is the one settled by ensureSession.
	workspace string
}

// gatedCall is a tool call waiting for its decision.
type gatedCall struct {
	cancel    context.CancelFunc
	cancelled bool
}

// relayClient reads the client's messages in order until stdin ends,
// then lets the decisions under way finish and closes the server's stdin.
func (p *proxy) relayClient(in io.Reader) {
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
func (p *proxy) relayServer(out io.Reader) error {
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
func (p *proxy) fromClient(line []byte) {
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
func (p *proxy) noteCancellations(m rpcMessage) {
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
func (p *proxy) gate(m rpcMessage, line []byte) {
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
func (p *proxy) decide(ctx context.Context, call toolCall) (bool, string) {
	tool := "mcp__" + p.cfg.Name + "__" + call.name
	refuse := func(err error) (bool, string) {
		p.logf("tools/call %s: no decision, refused: %v", call.name, err)
		return false, fmt.Sprintf("toolperm: the call was not run: no decision from the PDP (%v)", err)
	}
	if err := p.ensureSession(ctx); err != nil {
		return refuse(fmt.Errorf("creating session %s: %w", p.cfg.Session, err))
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	d, err := p.pdp.Decide(dctx, client.DecideRequest{SessionID: p.cfg.Session, Tool: tool, Args: call.args, Cwd: p.workspace}, false)
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

// awaitPerson parks on the ask until a person answers or --wait ends.
func (p *proxy) awaitPerson(ctx context.Context, call toolCall, d client.Decision) (bool, string) {
	ev, err := p.pdp.AwaitAnswer(ctx, d.DecisionID, p.cfg.Wait, p.cfg.Timeout)
	if err != nil {
		p.logf("tools/call %s: waiting for decision %s: %v", call.name, d.DecisionID, err)
		return false, fmt.Sprintf("toolperm: not run: waiting for a person's answer failed (%v). %s (rule %s, decision %s)", err, d.Reason, d.Rule, d.DecisionID)
	}
	if ev.Answer == nil {
		return false, fmt.Sprintf("toolperm: not run: no one answered within %s. %s (rule %s, decision %s)", p.cfg.Wait, d.Reason, d.Rule, d.DecisionID)
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
	if a.Answer == api.Expired {
		return false, fmt.Sprintf("toolperm: not run: nobody answered the ask in time (it expired) — decision %s", d.DecisionID)
	}
	return false, fmt.Sprintf("toolperm: denied by a person (%s) — decision %s", a.Channel, d.DecisionID)
}

// workspaceMismatch is a --workspace that is not the existing session's.
type workspaceMismatch struct{ session, given, has string }

func (e *workspaceMismatch) Error() string {
	return fmt.Sprintf("--workspace %s is not the workspace of session %s (%s): calls would be judged against another directory than the session's; leave --workspace out to use the session's, or name another session", e.given, e.session, e.has)
}

// ensureSession settles the session and its workspace on the first call
// (and before the server starts): an existing session is used as it is,
// its workspace the calls' cwd unless Config.Workspace names another,
// which is refused; a new one is created with Config.Workspace or the
// working directory. A failure is tried again on the next call.
func (p *proxy) ensureSession(ctx context.Context) error {
	p.sessionMu.Lock()
	defer p.sessionMu.Unlock()
	if p.sessionReady {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	given := ""
	if p.cfg.Workspace != "" {
		abs, err := filepath.Abs(p.cfg.Workspace)
		if err != nil {
			return fmt.Errorf("--workspace: %w", err)
		}
		given = filepath.Clean(abs)
	}
	// Twice: a session another client creates between the look and the
	// creation is looked at again.
	for attempt := 0; ; attempt++ {
		existing, err := p.pdp.Sessions().Get(ctx, p.cfg.Session)
		if err == nil {
			if existing.Workspace != "" && given != "" && given != filepath.Clean(existing.Workspace) {
				return &workspaceMismatch{session: p.cfg.Session, given: given, has: existing.Workspace}
			}
			// A session with no workspace yet adopts the first call's cwd.
			p.workspace = existing.Workspace
			if p.workspace == "" {
				p.workspace = given
			}
			break
		}
		if !errors.Is(err, client.ErrNotFound) {
			return err
		}
		if given == "" {
			wd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("the working directory (the default --workspace): %w", err)
			}
			given = wd
		}
		_, err = p.pdp.Sessions().Create(ctx, client.Session{ID: p.cfg.Session, Workspace: given, ExecutionMode: "LOCAL"})
		if err == nil {
			p.workspace = given
			break
		}
		if !errors.Is(err, client.ErrConflict) || attempt > 0 {
			return err
		}
	}
	if p.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("the working directory (the default --workspace): %w", err)
		}
		p.workspace = wd
	}
	p.sessionReady = true
	return nil
}

func (p *proxy) writeServer(line []byte) {
	p.serverMu.Lock()
	defer p.serverMu.Unlock()
	if _, err := p.toServer.Write(line); err != nil {
		p.logf("writing to the MCP server: %v", err)
	}
}

func (p *proxy) writeClient(line []byte) error {
	p.clientMu.Lock()
	defer p.clientMu.Unlock()
	_, err := p.toClient.Write(line)
	return err
}

func (p *proxy) logf(format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.log, "pdp mcp-proxy: "+format+"\n", args...)
}
