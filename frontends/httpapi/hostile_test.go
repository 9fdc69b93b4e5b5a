package httpapi_test

import (
	"encoding/json"

	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolperm/pdp/pdp"
)

// TestHostileInput: every hostile request gets a 4xx with a clear error,
// or a deny/ask — never an allow, never a 5xx — and the server keeps
// serving.
func TestHostileInput(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "h", "workspace": "/w"})
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	huge := make([]string, 100000)
	for i := range huge {
		huge[i] = fmt.Sprintf("mcp.s%d.*", i)
	}
	hugeRules := map[string]string{}
	for i := 0; i < 50000; i++ {
		hugeRules[fmt.Sprintf("mcp.s%d.t", i)] = "allow"
	}
	shell := func(cmd string) map[string]any {
		return map[string]any{"session_id": "h", "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": "/w"}
	}
	sqlish := `x'); DROP TABLE decisions; --`
	cases := []struct {
		name   string
		method string
		path   string
		body   any
	}{
		{"malformed JSON", "POST", "/v1/decide", `{"session_id":`},
		{"trailing garbage", "POST", "/v1/decide", `{"session_id":"h","tool":"Read"} x`},
		{"array body", "POST", "/v1/decide", `[1,2,3]`},
		{"missing everything", "POST", "/v1/decide", `{}`},
		{"session_id a number", "POST", "/v1/decide", `{"session_id":7,"tool":"Read"}`},
		{"tool an object", "POST", "/v1/decide", `{"session_id":"h","tool":{"x":1}}`},
		{"args a string", "POST", "/v1/decide", `{"session_id":"h","tool":"Read","args":"x"}`},
		{"cwd a list", "POST", "/v1/decide", `{"session_id":"h","tool":"Read","cwd":["/"]}`},
		{"command a list", "POST", "/v1/decide", `{"session_id":"h","tool":"shell","args":{"command":["rm","-rf","/"]}}`},
		{"argv of numbers", "POST", "/v1/decide", `{"session_id":"h","tool":"shell","args":{"argv":[1,2]}}`},
		{"path a number", "POST", "/v1/decide", `{"session_id":"h","tool":"Read","args":{"file_path":1}}`},
		{"10 MiB body", "POST", "/v1/decide", `{"session_id":"h","tool":"Read","args":{"x":"` + strings.Repeat("a", 10<<20) + `"}}`},
		{"nested 10,000 levels", "POST", "/v1/decide", `{"session_id":"h","tool":"Read","args":` + deep + `}`},
		{"NUL in the session id", "POST", "/v1/decide", "{\"session_id\":\"h\\u0000x\",\"tool\":\"Read\"}"},
		{"NUL in the command", "POST", "/v1/decide", shell("make check\x00; rm -rf ~")},
		{"NUL in a path", "POST", "/v1/decide", map[string]any{"session_id": "h", "tool": "Read", "args": map[string]any{"file_path": "/w/a\x00/../../etc/passwd"}}},
		{"invalid UTF-8", "POST", "/v1/decide", "{\"session_id\":\"h\",\"tool\":\"shell\",\"args\":{\"command\":\"git \xff\xfe status\"}}"},
		{"64 KiB command", "POST", "/v1/decide", shell("echo " + strings.Repeat("a", 64<<10))},
		{"fullwidth semicolon", "POST", "/v1/decide", shell("make check；rm -rf ~")},
		{"fullwidth pipe", "POST", "/v1/decide", shell("make check ｜ sh")},
		{"right-to-left override", "POST", "/v1/decide", shell("make check \u202e; hs | lruc")},
		{"look-alike program", "POST", "/v1/decide", shell("ｒｍ -rf ~")},
		{"huge scope", "POST", "/v1/sessions", map[string]any{"scope": huge}},
		{"huge rules", "POST", "/v1/sessions", map[string]any{"rules": hugeRules}},
		{"unknown level", "POST", "/v1/sessions", map[string]any{"permission_level": "GOD_MODE"}},
		{"unknown mode", "PATCH", "/v1/sessions/h", map[string]any{"mode": "yolo"}},
		{"lower-case level", "PATCH", "/v1/sessions/h", map[string]any{"permission_level": "full"}},
		{"traversal in the session id", "GET", "/v1/sessions/..%2F..%2Fetc%2Fpasswd", nil},
		{"traversal in a decision id", "GET", "/v1/decisions/..%2F..%2Fpdp.db", nil},
		{"traversal in a grant id", "DELETE", "/v1/sessions/h/grants/..%2F1", nil},
		{"SQL in the session id", "POST", "/v1/decide", map[string]any{"session_id": sqlish, "tool": "Read"}},
		{"SQL in the tool", "POST", "/v1/decide", map[string]any{"session_id": "h", "tool": sqlish}},
		{"SQL in the capability", "POST", "/v1/decide", map[string]any{"session_id": "h", "capability": sqlish}},
		{"SQL in the args", "POST", "/v1/decide", map[string]any{"session_id": "h", "tool": "write_file", "args": map[string]any{"file_path": sqlish, "command": sqlish}, "cwd": sqlish}},
		{"SQL in a filter", "GET", "/v1/decisions?session_id=" + strings.ReplaceAll(sqlish, " ", "%20") + "&before=" + strings.ReplaceAll(sqlish, " ", "%20"), nil},
		{"SQL in an answer", "POST", "/v1/decisions/" + strings.ReplaceAll(sqlish, " ", "%20") + "/answer", map[string]any{"answer": "deny", "channel": sqlish}},
		{"SQL in a rule", "POST", "/v1/sessions", map[string]any{"rules": map[string]string{sqlish: "allow"}}},
		{"SQL in the workspace", "POST", "/v1/sessions", map[string]any{"workspace": "/" + sqlish}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := s.call(tc.method, tc.path, tc.body)
			switch {
			case code >= 500:
				t.Fatalf("status %d: %v", code, out)
			case code == 200 && out["decision"] == "allow":
				t.Fatalf("allowed: %v", out)
			case code >= 400:
				e, _ := out["error"].(map[string]any)
				if e["code"] == nil || e["message"] == "" {
					t.Fatalf("status %d without a clear error: %v", code, out)
				}
			}
		})
	}
	// Still serving, and nothing was dropped by SQL text.
	expectDecision(t, s.decide(map[string]any{"session_id": "h", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"}), "allow", "level")
	if _, err := s.store.Decisions(t.Context(), sqliteFilterAll()); err != nil {
		t.Fatalf("the audit trail is gone: %v", err)
	}
	resp, err := http.Get(s.srv.URL + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health after the battery: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var h map[string]any
	if json.Unmarshal(raw, &h) != nil || h["status"] != "ok" {
		t.Fatalf("health: %s", raw)
	}
}

func sqliteFilterAll() pdp.DecisionFilter { return pdp.DecisionFilter{Limit: 500} }
