package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestTheProjectPolicyOverHTTP: a runtime's decide request carries the
// workspace's .toolperm/policy.json for a server that cannot read the
// workspace; the layer tightens in that workspace only, a copy over the
// limit is refused and recorded nowhere, and an unknown key is refused.
func TestTheProjectPolicyOverHTTP(t *testing.T) {
	s := newService(t)
	for _, id := range []string{"guarded", "plain"} {
		s.mustStatus(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"id": id, "workspace": "/home/u/" + id, "permission_level": "FULL"})
	}
	push := func(session string, project any) map[string]any {
		req := map[string]any{"session_id": session, "tool": "shell", "args": map[string]any{"command": "git push origin main"}, "cwd": "/home/u/" + session}
		if project != nil {
			req["project_policy"] = project
		}
		return req
	}
	denying := map[string]any{"dir": "/home/u/guarded", "content": `{"command_rules": {"git push": "deny"}}`}
	d := s.decide(push("guarded", denying))
	expectDecision(t, d, "deny", "project")
	if d["rule"] != "git push" || !strings.Contains(d["reason"].(string), "sent by the hook") {
		t.Fatalf("rule %v, reason %v", d["rule"], d["reason"])
	}
	expectDecision(t, s.decide(push("plain", nil)), "allow", "mode")
	expectDecision(t, s.decide(push("plain", map[string]any{"dir": "/home/u/plain", "content": `{"command_rules": {"git push": "allow"}}`})), "allow", "mode")

	_, before := s.call("GET", "/v1/decisions?limit=100", nil)
	for name, bad := range map[string]any{
		"too large":         map[string]any{"dir": "/home/u/plain", "content": strings.Repeat(" ", 64<<10+1)},
		"an unknown key":    map[string]any{"dir": "/home/u/plain", "content": "{}", "contents": "{}"},
		"no dir":            map[string]any{"content": "{}"},
		"not an object":     "{}",
		"a key twice":       `{"session_id":"plain","tool":"shell","args":{"command":"ls"},"project_policy":{"content":"{}","content":"{\"rules\":{}}"}}`,
		"an error too long": map[string]any{"dir": "/home/u/plain", "error": strings.Repeat("x", 1025)},
	} {
		t.Run(name, func(t *testing.T) {
			var body any = push("plain", bad)
			if raw, ok := bad.(string); ok && strings.HasPrefix(raw, `{"session_id"`) {
				body = raw
			}
			code, out := s.call("POST", "/v1/decide", body)
			if code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge { // a body over max_body_bytes is 413
				t.Fatalf("status %d (%v), want 400", code, out)
			}
		})
	}
	// Nor does a refused request create the session it names.
	fresh := push("never-made", map[string]any{"dir": "relative/dir", "content": "{}"})
	if code, out := s.call("POST", "/v1/decide", fresh); code != http.StatusBadRequest {
		t.Fatalf("a relative dir: status %d (%v), want 400", code, out)
	}
	s.mustStatus(http.StatusNotFound, "GET", "/v1/sessions/never-made", nil)
	_, after := s.call("GET", "/v1/decisions?limit=100", nil)
	if len(after["decisions"].([]any)) != len(before["decisions"].([]any)) {
		t.Fatalf("a refused request was recorded: %d decisions before, %d after", len(before["decisions"].([]any)), len(after["decisions"].([]any)))
	}
}
