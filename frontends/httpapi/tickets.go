package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// Answer links: a notification may carry /v1/decisions/{id}/answer?ticket=…
// links, one per answer. The ticket is the credential, for one answer to
// one decision, once: a GET shows a page that says what the answer does
// and asks to confirm (a GET never answers: link previews fetch it), the
// POST of its form answers, with the sink's name as the channel. The
// console's same-origin rule applies to the POST like to any other.
// With sign-in configured the ticket alone answers nothing: the page
// asks the person to sign in first, and the POST needs a person (or a
// token) with the user role, whom the answer names.

// ticketOr routes a request with ?ticket= to the ticket's answer and any
// other through the role check.
func (s *Server) ticketOr(roles echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		checked := roles(next)
		return func(c echo.Context) error {
			if c.QueryParams().Has("ticket") {
				return s.answerByTicket(c)
			}
			return checked(c)
		}
	}
}

// answerByTicket uses the ticket and records its answer.
func (s *Server) answerByTicket(c echo.Context) error {
	ts, ok := s.cfg.Store.(pdp.TicketStore)
	if !ok {
		return fail(http.StatusNotFound, "not_found", "this server issues no answer links")
	}
	id, ctx := c.Param("id"), c.Request().Context()
	by := api.Answerer{}
	if s.cfg.SignIn != nil {
		who := callerOf(c)
		if !who.has(User) {
			code, word := http.StatusUnauthorized, "unauthenticated"
			if who.name != "" {
				code, word = http.StatusForbidden, "forbidden" // signed in, without the role
			}
			s.refuse(c, code, who.name, "answer link without a signed-in person with the user role")
			if wantsPage(c) {
				return s.ticketPage(c, code, pageData{Title: "Sign in first", Message: "Answer links answer for a person signed in with the user role.", SignIn: signInTo(c)})
			}
			return fail(code, word, "an answer link answers for a signed-in person with the user role")
		}
		by = who.answerer()
	}
	t, err := ts.UseTicket(ctx, c.QueryParam("ticket"), id)
	if err != nil {
		return s.refuseTicket(c, err)
	}
	if by.Name == "" {
		by.Name = "link:" + t.Sink
	}
	rec, err := s.desk.Answer(ctx, id, t.Answer, t.Sink, by)
	if err != nil {
		if wantsPage(c) {
			ae := classify(err)
			return s.ticketPage(c, ae.Status, pageData{Title: "Not answered", Message: ae.Message})
		}
		return err
	}
	c.Set(decisionIDKey, id)
	if wantsPage(c) {
		return s.ticketPage(c, http.StatusOK, pageData{Title: "Answered: " + t.Answer, Event: &rec, Message: "Recorded as " + t.Answer + " (" + t.Sink + "). A runtime waiting on it has the answer."})
	}
	return c.JSON(http.StatusOK, rec)
}

// confirmTicket is GET /v1/decisions/{id}/answer?ticket=…: the page that
// asks to confirm. It changes nothing.
func (s *Server) confirmTicket(c echo.Context) error {
	ts, ok := s.cfg.Store.(pdp.TicketStore)
	if !ok {
		return fail(http.StatusNotFound, "not_found", "this server issues no answer links")
	}
	id, ctx := c.Param("id"), c.Request().Context()
	t, err := ts.PeekTicket(ctx, c.QueryParam("ticket"), id)
	if err != nil {
		return s.refuseTicket(c, err)
	}
	rec, err := s.cfg.Store.Decision(ctx, id)
	if err != nil {
		return storeUnavailable(err)
	}
	d := pageData{Title: "Answer " + t.Answer + "?", Event: &rec, Answer: t.Answer,
		Action: "/v1/decisions/" + url.PathEscape(id) + "/answer?ticket=" + url.QueryEscape(c.QueryParam("ticket"))}
	switch {
	case rec.Answer != nil:
		d.Title, d.Action, d.Message = "Already answered", "", "It was answered "+rec.Answer.Answer+" ("+rec.Answer.Channel+")."
	case t.Answer == api.AllowSession || t.Answer == api.AllowProject:
		d.Message = "This grants the call's fingerprint " + map[string]string{api.AllowSession: "for the session", api.AllowProject: "to every session of the project"}[t.Answer] + " until the grant is revoked."
	}
	if who := callerOf(c); s.cfg.SignIn != nil && d.Action != "" {
		switch {
		case who.has(User):
			d.Person = who.name
		case who.name != "":
			d.Action = ""
			d.Message = strings.TrimSpace(d.Message + " " + who.name + " may not answer: that needs the user role.")
		default:
			d.Action, d.SignIn = "", signInTo(c)
			d.Message = strings.TrimSpace(d.Message + " Sign in to answer.")
		}
	}
	return s.ticketPage(c, http.StatusOK, d)
}

// refuseTicket answers a ticket that is not good — forged (or another
// decision's), used, expired — with 403, recorded as an access event.
func (s *Server) refuseTicket(c echo.Context, err error) error {
	reason, code := "", ""
	switch {
	case errors.Is(err, pdp.ErrTicketForged):
		reason, code = "forged answer link", "invalid_ticket"
	case errors.Is(err, pdp.ErrTicketUsed):
		reason, code = "used answer link", "ticket_used"
	case errors.Is(err, pdp.ErrTicketExpired):
		reason, code = "expired answer link", "ticket_expired"
	default:
		return storeUnavailable(err)
	}
	s.refuse(c, http.StatusForbidden, "", reason)
	if wantsPage(c) {
		return s.ticketPage(c, http.StatusForbidden, pageData{Title: "Refused", Message: err.Error() + "."})
	}
	return fail(http.StatusForbidden, code, "%v", err)
}

// wantsPage says whether the caller is a browser.
func wantsPage(c echo.Context) bool {
	return strings.Contains(c.Request().Header.Get("Accept"), "text/html")
}

type pageData struct {
	Title, Message, Answer, Action string
	// SignIn links to the sign-in that comes back here; Person is who
	// is signed in and answers.
	SignIn, Person string
	Event          *api.Event
}

// signInTo is the sign-in that returns to this page.
func signInTo(c echo.Context) string {
	return "/auth/login?next=" + url.QueryEscape(c.Request().URL.RequestURI())
}

// Call is what the page shows of the call, as the console's inbox shows
// it: its command, else its path or url, then every other argument as
// JSON, with the characters that make text look like other text escaped
// (visible).
func (d pageData) Call() string {
	if d.Event == nil {
		return ""
	}
	rest := make(map[string]any, len(d.Event.Args))
	for k, v := range d.Event.Args {
		rest[k] = v
	}
	var parts []string
	for _, key := range []string{"command", "file_path", "path", "notebook_path", "url"} {
		if v, ok := rest[key].(string); ok && v != "" {
			parts = append(parts, v)
			delete(rest, key)
			break
		}
	}
	if len(rest) > 0 {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the template escapes for HTML
		if err := enc.Encode(rest); err != nil {
			parts = append(parts, fmt.Sprintf("%v", rest))
		} else {
			parts = append(parts, strings.TrimSuffix(b.String(), "\n"))
		}
	}
	return visible(strings.Join(parts, "  "))
}

// WouldGrant are the fingerprints "allow for the session" grants, shown
// visibly, while the ask is unanswered; none when it cannot be granted.
func (d pageData) WouldGrant() []string {
	if d.Event == nil || d.Event.Answer != nil {
		return nil
	}
	out := make([]string, len(d.Event.WouldGrant))
	for i, fp := range d.Event.WouldGrant {
		out[i] = visible(fp)
	}
	return out
}

// visible shows the characters that make text look like other text as
// \uXXXX escapes, the same ones the console's visible (ui/app.js)
// escapes: the C0 and C1 controls with DEL, the Arabic letter mark, the
// zero-width characters and marks U+200B–U+200F, the bidirectional
// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
// and the byte order mark.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	switch {
	case r <= 0x1f, 0x7f <= r && r <= 0x9f, r == 0x061c, 0x200b <= r && r <= 0x200f,
		0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069, r == 0xfeff:
		return true
	}
	return false
}

func (s *Server) ticketPage(c echo.Context, status int, d pageData) error {
	var b strings.Builder
	if err := ticketTemplate.Execute(&b, d); err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	// same-origin, not no-referrer: the ticket never leaves for another
	// site, and the form's POST keeps its Origin (a browser sends
	// "Origin: null" under no-referrer, which the origin check refuses).
	c.Response().Header().Set("Referrer-Policy", "same-origin")
	return c.HTML(status, b.String())
}

// ticketTemplate escapes everything it shows: the call is the model's.
var ticketTemplate = template.Must(template.New("ticket").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>toolperm: {{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;background:#f3f3f3;padding:.6rem}button{font-size:1rem;padding:.4rem 1rem}</style>
</head><body>
<h1>{{.Title}}</h1>
{{with .Event}}<p>Session <code>{{.SessionID}}</code>, {{if .Capability}}<code>{{.Capability}}</code>{{else}}<code>{{.Tool}}</code>{{end}}, rule <code>{{.Rule}}</code>.</p>
<p>{{.Reason}}</p>{{end}}
{{with .Call}}<pre>{{.}}</pre>{{end}}
{{with .WouldGrant}}<p id="would-grant">allow for this session grants: {{range $i, $fp := .}}{{if $i}}, {{end}}<code>{{$fp}}</code>{{end}}</p>{{end}}
{{with .Message}}<p>{{.}}</p>{{end}}
{{with .Person}}<p id="person">Signed in as {{.}}.</p>{{end}}
{{with .SignIn}}<p><a id="sign-in" href="{{.}}">Sign in</a></p>{{end}}
{{if .Action}}<form method="post" action="{{.Action}}"><button type="submit" id="confirm">Confirm: {{.Answer}}</button></form>{{end}}
</body></html>
`))
