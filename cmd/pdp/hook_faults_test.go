package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A PDP that answers anything but a complete decision — an error status,
// an empty body, a bare allow, a body over the client's limit, no answer
// within --timeout — is each agent's block, never its allow nor an
// answer it would take for a failed hook (every agent then runs the
// tool), whichever of the hook's requests it fails.
func TestAgentCommandHooksFailClosedOnAnyBadAnswer(t *testing.T) {
	stop := make(chan struct{})
	complete := `{"decision_id":"d1","decision":"allow","need_approval":false,"source":"level","rule":"fs.read","reason":"ok","capability":"fs.read","fingerprint":null,"grantable":false,"danger":null,"revision":"r"}`
	faults := map[string]http.HandlerFunc{
		"503": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) },
		"401": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "who", http.StatusUnauthorized) },
		"404": http.NotFound,
		"empty body": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/sessions" {
				w.WriteHeader(http.StatusConflict)
			}
		},
		"bare allow": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"decision":"allow"}`)) },
		"allow then more": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(complete + `{"decision":"deny"}`))
		},
		"allow in another case": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Replace(complete, `"decision":"allow"`, `"decision":"deny","Decision":"allow"`, 1)))
		},
		"over the limit": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(complete[:len(complete)-1] + `,"pad":"` + strings.Repeat("x", 2<<20) + `"}`))
		},
		"no answer": func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		},
	}
	events := map[string]string{
		"codex":      agentEvent(t, "codex", "pre_bash.json"),
		"gemini-cli": agentEvent(t, "geminicli", "before_read_file.json"),
		"cursor":     agentEvent(t, "cursor", "before_shell.json"),
		// A sub-agent's call creates sessions before it decides.
		"codex sub-agent": agentEvent(t, "codex", "pre_subagent_bash.json"),
	}
	for fault, h := range faults {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		if fault == "no answer" {
			// Cleanups run last first: the handler is let go before Close
			// waits for it.
			t.Cleanup(func() { close(stop) })
		}
		for name, event := range events {
			agent, _, _ := strings.Cut(name, " ")
			t.Run(fault+"/"+name, func(t *testing.T) {
				r := runAgentHook(t, agent, event, "--url", srv.URL, "--timeout", "500ms")
				if got, why := seenBy[agent](r); got != "deny" {
					t.Fatalf("%s sees %s (%s)", agent, got, why)
				}
			})
		}
		t.Run(fault+"/claude-code", func(t *testing.T) {
			if got := runHook(t, payload(t, "subagent_read.json"), "--url", srv.URL, "--timeout", "500ms").HookSpecificOutput; got.PermissionDecision != "deny" {
				t.Fatalf("claude-code: %s (%s)", got.PermissionDecision, got.PermissionDecisionReason)
			}
		})
	}
}
