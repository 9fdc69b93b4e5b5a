package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/toolperm/pdp/api"
)

// slack posts Slack's incoming-webhook message: a text for
// notifications and blocks naming the session, the capability, the
// command or path, the rule and the reason, with a button that opens the
// ask in the console (https://api.slack.com/messaging/webhooks,
// https://api.slack.com/reference/block-kit/blocks).
type slack struct{ poster }

func newSlack(s *Sink) slack { return slack{newPoster(s.URL)} }

func (s slack) deliver(ctx context.Context, ev *Event) error {
	body, err := json.Marshal(slackMessage(ev))
	if err != nil {
		return err
	}
	return s.post(ctx, body, nil)
}

type (
	slackText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	slackElement struct {
		Type string    `json:"type"`
		Text slackText `json:"text"`
		URL  string    `json:"url"`
	}
	slackBlock struct {
		Type     string         `json:"type"`
		Text     *slackText     `json:"text,omitempty"`
		Fields   []slackText    `json:"fields,omitempty"`
		Elements []slackElement `json:"elements,omitempty"`
	}
	slackBody struct {
		Text   string       `json:"text"`
		Blocks []slackBlock `json:"blocks"`
	}
)

// slackMessage is the message of an event. Everything the model wrote
// (the command, the path, the session id) is escaped for Slack's mrkdwn
// and has its control characters shown as escapes.
func slackMessage(ev *Event) slackBody {
	mrkdwn := func(s string) slackText { return slackText{Type: "mrkdwn", Text: s} }
	field := func(name, value string) slackText { return mrkdwn("*" + name + "*\n" + cut(escape(value), 1900)) }
	var title string
	var blocks []slackBlock
	switch d := ev.decision; {
	case d != nil:
		capability := d.Tool
		if d.Capability != nil {
			capability = *d.Capability
		}
		switch ev.Event {
		case EventAsk:
			title = "Ask: " + capability
		case EventExpired:
			title = "Expired, unanswered: " + capability
		default:
			title = "Answered " + answerOf(d) + ": " + capability
		}
		fields := []slackText{field("Session", d.SessionID), field("Rule", d.Rule), field("Reason", d.Reason)}
		if ev.Event != EventAsk && d.Answer != nil {
			by := d.Answer.Channel
			if d.Answer.AnsweredBy != "" {
				by += ", " + d.Answer.AnsweredBy
			}
			fields = append(fields, field("Answer", d.Answer.Answer+" ("+by+")"))
		}
		blocks = []slackBlock{
			{Type: "header", Text: &slackText{Type: "plain_text", Text: cut(visible(title), 150)}},
			{Type: "section", Text: &slackText{Type: "mrkdwn", Text: "```" + cut(strings.ReplaceAll(escape(callOf(d)), "```", "`\u200b``"), 2900) + "```"}},
			{Type: "section", Fields: fields},
		}
		if line := wouldGrantLine(d.WouldGrant); ev.Event == EventAsk && line != "" {
			blocks = append(blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: cut(line, 2900)}})
		}
	case ev.Policy != nil:
		title = "Policy activated: " + ev.Policy.Revision
		blocks = []slackBlock{
			{Type: "header", Text: &slackText{Type: "plain_text", Text: cut(visible(title), 150)}},
			{Type: "section", Fields: []slackText{field("Revision", ev.Policy.Revision), field("Source", ev.Policy.Source)}},
		}
	default:
		var s api.Session
		_ = json.Unmarshal(ev.Session, &s)
		title = fmt.Sprintf("Level: %s is now %s", s.ID, s.PermissionLevel)
		blocks = []slackBlock{
			{Type: "header", Text: &slackText{Type: "plain_text", Text: cut(visible(title), 150)}},
			{Type: "section", Fields: []slackText{field("Session", s.ID), field("Level", string(s.PermissionLevel)), field("Mode", string(s.Mode))}},
		}
	}
	if ev.ConsoleURL != "" {
		label := "Open in the console"
		if ev.Event == EventAsk {
			label = "Answer in the console"
		}
		elements := []slackElement{{Type: "button", Text: slackText{Type: "plain_text", Text: label}, URL: ev.ConsoleURL}}
		for _, answer := range []string{api.AllowOnce, api.AllowSession, api.AllowProject, api.DenyAnswer} {
			if link := ev.AnswerLinks[answer]; link != "" {
				elements = append(elements, slackElement{Type: "button", Text: slackText{Type: "plain_text", Text: answerLabels[answer]}, URL: link})
			}
		}
		blocks = append(blocks, slackBlock{Type: "actions", Elements: elements})
	}
	return slackBody{Text: "toolperm: " + escape(title), Blocks: blocks}
}

// wouldGrantLine says what "allow for the session" grants, each
// fingerprint escaped and as code (plain where it holds a backtick,
// which would end the code); "" when the call is not grantable.
func wouldGrantLine(fingerprints []string) string {
	if len(fingerprints) == 0 {
		return ""
	}
	shown := make([]string, len(fingerprints))
	for i, fp := range fingerprints {
		shown[i] = escape(fp)
		if !strings.Contains(fp, "`") {
			shown[i] = "`" + shown[i] + "`"
		}
	}
	return "allow for this session grants: " + strings.Join(shown, ", ")
}

func answerOf(d *api.Event) string {
	if d.Answer == nil {
		return ""
	}
	return d.Answer.Answer
}

// callOf is the call as a person recognises it: its command, else its
// path, else its arguments as JSON.
func callOf(d *api.Event) string {
	for _, key := range []string{"command", "file_path", "path", "notebook_path", "url"} {
		if s, ok := d.Args[key].(string); ok && s != "" {
			return s
		}
	}
	raw, _ := json.Marshal(d.Args)
	return string(raw)
}

// escape is text for Slack's mrkdwn: &, < and > as Slack asks, so no text
// turns into a link or a mention, and control characters visible.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(visible(s))
}

// visible shows control and bidirectional-override characters as
// escapes, so a command cannot look like something else.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' || (unicode.IsPrint(r) && !unicode.Is(unicode.Bidi_Control, r)) {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	return b.String()
}

// cut shortens s to at most n runes.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// answerLabels name the answer links' buttons; each opens the PDP's
// confirmation page, which answers only when confirmed.
var answerLabels = map[string]string{
	api.AllowOnce: "Allow once…", api.AllowSession: "Allow for the session…", api.AllowProject: "Allow for the project…", api.DenyAnswer: "Deny…",
}
