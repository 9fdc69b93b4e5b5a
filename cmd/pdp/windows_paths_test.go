package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// edited is an agent's event (a golden file) with members set; a member
// of tool_input is written "tool_input.<name>".
func edited(t *testing.T, event string, set map[string]any) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(event), &ev); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if name, ok := strings.CutPrefix(k, "tool_input."); ok {
			ev["tool_input"].(map[string]any)[name] = v
			continue
		}
		ev[k] = v
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// windowsEvents are events of agents running on Windows, or naming a
// Windows path from a POSIX host. Read as POSIX paths, each of their
// Windows paths is relative: it would be confined within the workspace
// (C:\Windows\System32\… "inside" /home/dev/proj).
func windowsEvents(t *testing.T) map[string]struct{ agent, event string } {
	claudeRead := payload(t, "read_inside.json")
	return map[string]struct{ agent, event string }{
		"claude-code on Windows": {"claude-code", edited(t, claudeRead, map[string]any{
			"cwd": `C:\Users\dev\proj`, "tool_input.file_path": `C:\Users\dev\proj\src\main.go`})},
		"claude-code reads a drive path from a POSIX cwd": {"claude-code", edited(t, claudeRead, map[string]any{
			"tool_input.file_path": `C:\Windows\System32\drivers\etc\hosts`})},
		"claude-code writes a UNC path": {"claude-code", edited(t, payload(t, "write.json"), map[string]any{
			"tool_input.file_path": `\\fileserver\share\notes.txt`})},
		"codex on Windows": {"codex", edited(t, agentEvent(t, "codex", "pre_bash.json"), map[string]any{
			"cwd": `C:\Users\dev\proj`})},
		"gemini-cli on Windows": {"gemini-cli", edited(t, agentEvent(t, "geminicli", "before_read_file.json"), map[string]any{
			"cwd": `D:\work\proj`})},
		"cursor with a Windows workspace root": {"cursor", edited(t, agentEvent(t, "cursor", "before_read_file.json"), map[string]any{
			"workspace_roots": []any{"/c:/Users/dev/proj"}, "file_path": `c:\Users\dev\proj\go.mod`})},
	}
}

// agentVerdict is the decision and reason an agent reads in its hook's
// JSON answer (stdout of a command hook, the body of the hook endpoint),
// "" when there is none.
func agentVerdict(answer string) (decision, reason string) {
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
		Decision     string `json:"decision"`
		Reason       string `json:"reason"`
		Permission   string `json:"permission"`
		AgentMessage string `json:"agent_message"`
	}
	if json.Unmarshal([]byte(answer), &out) != nil {
		return "", ""
	}
	h := out.HookSpecificOutput
	return h.PermissionDecision + out.Decision + out.Permission, h.PermissionDecisionReason + out.Reason + out.AgentMessage
}

// commandVerdict is what the agent reads from its command hook.
func commandVerdict(agent string, r hookRun) (decision, reason string) {
	if see, ok := seenBy[agent]; ok {
		return see(r)
	}
	if r.exit != 0 {
		return "runs anyway", r.stdout + r.stderr
	}
	return agentVerdict(r.stdout)
}

// wantNotSupported fails unless the agent was told deny because Windows
// paths are not supported yet.
func wantNotSupported(t *testing.T, via, decision, reason string) {
	t.Helper()
	if decision != "deny" || !strings.Contains(reason, "Windows path") || !strings.Contains(reason, "not supported yet") {
		t.Fatalf("%s: %s (%s), want deny saying Windows paths are not supported yet", via, decision, reason)
	}
}

// TestWindowsPathsAreDeniedAsNotSupported: an event whose cwd, workspace
// or path is a Windows one is denied, saying Windows paths are not
// supported yet — through the hook endpoint, pdp's command hook and
// pdp-hook's — never judged as a POSIX path inside the workspace.
func TestWindowsPathsAreDeniedAsNotSupported(t *testing.T) {
	srv, _ := pdpTestServer(t)
	hookBin := buildHookBinary(t)
	for name, tc := range windowsEvents(t) {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", srv.URL+"/v1/hooks/"+tc.agent, strings.NewReader(tc.event))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /v1/hooks/%s: status %d: %s", tc.agent, resp.StatusCode, body)
			}
			decision, reason := agentVerdict(string(body))
			if tc.agent == "codex" && decision == "" {
				decision, reason = "runs anyway", string(body)
			}
			wantNotSupported(t, "the hook endpoint", decision, reason)

			decision, reason = commandVerdict(tc.agent, runAgentHook(t, tc.agent, tc.event, "--url", srv.URL))
			wantNotSupported(t, "pdp hook "+tc.agent, decision, reason)

			decision, reason = commandVerdict(tc.agent, runHookBinary(t, hookBin, tc.agent, tc.event, "--url", srv.URL))
			wantNotSupported(t, "pdp-hook hook "+tc.agent, decision, reason)
		})
	}
	// On Windows the project directory the agent sets is a Windows path
	// too: the hook denies before it asks (the server would refuse the
	// session's workspace, saying only that it is not absolute).
	posix := payload(t, "read_inside.json")
	r := runHookBinary(t, hookBin, "claude-code", posix, "--url", srv.URL, "--workspace", `C:\Users\dev\proj`)
	decision, reason := commandVerdict("claude-code", r)
	wantNotSupported(t, "pdp-hook with a Windows --workspace", decision, reason)
}
