package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
)

// securedTestServer is a real server with two dispatcher tokens
// (runtime, other) and a person's (desktop).
func securedTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	return testserver.New(t,
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

// TestClaudeCodeHookRecordsTheOutcomeOfItsPrompt: an ask answered in
// Claude Code's own prompt is recorded as the ask's outcome, apart from
// a person's answer: the ask stays pending in the PDP.
func TestClaudeCodeHookRecordsTheOutcomeOfItsPrompt(t *testing.T) {
	srv := securedTestServer(t)
	ctx := context.Background()
	person := client.New(srv.URL, client.WithToken("u-secret"))
	pre := payload(t, "bash_make_check.json")
	out, _ := runHookProcess(t, pre, "d-secret", "--url", srv.URL)
	if d := hookDecision(t, out); d != "ask" {
		t.Fatalf("PreToolUse: %s", d)
	}
	page, err := person.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 10})
	if err != nil || len(page.Decisions) != 1 {
		t.Fatalf("%+v %v", page, err)
	}
	ask := page.Decisions[0]
	if ask.ToolUseID != "toolu_01MkChkAbCdEfGhIjKlMnOpQ" || ask.Answer != nil {
		t.Fatalf("the ask: %+v", ask.Event)
	}

	// The person allowed it in Claude Code's prompt; the tool ran.
	stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "d-secret", "--url", srv.URL)
	if stdout != "" || stderr != "" {
		t.Fatalf("PostToolUse printed %q, %q", stdout, stderr)
	}
	got, err := person.Decision(ctx, ask.DecisionID, 0)
	if err != nil || got.Outcome == nil {
		t.Fatalf("after PostToolUse: %+v %v", got, err)
	}
	if o := got.Outcome; o.Answer != client.AllowOnce || o.Channel != "claude-code" || o.By != "runtime" || o.RecordedAt.IsZero() {
		t.Fatalf("the recorded outcome: %+v", o)
	}
	if got.Answer != nil {
		t.Fatalf("the outcome was recorded as a person's answer: %+v", got.Answer)
	}
	// A record, not a permission: no grant, and the same call still asks.
	if grants, err := person.Grants().List(ctx, got.SessionID); err != nil || len(grants) != 0 {
		t.Fatalf("grants after the record: %v %v", grants, err)
	}
	if out, _ := runHookProcess(t, withToolUse(t, "bash_make_check.json", "toolu_again"), "d-secret", "--url", srv.URL); hookDecision(t, out) != "ask" {
		t.Fatalf("the same call after the record: %s", out)
	}

	// A second PostToolUse changes nothing and says nothing; the API
	// answers 409.
	if stdout, stderr := runHookProcess(t, after(t, pre, "PostToolUse"), "d-secret", "--url", srv.URL); stdout != "" || stderr != "" {
		t.Fatalf("a second PostToolUse printed %q, %q", stdout, stderr)
	}
	again, _ := person.Decision(ctx, ask.DecisionID, 0)
	if again.Outcome == nil || *again.Outcome != *got.Outcome || again.Answer != nil {
		t.Fatalf("the outcome changed: %+v (answer %+v)", again.Outcome, again.Answer)
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
		d, err := c.Decide(ctx, client.DecideRequest{SessionID: session, Tool: "Bash", Args: map[string]any{"command": "make check"}, Cwd: "/w", ToolUseID: toolUse}, false)
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
	// Even when its own call has the same id, only its own ask gets the
	// outcome.
	theirs := ask(other, "cc:theirs", "toolu_mine")
	if ev, err := other.RecordOutcome(ctx, "toolu_mine", client.DenyAnswer, "claude-code"); err != nil || ev.DecisionID != theirs.DecisionID {
		t.Fatalf("its own ask: %+v %v", ev, err)
	}
	if ev, _ := person.Decision(ctx, mine.DecisionID, 0); ev.Answer != nil || ev.Outcome != nil {
		t.Fatalf("the foreign dispatcher recorded on the runtime's ask: %+v / %+v", ev.Answer, ev.Outcome)
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
		if ev.ToolUseID == "toolu_refused" && (ev.Answer != nil || ev.Outcome == nil || ev.Outcome.Answer != client.DenyAnswer || ev.Outcome.By != "runtime") {
			t.Fatalf("after PermissionDenied: answer %+v, outcome %+v", ev.Answer, ev.Outcome)
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
// ends up with its outcome in the audit trail.
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
		// The shell's "|| exit 2" blocks a hook that cannot run at all;
		// the hook's own arguments come before it.
		args := strings.Fields(strings.TrimSuffix(entries[0].Hooks[0].Command, " || exit 2"))
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
	pre := payload(t, "bash_make_check.json")
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
	if err != nil || len(page.Decisions) != 1 || page.Decisions[0].Outcome == nil || page.Decisions[0].Outcome.Channel != "claude-code" {
		t.Fatalf("the ask after the README's hooks ran: %+v %v", page, err)
	}
}

// startHookProcess starts `pdp hook claude-code` as runHookProcess does,
// without waiting: the channel gets its stdout once it exits 0.
func startHookProcess(t *testing.T, stdin, token string, args ...string) <-chan string {
	t.Helper()
	cmd := pdpProcess(append([]string{"hook", "claude-code", "--config", repoConfig}, args...), "PDP_TOKEN="+token, "CLAUDE_PROJECT_DIR=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(exited)
		if err := cmd.Wait(); err != nil {
			done <- fmt.Sprintf("the hook exited with %v: %s", err, errOut.String())
			return
		}
		done <- out.String()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return done
}

// pendingAsk waits for the ask of the call with toolUseID to be made.
func pendingAsk(t *testing.T, person *client.Client, toolUseID string) client.Event {
	t.Helper()
	for range 200 {
		page, err := person.Decisions(context.Background(), client.Filter{Decision: client.Ask, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Decisions {
			if ev.ToolUseID == toolUseID {
				return ev.Event
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no ask for %s", toolUseID)
	return client.Event{}
}

// TestClaudeCodeHookWaitNeverTakesAnOutcomeForAnAnswer: the runtime's
// own token records allow_once on the ask a `pdp hook claude-code
// --wait` is parked on. That is a record of what a runtime did, not a
// person's answer: the hook keeps waiting, and prints what the person
// answers, or ask when no one does — never allow because of the outcome.
func TestClaudeCodeHookWaitNeverTakesAnOutcomeForAnAnswer(t *testing.T) {
	srv := securedTestServer(t)
	ctx := context.Background()
	runtime := client.New(srv.URL, client.WithToken("d-secret"))
	person := client.New(srv.URL, client.WithToken("u-secret"))

	t.Run("a person answers after the outcome", func(t *testing.T) {
		done := startHookProcess(t, withToolUse(t, "bash_make_check.json", "toolu_parked"), "d-secret", "--url", srv.URL, "--wait", "20s", "--timeout", "25s")
		ask := pendingAsk(t, person, "toolu_parked")
		rec, err := runtime.RecordOutcome(ctx, "toolu_parked", client.AllowOnce, "claude-code")
		if err != nil || rec.Answer != nil || rec.Outcome == nil {
			t.Fatalf("the outcome: answer %+v, outcome %+v, %v", rec.Answer, rec.Outcome, err)
		}
		select {
		case out := <-done:
			t.Fatalf("the hook stopped waiting on an outcome: %s", out)
		case <-time.After(time.Second):
		}
		if _, err := person.Answer(ctx, ask.DecisionID, client.DenyAnswer, "desktop"); err != nil {
			t.Fatalf("the person's answer after the outcome: %v", err)
		}
		select {
		case out := <-done:
			var a hookAnswer
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("no answer: %v\n%s", err, out)
			}
			if got := a.HookSpecificOutput; got.PermissionDecision != "deny" || !strings.Contains(got.PermissionDecisionReason, "denied by a person (desktop)") {
				t.Fatalf("after the person's deny: %+v", got)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the hook did not take the person's answer")
		}
	})

	t.Run("no one answers", func(t *testing.T) {
		done := startHookProcess(t, withToolUse(t, "bash_make_check.json", "toolu_alone"), "d-secret", "--url", srv.URL, "--wait", "2s", "--timeout", "10s")
		pendingAsk(t, person, "toolu_alone")
		if _, err := runtime.RecordOutcome(ctx, "toolu_alone", client.AllowOnce, "claude-code"); err != nil {
			t.Fatal(err)
		}
		select {
		case out := <-done:
			if d := hookDecision(t, out); d != "ask" {
				t.Fatalf("after an outcome and no answer the hook printed %s: %s", d, out)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the hook did not end its wait")
		}
	})
}

// TestAnOutcomeNeverTakesAPersonsChannel: the runtime names its own
// channel; a person's is refused, and none is recorded as "runtime".
func TestAnOutcomeNeverTakesAPersonsChannel(t *testing.T) {
	srv := securedTestServer(t)
	ctx := context.Background()
	runtime := client.New(srv.URL, client.WithToken("d-secret"))
	d, err := runtime.Decide(ctx, client.DecideRequest{SessionID: "cc:ch", Tool: "Bash", Args: map[string]any{"command": "make check"}, Cwd: "/w", ToolUseID: "toolu_ch"}, false)
	if err != nil || d.Decision != client.Ask {
		t.Fatalf("%+v %v", d, err)
	}
	for _, channel := range []string{"console", "desktop", "terminal", "cli", "api", "Console", "ᴄonsole", "console ", "a person"} {
		if _, err := runtime.RecordOutcome(ctx, "toolu_ch", client.AllowOnce, channel); !errors.Is(err, client.ErrBadRequest) {
			t.Fatalf("channel %q: %v, want a bad request", channel, err)
		}
	}
	ev, err := runtime.RecordOutcome(ctx, "toolu_ch", client.AllowOnce, "")
	if err != nil || ev.Outcome == nil || ev.Outcome.Channel != "runtime" || ev.Answer != nil {
		t.Fatalf("no channel: %+v / %+v, %v", ev.Outcome, ev.Answer, err)
	}
}

// TestClaudeCodeHookWaitAllowsOnlyAPersonsAllow: what the wait returns
// decides the hook's answer only when a person gave it. An answer that
// names the token that reported it (how servers recorded outcomes before
// they were kept apart) and an outcome beside no answer are no person's:
// the hook falls back to Claude Code's prompt.
func TestClaudeCodeHookWaitAllowsOnlyAPersonsAllow(t *testing.T) {
	cases := map[string]struct {
		record, want string
	}{
		"a person's allow_once":          {`"answer":{"answer":"allow_once","channel":"desktop","answered_at":"2026-11-29T10:00:00Z"},"outcome":null`, "allow"},
		"a person's allow_project":       {`"answer":{"answer":"allow_project","channel":"console","answered_at":"2026-11-29T10:00:00Z","grant_id":3},"outcome":null`, "allow"},
		"a person's deny":                {`"answer":{"answer":"deny","channel":"desktop","answered_at":"2026-11-29T10:00:00Z"},"outcome":null`, "deny"},
		"an outcome, no answer":          {`"answer":null,"outcome":{"answer":"allow_once","channel":"claude-code","by":"runtime","recorded_at":"2026-11-29T10:00:00Z"}`, "ask"},
		"an outcome read as an answer":   {`"answer":{"answer":"allow_once","channel":"claude-code","answered_at":"2026-11-29T10:00:00Z","by":"runtime"}`, "ask"},
		"an outcome on a person's label": {`"answer":{"answer":"allow_once","channel":"desktop","answered_at":"2026-11-29T10:00:00Z","by":"runtime"}`, "ask"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == "POST" {
					_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask","need_approval":true,"source":"level","rule":"shell.exec","reason":"asks",` +
						`"capability":"shell.exec","fingerprint":"make check","grantable":true,"danger":null,"revision":"r1"}`))
					return
				}
				_, _ = w.Write([]byte(`{"decision_id":"d1","decision":"ask",` + tc.record + `}`))
			}))
			defer srv.Close()
			got := runHook(t, payload(t, "bash_make_check.json"), "--url", srv.URL, "--wait", "1s").HookSpecificOutput
			if got.PermissionDecision != tc.want {
				t.Fatalf("%s, want %s (%s)", got.PermissionDecision, tc.want, got.PermissionDecisionReason)
			}
		})
	}
}
