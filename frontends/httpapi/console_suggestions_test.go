package httpapi_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleSuggestions mines a trail on the Suggestions page, shows a
// suggestion's policy data and follows an example to its decision.
func TestConsoleSuggestions(t *testing.T) {
	s := newService(t)
	for _, id := range []string{"c1", "c2"} {
		s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": id, "workspace": "/w"})
		for _, cmd := range []string{"make lint", "make lint --stat", "make lint HEAD"} {
			d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": "/w"})
			s.mustStatus(200, "POST", "/v1/decisions/"+d["decision_id"].(string)+"/answer", map[string]any{"answer": "allow_once", "channel": "console"})
		}
		d := s.decide(map[string]any{"session_id": id, "tool": "shell", "args": map[string]any{"command": "make docs -p"}, "cwd": "/w"})
		s.mustStatus(200, "POST", "/v1/decisions/"+d["decision_id"].(string)+"/answer", map[string]any{"answer": "deny", "channel": "console"})
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#suggestions"),
		chromedp.WaitVisible(`#suggestions-form`),
		chromedp.SetValue(`#suggestions-form input[name=min_answers]`, "3"),
		chromedp.Click(`#suggestions-form button[type=submit]`),
		// The rows of the load asked for, not of the page's first load,
		// which the asked-for one replaces.
		chromedp.WaitReady(`#suggestions-form:not([aria-busy])`),
		textIs(`#suggestion-rows tr td.pattern`, "make lint"),
		textIs(`#suggestion-rows tr td:nth-child(3)`, "6 allows in 2 sessions, 0 denied, 0 expired"),
		textIs(`#suggestion-rows tr td:nth-child(5)`, "6 asks → allow, 0 other changes"),
		chromedp.Click(`#suggestion-rows button.copy`),
		chromedp.WaitVisible(`#suggestion-data`),
		textIs(`#suggestion-data`, "{\n  \"commands\": {\n    \"make lint\": \"allow\"\n  }\n}"),
		chromedp.Click(`#suggestion-rows tr td:nth-child(6) a`),
		chromedp.WaitVisible(`#suggestion-event`),
		chromedp.SetValue(`#suggestions-form input[name=accept_session]`, "c2"),
		chromedp.Click(`#suggestion-rows button.accept`),
		chromedp.WaitVisible(`#suggestion-rows button.accept[disabled]`),
	); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "console-suggestions")
	// The fingerprint is granted to the project: a new session of it is
	// allowed the call.
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "c3", "workspace": "/w"})
	d := s.decide(map[string]any{"session_id": "c3", "tool": "shell", "args": map[string]any{"command": "make lint"}, "cwd": "/w"})
	if d["decision"] != "allow" || d["source"] != "project-grant" {
		t.Fatalf("after the accept: %v", d)
	}
}
