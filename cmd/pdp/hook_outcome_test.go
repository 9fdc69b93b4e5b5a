package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolperm/pdp/adapters/httpapi"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
)

// securedTestServer is a real server with two dispatcher tokens
// (runtime, other) and a person's (desktop).
func securedTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	return testserver.New(t, testserver.Feed(),
		testserver.Tokens(testserver.Token("runtime", "d-secret", httpapi.Dispatcher), testserver.Token("other", "o-secret", httpapi.Dispatcher), testserver.Token("desktop", "u-secret", httpapi.User)),
		testserver.Configure(func(c *httpapi.Config, _ *pdp.Components) { c.RefusalsPerSecond = 1000 })).Server
}

// runHookProcess runs `pdp hook claude-code` as Claude Code does: a child
// process, the event on stdin, PDP_TOKEN in its environment. It must
// exit 0.
func runHookProcess(t *testing.T, stdin, token string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := pdpProcess(append([]string{"hook", "claude-code", "--config", repoConfig}, args...), "PDP_TOKEN="+token, "CLAUDE_PROJECT_DIR=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("the hook exited with %v: %s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

// hookDecision is the permission decision PreToolUse printed.
func hookDecision(t *testing.T, stdout string) string {
	t.Helper()
	var a hookAnswer
	if err := json.Unmarshal([]byte(stdout), &a); err != nil {
		t.Fatalf("no answer: %v\n%s", err, stdout)
	}
	return a.HookSpecificOutput.PermissionDecision
}

// after is the event Claude Code sends after a call: the PreToolUse
// event with another name (and, for PostToolUse, the tool's response).
func after(t *testing.T, pre, event string) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(pre), &ev); err != nil {
		t.Fatal(err)
	}
	ev["hook_event_name"] = event
	if event == "PostToolUse" {
		ev["tool_response"] = map[string]any{"stdout": "On branch main", "stderr": "", "interrupted": false}
	}
	raw, _ := json.Marshal(ev)
	return string(raw)
}

// withToolUse is a payload with another tool_use_id.
func withToolUse(t *testing.T, name, id string) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(payload(t, name)), &ev); err != nil {
		t.Fatal(err)
	}
	ev["tool_use_id"] = id
	raw, _ := json.Marshal(ev)
	return string(raw)
}

func TestClaudeCodeHookRecordsTheAnswerGivenInClaudeCode(t *testing.T) {
	srv := securedTestServer(t)
	ctx := context.Background()
	person := client.New(srv.URL, client.WithToken("u-secret"))
	pre := payload(t, "bash_git_status.json")
	out, _ := runHookProcess(t, pre, "d-secret", "--url", srv.URL)
	if d := hookDecision(t, out); d != "ask" {
		t.Fatalf("PreToolUse: %s", d)
	}
	page, err := person.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 10})
	if err != nil || len(page.Decisions) != 1 {
		t.Fatalf("%+v %v", page, err)
	}
	ask := page.Decisions[0]
	if ask.ToolUseID != "toolu_01BcDeFgHiJkLmNoPqRsTuVw" || ask.Answer != nil {
		t.Fatalf("the ask: %+v", ask.Event)
	}

	// The person allowed it in Claude Code's prompt; the tool ran.
	stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "d-secret", "--url", srv.URL)
	if stdout != "" || stderr != "" {
		t.Fatalf("PostToolUse printed %q, %q", stdout, stderr)
	}
	got, err := person.Decision(ctx, ask.DecisionID, 0)
	if err != nil || got.Answer == nil {
		t.Fatalf("after PostToolUse: %+v %v", got, err)
	}
	if a := got.Answer; a.Answer != client.AllowOnce || a.Channel != "claude-code" || a.By != "runtime" || a.GrantID != 0 {
		t.Fatalf("the recorded answer: %+v", a)
	}
	// A record, not a permission: no grant, and the same call still asks.
	if grants, err := person.Grants().List(ctx, got.SessionID); err != nil || len(grants) != 0 {
		t.Fatalf("grants after the record: %v %v", grants, err)
	}
	if out, _ := runHookProcess(t, withToolUse(t, "bash_git_status.json", "toolu_again"), "d-secret", "--url", srv.URL); hookDecision(t, out) != "ask" {
		t.Fatalf("the same call after the record: %s", out)
	}

	// A second PostToolUse changes nothing and says nothing; the API
	// answers 409.
	if stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "d-secret", "--url", srv.URL); stdout != "" || stderr != "" {
		t.Fatalf("a second PostToolUse printed %q, %q", stdout, stderr)
	}
	again, _ := person.Decision(ctx, ask.DecisionID, 0)
	if !again.Answer.AnsweredAt.Equal(got.Answer.AnsweredAt) {
		t.Fatalf("the answer changed: %+v", again.Answer)
	}
	runtime := client.New(srv.URL, client.WithToken("d-secret"))
	if _, err := runtime.RecordOutcome(ctx, ask.ToolUseID, client.DenyAnswer, "claude-code"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("a second record: %v", err)
	}
	// PostToolUse of a call that was allowed outright is no ask: nothing.
	read := payload(t, "read_inside.json")
	runHookProcess(t, read, "d-secret", "--url", srv.URL)
	if stdout, stderr := runHookProcess(t, after(t, read, "PostToolUse"), "d-secret", "--url", srv.URL); stdout != "" || stderr != "" {
		t.Fatalf("PostToolUse of an allowed call printed %q, %q", stdout, stderr)
	}
}

func TestClaudeCodeOutcomeIsOnlyARecord(t *testing.T) {
	srv := securedTestServer(t)
	ctx := context.Background()
	runtime := client.New(srv.URL, client.WithToken("d-secret"))
	other := client.New(srv.URL, client.WithToken("o-secret"))
	person := client.New(srv.URL, client.WithToken("u-secret"))
	ask := func(c *client.Client, session, toolUse string) client.Decision {
		d, err := c.Decide(ctx, client.DecideRequest{SessionID: session, Tool: "Bash", Args: map[string]any{"command": "git status"}, Cwd: "/w", ToolUseID: toolUse}, false)
		if err != nil || d.Decision != client.Ask {
			t.Fatalf("%+v %v", d, err)
		}
		return d
	}
	mine := ask(runtime, "cc:mine", "toolu_mine")

	// Another dispatcher cannot record on it, and learns nothing of it.
	if _, err := other.RecordOutcome(ctx, "toolu_mine", client.AllowOnce, "claude-code"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a foreign record: %v", err)
	}
	// Even when its own call has the same id, only its own ask is
	// answered.
	theirs := ask(other, "cc:theirs", "toolu_mine")
	if ev, err := other.RecordOutcome(ctx, "toolu_mine", client.DenyAnswer, "claude-code"); err != nil || ev.DecisionID != theirs.DecisionID {
		t.Fatalf("its own ask: %+v %v", ev, err)
	}
	if ev, _ := person.Decision(ctx, mine.DecisionID, 0); ev.Answer != nil {
		t.Fatalf("the foreign dispatcher answered the runtime's ask: %+v", ev.Answer)
	}
	// Only allow_once or deny; never a grant.
	if _, err := runtime.RecordOutcome(ctx, "toolu_mine", client.AllowSession, "claude-code"); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("allow_session as an outcome: %v", err)
	}
	// A dispatcher still cannot answer through the answer endpoint.
	if _, err := runtime.Answer(ctx, mine.DecisionID, client.AllowOnce, "claude-code"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a dispatcher's answer: %v", err)
	}
	if _, err := person.RecordOutcome(ctx, "toolu_mine", client.AllowOnce, "claude-code"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("a person's token recorded an outcome: %v", err)
	}
	if _, err := runtime.RecordOutcome(ctx, "toolu_nobody", client.AllowOnce, "claude-code"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("an unknown tool use: %v", err)
	}

	// Claude Code refused the call (PermissionDenied): deny.
	pre := withToolUse(t, "bash_compound.json", "toolu_refused")
	if out, _ := runHookProcess(t, pre, "d-secret", "--url", srv.URL); hookDecision(t, out) != "ask" {
		t.Fatalf("PreToolUse: %s", out)
	}
	denied := after(t, pre, "PermissionDenied")
	if stdout, stderr := runHookProcess(t, denied, "d-secret", "--url", srv.URL); stdout != "" || stderr != "" {
		t.Fatalf("PermissionDenied printed %q, %q", stdout, stderr)
	}
	page, err := person.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range page.Decisions {
		if ev.ToolUseID == "toolu_refused" && (ev.Answer == nil || ev.Answer.Answer != client.DenyAnswer || ev.Answer.By != "runtime") {
			t.Fatalf("after PermissionDenied: %+v", ev.Answer)
		}
	}
	// With --local there is no server to record at: nothing happens.
	if stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "", "--local"); stdout != "" || stderr != "" {
		t.Fatalf("--local PostToolUse printed %q, %q", stdout, stderr)
	}
	// An unreachable PDP is said on stderr; the hook still exits 0.
	if stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "d-secret", "--url", "http://127.0.0.1:1"); stdout != "" || !strings.Contains(stderr, "could not record") {
		t.Fatalf("unreachable: %q, %q", stdout, stderr)
	}
}

// The README's Claude Code settings register the hook for PreToolUse and
// PostToolUse; run as written, an ask answered in Claude Code's prompt
// ends up answered in the audit trail.
func TestREADMEClaudeCodeSettings(t *testing.T) {
	block := readmeBlock(t, "### Claude Code", "json")
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&settings); err != nil {
		t.Fatalf("the README's settings: %v\n%s", err, block)
	}
	srv := securedTestServer(t)
	command := map[string][]string{}
	for event, entries := range settings.Hooks {
		if len(entries) != 1 || entries[0].Matcher != "*" || len(entries[0].Hooks) != 1 || entries[0].Hooks[0].Type != "command" {
			t.Fatalf("%s: %+v", event, entries)
		}
		args := strings.Fields(entries[0].Hooks[0].Command)
		if len(args) < 3 || args[0] != "pdp" || args[1] != "hook" || args[2] != "claude-code" {
			t.Fatalf("%s runs %q", event, entries[0].Hooks[0].Command)
		}
		for i, a := range args {
			if strings.HasPrefix(a, "http://127.0.0.1:8181") {
				args[i] = srv.URL
			}
		}
		command[event] = args[3:]
	}
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		if command[event] == nil {
			t.Fatalf("the settings do not register %s", event)
		}
	}
	pre := payload(t, "bash_git_status.json")
	if out, _ := runHookProcess(t, pre, "d-secret", command["PreToolUse"]...); hookDecision(t, out) != "ask" {
		t.Fatalf("PreToolUse: %s", out)
	}
	for event, args := range command {
		if event != "PreToolUse" {
			if stdout, stderr := runHookProcess(t, after(t, pre, event), "d-secret", args...); stdout != "" || stderr != "" {
				t.Fatalf("%s printed %q, %q", event, stdout, stderr)
			}
		}
	}
	page, err := client.New(srv.URL, client.WithToken("u-secret")).Decisions(context.Background(), client.Filter{Decision: client.Ask, Limit: 1})
	if err != nil || len(page.Decisions) != 1 || page.Decisions[0].Answer == nil || page.Decisions[0].Answer.Channel != "claude-code" {
		t.Fatalf("the ask after the README's hooks ran: %+v %v", page, err)
	}
}
