package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleInboxKeepsAnAskWithAnOutcome: a runtime's outcome is no
// answer, so the ask stays in the inbox, saying what the runtime
// reported, until a person answers it.
func TestConsoleInboxKeepsAnAskWithAnOutcome(t *testing.T) {
	s := newService(t)
	ctx := browser(t)
	body := shell("oc", "make check")
	body["tool_use_id"] = "toolu_oc"
	id := s.decide(body)["decision_id"].(string)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		textIs(`#inbox-live`, "live"),
		chromedp.WaitVisible(`#ask-`+id),
	); err != nil {
		t.Fatal(err)
	}
	s.mustStatus(200, "POST", "/v1/decisions/by-tool-use/toolu_oc/outcome", map[string]any{"answer": "allow_once", "channel": "claude-code"})
	if err := chromedp.Do(ctx,
		textIs(`#ask-`+id+` .outcome-note`, "claude-code reported: the call ran (allow_once) — not an answer"),
	); err != nil {
		t.Fatalf("the outcome is not shown on the pending ask: %v", err)
	}
	s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny", "channel": "terminal"})
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := chromedp.Do(c, chromedp.WaitNotPresent(`#ask-`+id)); err != nil {
		t.Fatalf("the answered ask stayed: %v", err)
	}
}
