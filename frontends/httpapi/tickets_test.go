package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/httpapi"
)

// page fetches an answer link the way a browser does.
func (s *service) page(method, path string) (int, string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.srv.URL+path, nil)
	req.Header.Set("Accept", "text/html")
	if method == http.MethodPost {
		req.Header.Set("Origin", s.srv.URL)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestAnswerLinks: a ticket answers one decision, once, with its one
// answer, recorded with its sink's name as the channel; a GET shows a
// confirmation page and answers nothing; a forged, another decision's,
// used or expired ticket is refused and recorded as an access event.
func TestAnswerLinks(t *testing.T) {
	s := securedService(t, token("runtime", "d-secret", httpapi.Dispatcher), token("audit", "a-secret", httpapi.Auditor))
	runtime := s.as("d-secret")
	id := runtime.decide(shell("tk", "make docs <script>alert(1)</script>"))["decision_id"].(string)
	other := runtime.decide(shell("tk", "make docs -n 9"))["decision_id"].(string)
	tickets, err := s.store.IssueTickets(t.Context(), id, "ops", []string{api.AllowOnce, api.DenyAnswer}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	link := func(decision, ticket string) string { return "/v1/decisions/" + decision + "/answer?ticket=" + ticket }
	answerOf := func(decision string) any {
		return runtime.mustStatus(200, "GET", "/v1/decisions/"+decision, nil)["answer"]
	}

	// The GET is a page that asks to confirm; it answers nothing, however
	// often it is fetched (link previews fetch it).
	for range 2 {
		code, body := s.page("GET", link(id, tickets[api.AllowOnce]))
		if code != http.StatusOK || !strings.Contains(body, "Confirm: allow_once") || !strings.Contains(body, "&lt;script&gt;") || strings.Contains(body, "<script>") {
			t.Fatalf("confirmation page: %d\n%s", code, body)
		}
	}
	if a := answerOf(id); a != nil {
		t.Fatalf("a GET answered: %v", a)
	}

	refused := map[string]string{
		"forged":           link(id, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		"another decision": link(other, tickets[api.AllowOnce]),
		"none":             link(id, ""),
	}
	for name, path := range refused {
		if code, out := s.call("POST", path, nil); code != http.StatusForbidden || out["error"].(map[string]any)["code"] != "invalid_ticket" {
			t.Fatalf("%s: %d %v", name, code, out)
		}
		if code, _ := s.page("GET", path); code != http.StatusForbidden {
			t.Fatalf("%s page: %d", name, code)
		}
	}
	if answerOf(id) != nil || answerOf(other) != nil {
		t.Fatal("a refused ticket answered")
	}

	// The ticket's answer is its own: a body asking for a grant changes
	// nothing. The channel is the sink's.
	code, rec := s.call("POST", link(id, tickets[api.AllowOnce]), map[string]any{"answer": "allow_session", "channel": "console"})
	if code != http.StatusOK {
		t.Fatalf("the ticket's answer: %d %v", code, rec)
	}
	a := answerOf(id).(map[string]any)
	if a["answer"] != api.AllowOnce || a["channel"] != "ops" || a["grant_id"] != nil {
		t.Fatalf("answered %v", a)
	}
	// Used once: refused.
	if code, out := s.call("POST", link(id, tickets[api.AllowOnce]), nil); code != http.StatusForbidden || out["error"].(map[string]any)["code"] != "ticket_used" {
		t.Fatalf("a reused ticket: %d %v", code, out)
	}
	// Another ticket of the answered ask: the ask takes one answer.
	if code, _ := s.call("POST", link(id, tickets[api.DenyAnswer]), nil); code != http.StatusConflict {
		t.Fatalf("a second answer by ticket: %d", code)
	}

	// Expired with the ask: the PDP's expiry takes the ask first; and a
	// ticket past its own time is refused.
	late, err := s.store.IssueTickets(t.Context(), other, "ops", []string{api.DenyAnswer}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.store.ExpireAsks(t.Context(), time.Now().Add(time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	if code, out := s.call("POST", link(other, late[api.DenyAnswer]), nil); code != http.StatusConflict || out["error"].(map[string]any)["code"] != "expired" {
		t.Fatalf("a ticket of an expired ask: %d %v", code, out)
	}
	third := runtime.decide(shell("tk", "make docs -n 3"))["decision_id"].(string)
	past, err := s.store.IssueTickets(t.Context(), third, "ops", []string{api.DenyAnswer}, time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if code, out := s.call("POST", link(third, past[api.DenyAnswer]), nil); code != http.StatusForbidden || out["error"].(map[string]any)["code"] != "ticket_expired" {
		t.Fatalf("an expired ticket: %d %v", code, out)
	}

	// A form posted from another site is refused by the same-origin rule.
	req, _ := http.NewRequest("POST", s.srv.URL+link(third, past[api.DenyAnswer]), nil)
	req.Header.Set("Origin", "https://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-origin post: %v %v", resp, err)
	}

	// Every refusal is an access event.
	events := s.as("a-secret").mustStatus(200, "GET", "/v1/access-events?limit=500", nil)["access_events"].([]any)
	seen := map[string]int{}
	for _, ev := range events {
		seen[ev.(map[string]any)["reason"].(string)]++
	}
	if seen["forged answer link"] < 6 || seen["used answer link"] < 1 || seen["expired answer link"] < 1 {
		t.Fatalf("access events: %v", seen)
	}
}

// The confirmation page's form answers, as a browser posts it.
func TestAnswerLinkConfirmed(t *testing.T) {
	s := newService(t)
	id := s.decide(shell("tf", "make deploy"))["decision_id"].(string)
	tickets, err := s.store.IssueTickets(t.Context(), id, "slack-approvals", []string{api.DenyAnswer}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/decisions/" + id + "/answer?ticket=" + tickets[api.DenyAnswer]
	if _, body := s.page("GET", path); !strings.Contains(body, `action="`+strings.ReplaceAll(path, "&", "&amp;")+`"`) {
		t.Fatalf("the form does not post to its link:\n%s", body)
	}
	code, body := s.page("POST", path)
	if code != http.StatusOK || !strings.Contains(body, "Answered: deny") {
		t.Fatalf("confirmed: %d\n%s", code, body)
	}
	_, rec := s.call("GET", "/v1/decisions/"+id, nil)
	if a := rec["answer"].(map[string]any); a["answer"] != "deny" || a["channel"] != "slack-approvals" {
		t.Fatalf("answered %v", a)
	}
}

// preOf is the call a confirmation page shows, between its <pre> tags.
func preOf(t *testing.T, page string) string {
	t.Helper()
	_, after, ok := strings.Cut(page, "<pre>")
	call, _, closed := strings.Cut(after, "</pre>")
	if !ok || !closed {
		t.Fatalf("the page shows no call:\n%s", page)
	}
	return call
}

// The confirmation page shows the call as the console does: every
// argument, and the characters that make text look like other text
// (controls and the bidirectional overrides) as \uXXXX escapes. A person
// confirms what runs, not what it is made to look like.
func TestAnswerLinkPageShowsTheWholeCallVisibly(t *testing.T) {
	s := newService(t)
	pageOf := func(call map[string]any) string {
		t.Helper()
		id := s.decide(call)["decision_id"].(string)
		tickets, err := s.store.IssueTickets(t.Context(), id, "ops", []string{api.DenyAnswer}, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		code, page := s.page("GET", "/v1/decisions/"+id+"/answer?ticket="+tickets[api.DenyAnswer])
		if code != http.StatusOK {
			t.Fatalf("page: %d\n%s", code, page)
		}
		return page
	}

	// "say done #<RLO>fr- mr" shows as "say done #rm -rf" where the
	// override is drawn.
	overrides := []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c}
	for _, r := range overrides {
		call := preOf(t, pageOf(shell("tv", "say done #"+string(r)+"fr- mr")))
		want := fmt.Sprintf(`say done #\u%04xfr- mr`, r)
		if strings.ContainsRune(call, r) || !strings.Contains(call, want) {
			t.Fatalf("U+%04X: the page shows %q, want %q in it", r, call, want)
		}
	}

	// A call with no command, path or url shows its arguments.
	call := preOf(t, pageOf(map[string]any{"session_id": "tm", "tool": "mcp__github__delete_repo", "args": map[string]any{"repo": "production-db"}, "cwd": "/home/u/proj"}))
	if !strings.Contains(call, "repo") || !strings.Contains(call, "production-db") {
		t.Fatalf("the MCP call's page shows %q", call)
	}
	// A command's other arguments are shown beside it.
	call = preOf(t, pageOf(map[string]any{"session_id": "tm", "tool": "shell", "args": map[string]any{"command": "make deploy", "env": map[string]any{"TARGET": "prod\u202e"}}, "cwd": "/home/u/proj"}))
	for _, want := range []string{"make deploy", "TARGET", `prod\u202e`} {
		if !strings.Contains(call, want) {
			t.Fatalf("the page shows %q, without %q", call, want)
		}
	}
}

// The confirmation page of a grantable ask says what allow for the
// session grants — the fingerprints the answer stores, escaped for HTML —
// and says nothing of it where the call cannot be granted.
func TestAnswerLinkPageSaysWhatTheSessionGrantIs(t *testing.T) {
	s := newService(t)
	pageOf := func(cmd string) string {
		t.Helper()
		d := s.decide(shell("tw", cmd))
		tickets, err := s.store.IssueTickets(t.Context(), d["decision_id"].(string), "ops", []string{api.AllowSession}, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		code, page := s.page("GET", "/v1/decisions/"+d["decision_id"].(string)+"/answer?ticket="+tickets[api.AllowSession])
		if code != http.StatusOK {
			t.Fatalf("page: %d\n%s", code, page)
		}
		return page
	}
	page := pageOf(`make "<i>docs" && go vet ./...`)
	if want := `allow for this session grants: <code>make &lt;i&gt;docs</code>, <code>go vet</code>`; !strings.Contains(page, want) {
		t.Fatalf("the page does not say %q:\n%s", want, page)
	}
	if page := pageOf(`make check && python3 -c 'print(1)'`); strings.Contains(page, "grants:") {
		t.Fatalf("a call that cannot be granted says what it grants:\n%s", page)
	}
}
