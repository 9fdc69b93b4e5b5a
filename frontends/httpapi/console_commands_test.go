package httpapi_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

func TestConsoleSimulatorCommandRulesAndParts(t *testing.T) {
	s := newService(t)
	ctx := browser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#simulator"),
		chromedp.WaitVisible(`#verdict.ask`),
		typeInto(`input[name=command]`, "go test ./... && make check"),
		chromedp.Click(`#add-command-rule`),
		chromedp.SendKeys(`.command-prefix`, "go test"),
		chromedp.WaitVisible(`#parts-box`),
		textIs(`#parts tbody tr:first-child td:nth-child(3)`, "allow"),
		textIs(`#parts tbody tr:nth-child(2) td:nth-child(3)`, "the level decides"),
		textIs(`#fact-fingerprint`, "none"),
		textIs(`#fact-grantable`, "yes"),
	)
	if err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#sim-result').innerText`))
		t.Fatalf("command rule and parts: %v\n%s", err, state)
	}
	screenshot(t, ctx, "console-simulator-parts")
}

func TestConsoleProjectGrant(t *testing.T) {
	s := newService(t)
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "pa", "workspace": "/w"})
	s.mustStatus(201, "POST", "/v1/sessions", map[string]any{"id": "pb", "workspace": "/w"})
	ask := s.decide(map[string]any{"session_id": "pa", "tool": "shell", "args": map[string]any{"command": "make test"}, "cwd": "/w"})
	id := ask["decision_id"].(string)
	ctx := browser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		chromedp.WaitVisible(`#ask-`+id+` .allow-project`),
		clickNow(`#ask-`+id+` .allow-project`),
		chromedp.WaitNotPresent(`#ask-`+id),
	)
	if err != nil {
		t.Fatal(err)
	}
	expectDecision(t, s.decide(map[string]any{"session_id": "pb", "tool": "shell", "args": map[string]any{"command": "make test"}, "cwd": "/w"}), "allow", "project-grant")
	err = chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#sessions"),
		chromedp.WaitVisible(`#session-pb .grant.project .revoke`),
		chromedp.Click(`#session-pb .grant.project .revoke`),
		chromedp.WaitNotPresent(`#session-pa .grant.project`),
	)
	if err != nil {
		t.Fatal(err)
	}
	expectDecision(t, s.decide(map[string]any{"session_id": "pa", "tool": "shell", "args": map[string]any{"command": "make test"}, "cwd": "/w"}), "ask", "level")
}
