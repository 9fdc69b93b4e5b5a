package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
)

// An event over the server's body limit — a model that writes a file of
// a few MiB makes one — is each agent's deny with status 200: Claude
// Code runs the tool on a 413 unless its hook says onFailure "block".
func TestHookEventOverTheBodyLimitIsADeny(t *testing.T) {
	srv := testserver.New(t, testserver.Configure(func(c *httpapi.Config, _ *pdp.Components) { c.MaxBodyBytes = 64 << 10 }))
	big := strings.Repeat("x", 128<<10)
	for _, agent := range []string{"claude-code", "codex", "gemini-cli", "cursor"} {
		t.Run(agent, func(t *testing.T) {
			status, body := postHook(t, srv.URL, agent, "", hookEvent(t, agent, "big", "Write", map[string]any{"file_path": "/home/dev/proj/a", "content": big}))
			if got, why := seenInBody(t, agent, status, body); got != "deny" || !strings.Contains(why, "max_body_bytes") {
				t.Fatalf("%s reads %s from %d %s", agent, got, status, why)
			}
		})
	}
	// Other routes keep the limit's 413.
	resp, err := http.Post(srv.URL+"/v1/decide", "application/json", strings.NewReader(`{"session_id":"s","tool":"Read","args":{"x":"`+big+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("decide over the limit: %d", resp.StatusCode)
	}
}
