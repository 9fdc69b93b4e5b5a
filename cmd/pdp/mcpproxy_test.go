package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/mcpproxy"
)

// mcpSide is the MCP client's side of a real `pdp mcp-proxy` process
// that runs the test MCP server (runTestMCPServer).
type mcpSide struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    chan []byte // the proxy's stdout, line by line; closed at its end
	record string      // every line the MCP server received
	stderr *lockedBuffer
	sent   []string
	// seen are the messages read while waiting for another one, in order.
	seen []rpcSeen
}

type rpcSeen struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startMCPProxy runs `pdp mcp-proxy --name files` in front of the test
// MCP server, as a child process of the test binary.
func startMCPProxy(t *testing.T, pdpURL, session, workspace string, flags ...string) *mcpSide {
	t.Helper()
	s := &mcpSide{t: t, out: make(chan []byte, 100), record: filepath.Join(t.TempDir(), "received.jsonl"), stderr: &lockedBuffer{}}
	args := []string{"mcp-proxy", "--url", pdpURL, "--session", session, "--name", "files"}
	if workspace != "" { // none: the session's, else the working directory
		args = append(args, "--workspace", workspace)
	}
	args = append(args, flags...)
	args = append(args, "--", os.Args[0], testMCPServerArg, s.record)
	s.cmd = pdpProcess(args, "PDP_TOKEN=")
	s.cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		if t.Failed() {
			t.Logf("the proxy's stderr:\n%s", s.stderr.String())
		}
	})
	go func() {
		defer close(s.out)
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				s.out <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// send writes one line as the MCP client.
func (s *mcpSide) send(line string) {
	s.t.Helper()
	s.sent = append(s.sent, line)
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// next reads the proxy's next message.
func (s *mcpSide) next(within time.Duration) (rpcSeen, bool) {
	s.t.Helper()
	select {
	case line, ok := <-s.out:
		if !ok {
			return rpcSeen{}, false
		}
		var m rpcSeen
		if err := json.Unmarshal(line, &m); err != nil {
			s.t.Fatalf("the proxy wrote a line that is not JSON: %q", line)
		}
		m.raw = string(line)
		return m, true
	case <-time.After(within):
		s.t.Fatalf("no message from the proxy within %s; stderr:\n%s", within, s.stderr.String())
	}
	return rpcSeen{}, false
}

// await returns the message with the given id (a response, or a request
// of the server's), reading until it comes and keeping the others in
// s.seen.
func (s *mcpSide) await(id string) rpcSeen {
	s.t.Helper()
	if i := slices.IndexFunc(s.seen, func(m rpcSeen) bool { return string(m.ID) == id }); i >= 0 {
		m := s.seen[i]
		s.seen = slices.Delete(s.seen, i, i+1)
		return m
	}
	for {
		m, ok := s.next(15 * time.Second)
		if !ok {
			s.t.Fatalf("the proxy ended before answering %s; stderr:\n%s", id, s.stderr.String())
		}
		if string(m.ID) == id {
			return m
		}
		s.seen = append(s.seen, m)
	}
}

// finish closes the client's side and returns every message still
// written, the proxy's exit error and what the server received.
func (s *mcpSide) finish() ([]rpcSeen, error, []string) {
	s.t.Helper()
	_ = s.stdin.Close()
	var rest []rpcSeen
	for {
		m, ok := s.next(15 * time.Second)
		if !ok {
			break
		}
		rest = append(rest, m)
	}
	err := s.cmd.Wait()
	return rest, err, s.received()
}

func (s *mcpSide) received() []string {
	raw, err := os.ReadFile(s.record)
	if err != nil && !os.IsNotExist(err) {
		s.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

// toolText is a tools/call result's text and whether it is an error.
func toolText(t *testing.T, m rpcSeen) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("not a tool result: %s", m.raw)
	}
	return r.Content[0].Text, r.IsError
}

func toolCallLine(id int, tool string, args map[string]any) string {
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(raw)
}

// answerAsk answers the newest unanswered ask of a session as a person.
func answerAsk(t *testing.T, c *client.Client, session, answer string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		page, err := c.Decisions(context.Background(), client.Filter{SessionID: session, Decision: client.Ask, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Decisions) == 1 && page.Decisions[0].Answer == nil {
			id := page.Decisions[0].DecisionID
			if _, err := c.Answer(context.Background(), id, answer, "desktop"); err != nil {
				t.Fatal(err)
			}
			return id
		}
	}
	t.Fatal("no ask within 10s")
	return ""
}

func TestMCPProxyGatesToolCalls(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ctx := context.Background()
	ws := t.TempDir()
	p := startMCPProxy(t, srv.URL, "mcp-gate", ws, "--wait", "20s")

	// Lines the proxy does not gate reach the server byte for byte.
	initialize := `{"jsonrpc":"2.0",  "id":1, "method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`
	p.send(initialize)
	if m := p.await("1"); m.Result == nil {
		t.Fatalf("initialize: %s", m.raw)
	}
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	p.send(initialized)
	if m := p.await(`"srv-1"`); m.Method != "roots/list" {
		t.Fatalf("the server's request: %s", m.raw)
	}
	roots := `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file://` + ws + `","name":"ws"}]}}`
	p.send(roots)

	// The first call creates the session with the workspace; an MCP
	// tool without a rule is denied and the server never sees it.
	p.send(toolCallLine(2, "delete", map[string]any{"path": ws + "/a.txt"}))
	if text, isErr := toolText(t, p.await("2")); !isErr || !strings.Contains(text, "DANGEROUS_NO_RULE") {
		t.Fatalf("a tool without a rule: %q error=%v", text, isErr)
	}
	s, err := c.Sessions().Get(ctx, "mcp-gate")
	if err != nil || s.Workspace != ws {
		t.Fatalf("the session the proxy created: %+v %v", s, err)
	}
	rules := map[string]string{"mcp.files.read": "allow", "mcp.files.write": "ask"}
	if _, err := c.Sessions().Update(ctx, "mcp-gate", client.SessionChange{Rules: &rules}); err != nil {
		t.Fatal(err)
	}

	// Allowed: relayed; the server's progress notification comes first.
	read := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + ws + `/a.txt"},"_meta":{"progressToken":"p3"}}}`
	p.send(read)
	if text, isErr := toolText(t, p.await("3")); isErr || text != "ran read" {
		t.Fatalf("an allowed call: %q error=%v", text, isErr)
	}
	if last := p.seen[len(p.seen)-1]; last.Method != "notifications/progress" {
		t.Fatalf("before the result: %s", last.raw)
	}
	// Path confinement applies to the arguments.
	p.send(toolCallLine(4, "read", map[string]any{"path": "/etc/passwd"}))
	if text, isErr := toolText(t, p.await("4")); !isErr || !strings.Contains(text, "OUTSIDE_WORKSPACE") {
		t.Fatalf("a read outside the workspace: %q error=%v", text, isErr)
	}

	// An ask waits for a person; other messages pass meanwhile.
	write := toolCallLine(5, "write", map[string]any{"path": ws + "/b.txt", "content": "x"})
	p.send(write)
	list := `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`
	p.send(list)
	if m := p.await("6"); !strings.Contains(string(m.Result), `"write"`) {
		t.Fatalf("tools/list while a call waits: %s", m.raw)
	}
	answerAsk(t, c, "mcp-gate", client.AllowOnce)
	if text, isErr := toolText(t, p.await("5")); isErr || text != "ran write" {
		t.Fatalf("an ask a person allowed: %q error=%v", text, isErr)
	}
	p.send(toolCallLine(7, "write", map[string]any{"path": ws + "/c.txt"}))
	id := answerAsk(t, c, "mcp-gate", client.DenyAnswer)
	if text, isErr := toolText(t, p.await("7")); !isErr || !strings.Contains(text, "denied by a person") || !strings.Contains(text, id) {
		t.Fatalf("an ask a person denied: %q error=%v", text, isErr)
	}
	changed := `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
	p.send(changed)
	ping := `{"jsonrpc":"2.0","id":8,"method":"ping"}`
	p.send(ping)
	p.await("8")

	_, err, received := p.finish()
	if err != nil {
		t.Fatalf("the proxy's exit: %v\n%s", err, p.stderr.String())
	}
	// The server received exactly what was sent but the refused calls,
	// in order; only the call that waited was overtaken.
	want := []string{initialize, initialized, roots, read, list, write, changed, ping}
	if !slices.Equal(received, want) {
		t.Fatalf("the server received:\n%s\nwant:\n%s", strings.Join(received, "\n"), strings.Join(want, "\n"))
	}
}

// When the client closes its side, every request already sent is
// answered: calls the server is running, calls being decided, asks
// waiting for a person (unanswered: refused).
func TestMCPProxyAnswersEverythingAfterTheClientCloses(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ws := t.TempDir()
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "mcp-eof", Workspace: ws,
		Rules: map[string]string{"mcp.files.read": "allow", "mcp.files.write": "ask"}}); err != nil {
		t.Fatal(err)
	}
	p := startMCPProxy(t, srv.URL, "mcp-eof", ws, "--wait", "1s")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	p.send(toolCallLine(2, "read", map[string]any{"path": ws + "/a", "sleep_ms": 700}))
	p.send(toolCallLine(3, "read", map[string]any{"path": ws + "/b"}))
	p.send(toolCallLine(4, "delete", map[string]any{"path": ws + "/c"}))
	p.send(toolCallLine(5, "write", map[string]any{"path": ws + "/d"}))
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	start := time.Now()
	rest, err, received := p.finish()
	if err != nil {
		t.Fatalf("the proxy's exit: %v\n%s", err, p.stderr.String())
	}
	answers := map[string]rpcSeen{}
	for _, m := range rest {
		answers[string(m.ID)] = m
	}
	if _, ok := answers["1"]; !ok {
		t.Fatal("initialize got no answer after the client closed")
	}
	for id, want := range map[string]string{"2": "ran read", "3": "ran read", "4": "DANGEROUS_NO_RULE", "5": "no one answered within 1s"} {
		m, ok := answers[id]
		if !ok {
			t.Fatalf("request %s got no answer after the client closed; got %d messages", id, len(rest))
		}
		if text, _ := toolText(t, m); !strings.Contains(text, want) {
			t.Fatalf("request %s: %q, want %q", id, text, want)
		}
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Fatalf("the proxy ended after %s, before the slow call could finish", took)
	}
	// The session existed: it was used as it was, with its rules.
	if len(received) != 4 || strings.Contains(strings.Join(received, "\n"), `"delete"`) {
		t.Fatalf("the server received:\n%s", strings.Join(received, "\n"))
	}
}

// Without a decision the call is refused: the PDP unreachable, an error
// answer, an answer that is not a complete decision.
func TestMCPProxyRefusesWithoutADecision(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"code":"forbidden","message":"token \"x\" may not POST /v1/decide"}}`))
	}))
	defer refusing.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	bareAllow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/sessions" {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{}`))
			return
		}
		_, _ = w.Write([]byte(`{"decision":"allow"}`))
	}))
	defer bareAllow.Close()
	for name, url := range map[string]string{"unreachable": "http://127.0.0.1:1", "403": refusing.URL, "503": failing.URL, "a bare allow": bareAllow.URL} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			p := startMCPProxy(t, url, "mcp-down", ws, "--timeout", "2s")
			p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
			p.await("1")
			p.send(toolCallLine(2, "read", map[string]any{"path": ws + "/a"}))
			if text, isErr := toolText(t, p.await("2")); !isErr || !strings.Contains(text, "no decision") {
				t.Fatalf("%q error=%v", text, isErr)
			}
			_, err, received := p.finish()
			if err != nil || len(received) != 1 {
				t.Fatalf("exit %v; the server received %q", err, received)
			}
		})
	}
}

// A call the client cancels while it waits for a person is dropped:
// not answered (as MCP asks), never relayed; the cancellation is.
func TestMCPProxyDropsACancelledCall(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ws := t.TempDir()
	rules := map[string]string{"mcp.files.write": "ask"}
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "mcp-cancel", Workspace: ws, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	p := startMCPProxy(t, srv.URL, "mcp-cancel", ws, "--wait", "30s")
	p.send(toolCallLine(1, "write", map[string]any{"path": ws + "/a"}))
	waitForAsk(t, c, "mcp-cancel")
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user stopped it"}}`
	p.send(cancel)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.await("2")
	start := time.Now()
	rest, err, received := p.finish()
	if err != nil || len(rest) != 0 {
		t.Fatalf("exit %v; after the cancellation: %v", err, rest)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the cancelled call still waited %s", took)
	}
	if !slices.Equal(received, []string{cancel, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}) {
		t.Fatalf("the server received %q", received)
	}
}

func waitForAsk(t *testing.T, c *client.Client, session string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		page, err := c.Decisions(context.Background(), client.Filter{SessionID: session, Decision: client.Ask, Limit: 1})
		if err == nil && len(page.Decisions) == 1 {
			return
		}
	}
	t.Fatal("no ask within 10s")
}

// Lines a lenient server could read as another call than the one
// decided are refused, never relayed; a batch with a tool call is split.
func TestMCPProxyRefusesAmbiguousMessages(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ws := t.TempDir()
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "mcp-odd", Workspace: ws,
		Rules: map[string]string{"mcp.files.read": "allow"}}); err != nil {
		t.Fatal(err)
	}
	p := startMCPProxy(t, srv.URL, "mcp-odd", ws)
	refused := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/etc/shadow","path":"` + ws + `/a"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"` + ws + `/a","Path":"/etc/shadow"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping","Method":"tools/call","params":{"name":"delete"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"} {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read","arguments":{"n":NaN,"path":"/etc/shadow"}}}`,
		`{"jsonrpc":"2.0","id":7,"METHOD":"tools/call","params":{"name":"delete","arguments":{}}}`,
	}
	for _, line := range refused {
		p.send(line)
	}
	for i := 0; i < len(refused); i++ {
		m, _ := p.next(15 * time.Second)
		if m.Error == nil && !strings.Contains(string(m.Result), `"isError":true`) {
			t.Fatalf("not refused: %s", m.raw)
		}
	}
	batch := `[{"jsonrpc":"2.0","id":10,"method":"ping"},` + toolCallLine(11, "read", map[string]any{"path": ws + "/a"}) + `,` + toolCallLine(12, "delete", map[string]any{}) + `]`
	p.send(batch)
	p.await("10")
	if text, isErr := toolText(t, p.await("12")); !isErr {
		t.Fatalf("a denied call in a batch: %q", text)
	}
	if text, isErr := toolText(t, p.await("11")); isErr || text != "ran read" {
		t.Fatalf("an allowed call in a batch: %q", text)
	}
	_, err, received := p.finish()
	want := []string{`{"jsonrpc":"2.0","id":10,"method":"ping"}`, toolCallLine(11, "read", map[string]any{"path": ws + "/a"})}
	if err != nil || !slices.Equal(received, want) {
		t.Fatalf("exit %v; the server received:\n%s", err, strings.Join(received, "\n"))
	}
}

// Claude Desktop and Cursor start MCP servers from their own
// directories: a proxy without --workspace uses the existing session's,
// and one whose --workspace differs from it refuses to start.
func TestMCPProxyTakesTheSessionsWorkspace(t *testing.T) {
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ws := t.TempDir()
	rules := map[string]string{"mcp.files.read": "allow"}
	if _, err := c.Sessions().Create(context.Background(), client.Session{ID: "desktop", Workspace: ws, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	p := startMCPProxy(t, srv.URL, "desktop", "") // started from this package's directory
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	p.await("1")
	p.send(toolCallLine(2, "read", map[string]any{"path": ws + "/a.txt"}))
	if text, isErr := toolText(t, p.await("2")); isErr || text != "ran read" {
		t.Fatalf("a read inside the session's workspace: %q error=%v", text, isErr)
	}
	if _, err, _ := p.finish(); err != nil {
		t.Fatal(err)
	}

	other := t.TempDir()
	refused := startMCPProxy(t, srv.URL, "desktop", other)
	_, err, received := refused.finish()
	if err == nil || !strings.Contains(refused.stderr.String(), "is not the workspace of session desktop") {
		t.Fatalf("a --workspace that is not the session's: exit %v\n%s", err, refused.stderr.String())
	}
	if len(received) != 1 || received[0] != "" {
		t.Fatalf("the MCP server was started: %q", received)
	}
}

func TestMCPProxyFlags(t *testing.T) {
	cases := map[string][]string{
		"no command":     {"mcp-proxy", "--session", "s", "--name", "files"},
		"no --":          {"mcp-proxy", "--session", "s", "--name", "files", "cat"},
		"no session":     {"mcp-proxy", "--name", "files", "--", "cat"},
		"a bad session":  {"mcp-proxy", "--session", "a b", "--name", "files", "--", "cat"},
		"a name with __": {"mcp-proxy", "--session", "s", "--name", "a__b", "--", "cat"},
		"a name with .":  {"mcp-proxy", "--session", "s", "--name", "a.b", "--", "cat"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := rootCommand()
			cmd.SetArgs(args)
			cmd.SetIn(strings.NewReader(""))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			if err := cmd.Execute(); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// The README's "Any MCP client" configuration is a valid mcpServers
// entry whose arguments `pdp mcp-proxy` takes.
func TestREADMEMCPClientConfig(t *testing.T) {
	block := readmeBlock(t, "### Any MCP client", "json")
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil || len(cfg.MCPServers) != 1 {
		t.Fatalf("the README's config: %v\n%s", err, block)
	}
	for name, srv := range cfg.MCPServers {
		if srv.Command != "pdp" || len(srv.Args) == 0 || srv.Args[0] != "mcp-proxy" {
			t.Fatalf("%s: %s %q", name, srv.Command, srv.Args)
		}
		cmd := mcpProxyCommand()
		if err := cmd.ParseFlags(srv.Args[1:]); err != nil {
			t.Fatal(err)
		}
		server := cmd.Flags().Args()
		if cmd.Flags().ArgsLenAtDash() != 0 || len(server) == 0 || server[0] != "npx" {
			t.Fatalf("the MCP server's command: %q", server)
		}
		var f mcpproxy.Config
		f.Session, _ = cmd.Flags().GetString("session")
		f.Name, _ = cmd.Flags().GetString("name")
		f.Workspace, _ = cmd.Flags().GetString("workspace")
		if err := f.Check(); err != nil || name != f.Name {
			t.Fatalf("%v; the entry %q gates as %q", err, name, f.Name)
		}
		if !filepath.IsAbs(f.Workspace) || !slices.Contains(server, f.Workspace) {
			t.Fatalf("the workspace %q is not the directory the server serves: %q", f.Workspace, server)
		}
	}
}

// readmeBlock is the first fenced block of the given language in the
// README section whose heading starts with heading.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n"+heading)
	if !ok {
		t.Fatalf("README has no %q section", heading)
	}
	for _, next := range []string{"\n## ", "\n### "} {
		section, _, _ = strings.Cut(section, next)
	}
	_, block, ok := strings.Cut(section, "```"+lang+"\n")
	if !ok {
		t.Fatalf("the %q section has no %s block", heading, lang)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// The README's session for the proxied filesystem server does what the
// text says: reads and listings run, other tools ask, nothing outside
// the workspace.
func TestREADMEMCPSession(t *testing.T) {
	block := readmeBlock(t, "### Any MCP client", "sh")
	_, body, _ := strings.Cut(block, "-d '")
	body, _, _ = strings.Cut(body, "'")
	var s client.Session
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatalf("the README's session: %v\n%s", err, body)
	}
	srv, _ := pdpTestServer(t)
	c := client.New(srv.URL)
	ctx := context.Background()
	if _, err := c.Sessions().Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, path, want string
	}{
		{"read_text_file", "/home/me/proj/notes.md", client.Allow},
		{"list_directory", "/home/me/proj", client.Allow},
		{"write_file", "/home/me/proj/notes.md", client.Ask},
		{"move_file", "/home/me/proj/notes.md", client.Ask},
		{"read_text_file", "/etc/passwd", client.Deny},
	} {
		d, err := c.Decide(ctx, client.DecideRequest{SessionID: s.ID, Tool: "mcp__filesystem__" + tc.tool, Args: map[string]any{"path": tc.path}, Cwd: s.Workspace}, false)
		if err != nil || d.Decision != tc.want {
			t.Fatalf("%s %s: %+v %v, want %s", tc.tool, tc.path, d, err, tc.want)
		}
	}
}
