package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleSignInAndAnswer: in Chromium, a person signs in with the
// organisation's provider (its own login page), answers an ask in the
// console, and the audit trail shows their e-mail; then, signed in, they
// confirm an answer link, which records them too.
func TestConsoleSignInAndAnswer(t *testing.T) {
	s := startSignIn(t)
	ask := s.ask("e2e")
	linked := s.ask("e2e-link")
	tickets, err := s.store.IssueTickets(t.Context(), linked, "slack", []string{"allow_once", "deny"}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/ui/#inbox"),
		chromedp.WaitVisible(`#sign-in`),
		chromedp.Click(`#sign-in`),
		// The provider's login page.
		chromedp.WaitVisible(`#username`),
		chromedp.SendKeys(`#username`, "alice"),
		chromedp.SendKeys(`#password`, "verysecure"),
		chromedp.Submit(`#password`),
		// Back in the console, signed in.
		chromedp.WaitVisible(`#sign-out`),
		textIs(`#person`, "Signed in as alice@example.com"),
		chromedp.WaitVisible(`#ask-`+ask+` .allow-once`),
	); err != nil {
		t.Fatalf("signing in: %v", err)
	}
	screenshot(t, ctx, "console-signed-in")
	if err := chromedp.Do(ctx,
		clickNow(`#ask-`+ask+` .allow-once`),
		chromedp.WaitNotPresent(`#ask-`+ask),
		chromedp.Navigate(s.srv.URL+"/ui/#audit"),
		chromedp.WaitVisible(`#audit-rows tr`),
	); err != nil {
		t.Fatalf("answering in the console: %v", err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('#audit-rows td.answered')].map((td) => td.textContent).join("|")`))
	if err != nil || !strings.Contains(shown, "allow_once (console, alice@example.com)") {
		t.Fatalf("the audit page shows %q (%v)", shown, err)
	}
	if rec, err := s.store.Decision(t.Context(), ask); err != nil || rec.Answer == nil || rec.Answer.AnsweredBy != "alice@example.com" || rec.Answer.AnsweredBySubject != "alice" {
		t.Fatalf("the trail's answer: %+v (%v)", rec.Answer, err)
	}

	// The answer link's page, signed in: it names the person, and its
	// form posts from this origin.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/v1/decisions/"+linked+"/answer?ticket="+tickets["deny"]),
		chromedp.WaitVisible(`#person`),
		textIs(`#person`, "Signed in as alice@example.com."),
		chromedp.Click(`#confirm`),
		chromedp.WaitVisible(`//h1[text()="Answered: deny"]`),
	); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the answer link: %v\n%s", err, page)
	}
	if rec, err := s.store.Decision(t.Context(), linked); err != nil || rec.Answer == nil || rec.Answer.AnsweredBy != "alice@example.com" || rec.Answer.Channel != "slack" {
		t.Fatalf("the link's answer: %+v (%v)", rec.Answer, err)
	}
}

// TestConsoleAnswerLinkConfirms: the answer link's confirmation page,
// in Chromium, answers when its button is pressed. Its form's POST must
// carry this origin: under Referrer-Policy: no-referrer a browser sends
// "Origin: null", which the origin check refuses.
func TestConsoleAnswerLinkConfirms(t *testing.T) {
	s := newService(t)
	id := s.decide(shell("link", "make deploy"))["decision_id"].(string)
	tickets, err := s.store.IssueTickets(t.Context(), id, "slack", []string{"allow_once", "deny"}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(s.srv.URL+"/v1/decisions/"+id+"/answer?ticket="+tickets["allow_once"]),
		chromedp.WaitVisible(`#confirm`),
		chromedp.Click(`#confirm`),
		chromedp.WaitVisible(`//h1[text()="Answered: allow_once"]`),
	); err != nil {
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("confirming the link: %v\n%s", err, page)
	}
}
