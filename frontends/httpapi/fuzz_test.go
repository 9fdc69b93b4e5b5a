package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// FuzzDecideBody sends arbitrary bodies to POST /v1/decide: the answer
// is a 400 or 413 with the error shape, or a 200 with every field of a
// decision — never a 5xx, never a panic.
func FuzzDecideBody(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s","tool":"shell","args":{"command":"make check"},"cwd":"/w"}`,
		`{"session_id":"s","tool":"read_file","args":{"path":"../etc/passwd"},"cwd":"/w"}`,
		`{"session_id":"s","capability":"mcp.github.create_issue"}`,
		`{"session_id":"s","tool":"Bash","capability":"fs.read"}`,
		`{"session_id":"../x","tool":"Read"}`, `{}`, `[]`, `null`, `{`, `{"session_id":1}`,
		`{"session_id":"s","tool":"Read","args":{"file_path":["a"]}}`, `{"session_id":"s","tool":"Read","args":"x"}`,
		`{"session_id":"s","tool":"shell","args":{"command":"\u0000"}}`, `{"session_id":"s","tool":"shell","args":{"argv":[1,2]}}`,
		`{"session_id":"s'; DROP TABLE decisions;--","tool":"Read"}`, `{"session_id":"s","tool":"Read","extra":true}`,
	} {
		f.Add([]byte(seed))
	}
	api := testserver.New(f, testserver.SQLite(sqlite.Options{Synchronous: "OFF"}), testserver.Configure(func(c *httpapi.Config, _ *pdp.Components) {
		c.MaxBodyBytes = 64 << 10
	})).Handler
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/decide", bytes.NewReader(body))
		req.Host = "127.0.0.1:8181"
		api.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, rec.Body.String())
		}
		switch rec.Code {
		case http.StatusOK:
			for _, key := range []string{"decision_id", "decision", "need_approval", "source", "rule", "reason", "capability", "fingerprint", "grantable", "danger", "revision"} {
				if _, ok := out[key]; !ok {
					t.Fatalf("decision without %q: %v", key, out)
				}
			}
			if d := out["decision"]; d != "allow" && d != "ask" && d != "deny" {
				t.Fatalf("decision %v", d)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			e, _ := out["error"].(map[string]any)
			if e["code"] == nil || e["message"] == nil {
				t.Fatalf("error without code or message: %v", out)
			}
		default:
			t.Fatalf("status %d for %q: %v", rec.Code, body, out)
		}
	})
}
