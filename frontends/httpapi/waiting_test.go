package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
)

// TestWhoWaits: GET /v1/decisions?decision=ask&pending=true lists the
// unanswered asks only, the ones a runtime is parked on first, each with
// who waits (the token's name) and since when; GET /v1/decisions/{id}
// says the same; when the waiter goes away the ask has nobody waiting.
func TestWhoWaits(t *testing.T) {
	logger, parked := logged("waiting for an answer")
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Tokens = []httpapi.Token{token("runtime-a", "d-secret", httpapi.Dispatcher), token("desktop", "u-secret", httpapi.User)}
		c.MaxWait, c.Logger, c.RefusalsPerSecond = time.Hour, logger, 1000
	})
	runtime, person := s.as("d-secret"), s.as("u-secret")
	first := runtime.decide(shell("w", "make docs -n 1"))["decision_id"].(string)
	second := runtime.decide(shell("w", "make docs -n 2"))["decision_id"].(string)
	answered := runtime.decide(shell("w", "make docs -n 3"))["decision_id"].(string)
	allowed := runtime.decide(map[string]any{"session_id": "w", "tool": "read_file", "args": map[string]any{"path": "a.txt"}, "cwd": "/home/u/proj"})
	person.mustStatus(200, "POST", "/v1/decisions/"+answered+"/answer", map[string]any{"answer": "deny"})

	ctx, leave := context.WithCancel(t.Context())
	defer leave()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.srv.URL+"/v1/decisions/"+first+"?wait=1h", nil)
		req.Header.Set("Authorization", "Bearer d-secret")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	parkedAt := time.Now()
	if id := attr(<-parked, "decision_id"); id != first {
		t.Fatalf("parked on %s", id)
	}

	list := person.mustStatus(200, "GET", "/v1/decisions?decision=ask&pending=true", nil)["decisions"].([]any)
	if len(list) != 2 {
		t.Fatalf("pending asks = %v", list)
	}
	top, next := list[0].(map[string]any), list[1].(map[string]any)
	if top["decision_id"] != first || next["decision_id"] != second {
		t.Fatalf("pending asks = %v, %v; want the waited-on %s first, then %s", top["decision_id"], next["decision_id"], first, second)
	}
	wantWaiter(t, top["waiting"], "runtime-a", parkedAt)
	if w, ok := next["waiting"].([]any); !ok || len(w) != 0 {
		t.Fatalf("waiting on the ask nobody waits on = %#v, want []", next["waiting"])
	}
	wantWaiter(t, person.mustStatus(200, "GET", "/v1/decisions/"+first, nil)["waiting"], "runtime-a", parkedAt)
	if w, ok := person.mustStatus(200, "GET", "/v1/decisions/"+answered, nil)["waiting"].([]any); !ok || len(w) != 0 {
		t.Fatalf("waiting on an answered ask = %#v, want []", w)
	}
	if rec := person.mustStatus(200, "GET", "/v1/decisions/"+allowed["decision_id"].(string), nil); rec["waiting"] != nil {
		t.Fatalf("an allow carries waiting: %v", rec["waiting"])
	}

	// The runtime goes away: within the linger the ask has nobody waiting.
	leave()
	<-gone
	for deadline := time.Now().Add(10 * pdp.WaitLinger); ; {
		rec := person.mustStatus(200, "GET", "/v1/decisions/"+first, nil)
		if w, ok := rec["waiting"].([]any); ok && len(w) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after the waiter left: %v", rec["waiting"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	list = person.mustStatus(200, "GET", "/v1/decisions?pending=true", nil)["decisions"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["decision_id"] != second {
		t.Fatalf("pending asks after the waiter left = %v, want newest first", list)
	}

	for _, bad := range []string{"pending=yes", "pending=true&decision=allow"} {
		person.mustStatus(400, "GET", "/v1/decisions?"+bad, nil)
	}
}

func wantWaiter(t *testing.T, got any, by string, after time.Time) {
	t.Helper()
	w, ok := got.([]any)
	if !ok || len(w) != 1 {
		t.Fatalf("waiting = %#v, want one waiter", got)
	}
	entry := w[0].(map[string]any)
	since, err := time.Parse(time.RFC3339Nano, entry["since"].(string))
	if entry["by"] != by || err != nil || since.Before(after.Add(-time.Second)) || since.After(time.Now()) {
		t.Fatalf("waiter = %v, want %s since about %v", entry, by, after)
	}
}
