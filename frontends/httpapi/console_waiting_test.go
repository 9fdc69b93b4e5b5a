package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
)

// TestConsoleInboxShowsWhoWaits: the inbox says which runtime is parked
// on an ask and for how long, lists that ask first, and says "nobody
// waiting" once the runtime goes away.
func TestConsoleInboxShowsWhoWaits(t *testing.T) {
	logger, parked := logged("waiting for an answer")
	s := startServiceWith(t, func(c *httpapi.Config, _ *pdp.Components) {
		c.Tokens = []httpapi.Token{token("runtime-a", "d-secret", httpapi.Dispatcher), token("desktop", "u-secret", httpapi.User)}
		c.MaxWait, c.Logger, c.RefusalsPerSecond = time.Hour, logger, 1000
	})
	runtime := s.as("d-secret")
	waited := runtime.decide(shell("cw", "make docs -n 1"))["decision_id"].(string)
	alone := runtime.decide(shell("cw", "make docs -n 2"))["decision_id"].(string)

	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/"),
		chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem("pdp-token", "u-secret")`),
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		textIs(`#inbox-live`, "live"),
		textIs(`#ask-`+waited+` td.waiting`, "nobody waiting"),
		textIs(`#ask-`+alone+` td.waiting`, "nobody waiting"),
	); err != nil {
		t.Fatal(err)
	}

	wait, leave := context.WithCancel(t.Context())
	defer leave()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		req, _ := http.NewRequestWithContext(wait, "GET", s.srv.URL+"/v1/decisions/"+waited+"?wait=1h", nil)
		req.Header.Set("Authorization", "Bearer d-secret")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-parked
	if err := chromedp.Do(ctx,
		chromedp.Poll[chromedp.Void](`(() => { const e = document.querySelector("#ask-`+waited+` td.waiting"); return !!e && /^waiting: runtime-a, \d+ s$/.test(e.textContent); })()`,
			chromedp.WithPollingTimeout(20*time.Second)),
		// The waited-on ask is listed first, though it is the older one.
		chromedp.Poll[chromedp.Void](`document.querySelector("#inbox-rows tr").id === "ask-`+waited+`"`, chromedp.WithPollingTimeout(5*time.Second)),
		textIs(`#ask-`+alone+` td.waiting`, "nobody waiting"),
	); err != nil {
		t.Fatalf("the waiter is not shown: %v", err)
	}
	screenshot(t, ctx, "console-inbox-waiting")

	leave()
	<-gone
	if err := chromedp.Do(ctx, textIs(`#ask-`+waited+` td.waiting`, "nobody waiting")); err != nil {
		t.Fatalf("the ask still shows a waiter after it went away: %v", err)
	}
}
