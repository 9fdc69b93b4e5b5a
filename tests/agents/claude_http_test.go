package agents

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/toolperm/pdp/client"
)

// deadURL is the URL of a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// httpHooks is Claude Code's hooks configuration with url as an HTTP
// hook for PreToolUse and PostToolUse; "onFailure": "block" makes a hook
// that cannot be reached or answers an error status block the call (by
// default Claude Code takes that for a non-blocking error and runs it).
func httpHooks(url string) map[string]any {
	hook := func(path string) []any {
		return []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
			"type": "http", "url": path, "timeout": 90, "onFailure": "block",
		}}}}
	}
	return map[string]any{"PreToolUse": hook(url + "?wait=60s"), "PostToolUse": hook(url)}
}

// TestClaudeCodeHTTPHook: the four calls of TestClaudeCode, with the PDP
// as Claude Code's HTTP hook (POST /v1/hooks/claude-code) instead of a
// command.
func TestClaudeCodeHTTPHook(t *testing.T) {
	claude := cli(t, "claude", "@anthropic-ai/claude-code@"+claudeCodeVersion)
	url := startPDP(t, buildPDP(t))
	c := client.New(url)
	ctx := context.Background()

	home, ws := t.TempDir(), t.TempDir()
	sessionID := newUUID(t)
	pdpSession := "cc:" + sessionID
	if _, err := c.Sessions().Create(ctx, client.Session{ID: pdpSession, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	rules := map[string]string{"touch allowed": "allow", "touch denied": "deny"}
	if _, err := c.Sessions().Update(ctx, pdpSession, client.SessionChange{CommandRules: &rules}); err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{"touch asked-allowed": client.AllowOnce, "touch asked-denied": client.DenyAnswer}
	person(t, c, pdpSession, func(command string) string { return answers[command] })

	script := []toolCall{bash("touch allowed"), bash("touch denied"), bash("touch asked-allowed"), bash("touch asked-denied")}
	claudeSettings(t, home, httpHooks(url+"/v1/hooks/claude-code"))
	model, out := runClaudeCode(t, claude, home, ws, script, sessionID)
	checkRan(t, ws, out)
	if results := model.results(); !strings.Contains(resultText(results["toolu_02"]), "toolperm:") {
		t.Errorf("the model was told for the denied call: %q, want the PDP's reason", resultText(results["toolu_02"]))
	}
	checkTrail(t, c, pdpSession, ws, true)
}

// TestClaudeCodeServerDown: with the PDP unreachable, Claude Code runs
// nothing — through the command hook (which answers deny) and through
// an HTTP hook with "onFailure": "block".
func TestClaudeCodeServerDown(t *testing.T) {
	claude := cli(t, "claude", "@anthropic-ai/claude-code@"+claudeCodeVersion)
	bin := buildPDP(t)
	down := deadURL(t)
	for name, hooks := range map[string]map[string]any{
		"command hook": {"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{
			"type": "command", "command": fmt.Sprintf("%s hook claude-code --url %s", bin, down)}}}}},
		"HTTP hook": httpHooks(down + "/v1/hooks/claude-code"),
	} {
		t.Run(name, func(t *testing.T) {
			home, ws := t.TempDir(), t.TempDir()
			claudeSettings(t, home, hooks)
			model, out := runClaudeCode(t, claude, home, ws, []toolCall{bash("touch ran-while-down")}, "")
			if exists(ws, "ran-while-down") {
				t.Fatalf("the call ran with the PDP down\n%s", out)
			}
			if r := model.results()["toolu_01"]; !r.IsError {
				t.Errorf("the model was told: %q, want a blocked call", resultText(r))
			}
		})
	}
}
