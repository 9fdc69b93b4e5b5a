package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
)

// agentEvent is an event of an agent adapter's golden files. Their shell
// events run "git status" and "cat README.md", which the policy judges
// reads by their effects; these tests need shell calls that ask, so the
// commands are "make check" and "make docs".
func agentEvent(t *testing.T, dir, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "hooks", dir, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("git status", "make check", "cat README.md", "make docs").Replace(string(raw))
}

// postHook sends an agent's event to POST /v1/hooks/{agent} and returns
// the status and the body.
func postHook(t *testing.T, url, agent, token, event string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/hooks/"+agent, strings.NewReader(event))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// seenInBody is the decision an agent reads in an HTTP answer, by its
// own rules: "runs anyway" is anything it would take for a failed hook.
func seenInBody(t *testing.T, agent string, status int, body string) (decision, reason string) {
	t.Helper()
	if status != http.StatusOK {
		return "runs anyway", body
	}
	switch agent {
	case "claude-code", "codex":
		var out struct {
			HookSpecificOutput *struct {
				HookEventName, PermissionDecision, PermissionDecisionReason string
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(body), &out) != nil {
			return "runs anyway", body
		}
		if out.HookSpecificOutput == nil {
			if agent == "codex" && strings.TrimSpace(body) == "{}" {
				return "allow", ""
			}
			return "runs anyway", body
		}
		h := out.HookSpecificOutput
		if h.HookEventName != "PreToolUse" || (agent == "codex" && h.PermissionDecision != "deny") {
			return "runs anyway", body
		}
		return h.PermissionDecision, h.PermissionDecisionReason
	case "gemini-cli":
		var out struct{ Decision, Reason string }
		if json.Unmarshal([]byte(body), &out) != nil {
			return "runs anyway", body
		}
		return out.Decision, out.Reason
	case "cursor":
		var out struct {
			Permission   string `json:"permission"`
			AgentMessage string `json:"agent_message"`
		}
		if json.Unmarshal([]byte(body), &out) != nil {
			return "runs anyway", body
		}
		return out.Permission, out.AgentMessage
	}
	t.Fatalf("no reading for %s", agent)
	return "", ""
}

type hookCase struct {
	agent, event, token string
	want                string
	says                []string
}

// Each agent's events through the endpoint, read as the agent reads the
// answer: allow, deny, ask (Codex: a deny saying where to answer),
// malformed input, a token missing or of the wrong role.
func TestHookEndpointAnswersEachAgentInItsOwnShape(t *testing.T) {
	srv := testserver.New(t, testserver.Tokens(
		testserver.Token("runtime", "d-secret", httpapi.Dispatcher), testserver.Token("desktop", "u-secret", httpapi.User)))
	person := client.New(srv.URL, client.WithToken("u-secret"))
	if _, err := person.Sessions().Create(context.Background(), client.Session{ID: "codex:019a3c5e-0000-7000-8000-000000000001", Workspace: "/home/dev/proj", PermissionLevel: "READ_WRITE"}); err != nil {
		t.Fatal(err)
	}
	codexWriter := strings.Replace(agentEvent(t, "codex", "pre_apply_patch.json"), "019a3c5e-7b2d-7f31-9a4e-2c8d5f1b6e90", "019a3c5e-0000-7000-8000-000000000001", 1)
	cursorRead := strings.Replace(agentEvent(t, "cursor", "before_read_file.json"), "/home/dev/proj/.env", "/home/dev/proj/go.mod", 1)
	tok := "d-secret"
	cases := map[string]hookCase{
		"claude-code allow":      {"claude-code", agentEvent(t, "claudecode", "read_inside.json"), tok, "allow", []string{"fs.read"}},
		"claude-code deny":       {"claude-code", agentEvent(t, "claudecode", "read_outside.json"), tok, "deny", []string{"OUTSIDE_WORKSPACE"}},
		"claude-code ask":        {"claude-code", agentEvent(t, "claudecode", "bash_git_status.json"), tok, "ask", []string{"shell.exec"}},
		"claude-code malformed":  {"claude-code", `{"hook_event_name":`, tok, "deny", []string{"not JSON"}},
		"claude-code no token":   {"claude-code", agentEvent(t, "claudecode", "read_inside.json"), "", "deny", []string{"bearer token"}},
		"claude-code a person":   {"claude-code", agentEvent(t, "claudecode", "read_inside.json"), "u-secret", "deny", []string{"may not"}},
		"codex allow":            {"codex", codexWriter, tok, "allow", nil},
		"codex deny":             {"codex", agentEvent(t, "codex", "pre_mcp.json"), tok, "deny", []string{"DANGEROUS_NO_RULE"}},
		"codex ask is a deny":    {"codex", agentEvent(t, "codex", "pre_bash.json"), tok, "deny", []string{"pdp answer", "/ui/"}},
		"codex malformed":        {"codex", `[]`, tok, "deny", []string{"could not decide"}},
		"codex no token":         {"codex", codexWriter, "", "deny", []string{"bearer token"}},
		"gemini-cli allow":       {"gemini-cli", agentEvent(t, "geminicli", "before_read_file.json"), tok, "allow", []string{"fs.read"}},
		"gemini-cli deny":        {"gemini-cli", agentEvent(t, "geminicli", "before_read_outside.json"), tok, "deny", []string{"OUTSIDE_WORKSPACE"}},
		"gemini-cli ask":         {"gemini-cli", agentEvent(t, "geminicli", "before_shell.json"), tok, "ask", []string{"shell.exec"}},
		"gemini-cli malformed":   {"gemini-cli", `{"hook_event_name":"BeforeTool"}`, tok, "deny", []string{"names no tool"}},
		"gemini-cli wrong token": {"gemini-cli", agentEvent(t, "geminicli", "before_read_file.json"), "nope", "deny", []string{"bearer token"}},
		"cursor allow":           {"cursor", cursorRead, tok, "allow", []string{"fs.read"}},
		"cursor deny":            {"cursor", agentEvent(t, "cursor", "before_read_file.json"), tok, "deny", []string{".env"}},
		"cursor ask":             {"cursor", agentEvent(t, "cursor", "before_shell.json"), tok, "ask", []string{"shell.exec"}},
		"cursor malformed":       {"cursor", `{"hook_event_name":"preToolUse"}`, tok, "deny", []string{"no conversation_id"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, body := postHook(t, srv.URL, tc.agent, tc.token, tc.event)
			got, why := seenInBody(t, tc.agent, status, body)
			if got != tc.want {
				t.Fatalf("%s reads %s from %d %s, want %s", tc.agent, got, status, body, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(why, s) {
					t.Fatalf("the reason %q does not say %q", why, s)
				}
			}
		})
	}
	t.Run("an unknown agent", func(t *testing.T) {
		if status, _ := postHook(t, srv.URL, "frobnicate", tok, `{}`); status != http.StatusNotFound {
			t.Fatalf("status %d", status)
		}
	})
}

// A store that is down is each agent's deny, never an error status.
func TestHookEndpointStoreDownIsADeny(t *testing.T) {
	srv := testserver.New(t)
	if err := srv.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for agent, event := range map[string]string{
		"claude-code": agentEvent(t, "claudecode", "read_inside.json"),
		"codex":       agentEvent(t, "codex", "pre_bash.json"),
		"gemini-cli":  agentEvent(t, "geminicli", "before_read_file.json"),
		"cursor":      agentEvent(t, "cursor", "before_shell.json"),
	} {
		status, body := postHook(t, srv.URL, agent, "", event)
		if got, _ := seenInBody(t, agent, status, body); got != "deny" {
			t.Fatalf("%s reads %s from %d %s", agent, got, status, body)
		}
	}
}

// ?wait= holds a Codex ask for a person's answer.
func TestHookEndpointWaitsForAPerson(t *testing.T) {
	srv := testserver.New(t)
	person := client.New(srv.URL)
	answered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			page, err := person.Decisions(ctx, client.Filter{Decision: client.Ask, Limit: 1})
			if err == nil && len(page.Decisions) == 1 {
				_, err = person.Answer(ctx, page.Decisions[0].DecisionID, client.AllowOnce, "desktop")
				answered <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		answered <- ctx.Err()
	}()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/hooks/codex?wait=50s", strings.NewReader(agentEvent(t, "codex", "pre_bash.json")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if got, why := seenInBody(t, "codex", resp.StatusCode, string(raw)); got != "allow" {
		t.Fatalf("codex reads %s (%s) after a person allowed it", got, why)
	}
}
