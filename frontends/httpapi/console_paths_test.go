package httpapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleSimulatorPathRules edits path rules in the simulator and
// sees the one that matched.
func TestConsoleSimulatorPathRules(t *testing.T) {
	s := newService(t)
	ctx := browser(t)
	choose := func(sel, value string) step {
		return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
			js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, sel, value)
			_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			return chromedp.Void{}, err
		}
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#simulator"),
		chromedp.WaitVisible(`#verdict.ask`),
		typeInto(`input[name=command]`, ""),
		typeInto(`input[name=tool]`, "read_file"),
		typeInto(`input[name=path]`, ".env"),
		textIs(`#verdict`, "deny"),
		textIs(`#fact-rule`, ".env"),
		textIs(`#path-match td:nth-child(2)`, ".env — read /home/me/proj/.env"),
	)
	if err != nil {
		t.Fatalf("the shipped .env rule: %v", err)
	}
	err = chromedp.Do(ctx,
		typeInto(`input[name=path]`, "/opt/docs/a.md"),
		textIs(`#fact-rule`, "OUTSIDE_WORKSPACE"),
		chromedp.Click(`#add-path-rule`),
		choose(".path-access", "read"),
		choose(".path-action", "allow"),
		chromedp.SendKeys(`.path-pattern`, "/opt/docs/**"),
		textIs(`#verdict`, "allow"),
		textIs(`#path-match td:nth-child(1)`, "path (session)"),
		textIs(`#path-match td:nth-child(2)`, "/opt/docs/** — read /opt/docs/a.md"),
	)
	if err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#sim-result').innerText`))
		t.Fatalf("a place rule: %v\n%s", err, state)
	}
}
