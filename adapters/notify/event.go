package notify

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
)

// Event is what a sink is sent: the change as GET /v1/events carries it
// (the decision whole, as GET /v1/decisions/{id} gives it, or the
// session after a level change), its kind, its place in the change log,
// a link to it in the console and, set at each attempt, the time it was
// sent — which a webhook's signature covers, against replay.
type Event struct {
	Event     string          `json:"event"`
	ID        int64           `json:"id"`
	SessionID string          `json:"session_id"`
	Decision  json.RawMessage `json:"decision,omitempty"`
	Session   json.RawMessage `json:"session,omitempty"`
	// Policy is the revision activated and where it came from, for a
	// policy event.
	Policy     *PolicyChange `json:"policy,omitempty"`
	ConsoleURL string        `json:"console_url,omitempty"`
	// AnswerLinks are one-time links, by answer, that answer the ask
	// (GET shows a confirmation page; its POST answers), for a sink with
	// answer_links.
	AnswerLinks map[string]string `json:"answer_links,omitempty"`
	SentAt      string            `json:"sent_at"`

	decision *api.Event // for filters and the Slack text
}

// eventOf is the event of a change, or nil for a change no sink takes (a
// runtime's outcome, a decision gone from the trail).
func eventOf(c feed.Change, console string) (*Event, error) {
	ev := &Event{ID: c.Seq, SessionID: c.SessionID}
	switch c.Kind {
	case feed.ChangeAsk, feed.ChangeAnswer:
		if c.Decision == nil {
			return nil, nil
		}
		ev.Event = c.Kind
		if c.Kind == feed.ChangeAnswer && c.Decision.Answer != nil && c.Decision.Answer.Answer == api.Expired {
			ev.Event = EventExpired
		}
		raw, err := json.Marshal(c.Decision)
		if err != nil {
			return nil, fmt.Errorf("encoding change %d: %w", c.Seq, err)
		}
		ev.Decision, ev.decision = raw, c.Decision
		if console != "" {
			ev.ConsoleURL = console + "/ui/?ask=" + url.QueryEscape(c.Decision.DecisionID) + "#inbox"
		}
	case feed.ChangeLevel:
		if c.Session == nil {
			return nil, nil
		}
		raw, err := json.Marshal(c.Session)
		if err != nil {
			return nil, fmt.Errorf("encoding change %d: %w", c.Seq, err)
		}
		ev.Event, ev.Session = EventLevel, raw
		if console != "" {
			ev.ConsoleURL = console + "/ui/#sessions"
		}
	default:
		return nil, nil
	}
	return ev, nil
}

// PolicyChange is a policy event's body, as GET /v1/policy names the
// active policy.
type PolicyChange struct {
	Revision string `json:"revision"`
	Source   string `json:"source"`
}

// policyEvent is the event of a policy revision activated. Policy
// changes are not in the change log: the event's id is negative and
// derived from the revision, so replicas that activate the same revision
// claim the same id and one of them sends it (a change log id is never
// negative).
func policyEvent(revision, source, console string) *Event {
	h := fnv.New64a()
	h.Write([]byte("policy\x00" + revision))
	ev := &Event{Event: EventPolicy, ID: -int64(h.Sum64()>>1) - 1, Policy: &PolicyChange{Revision: revision, Source: source}}
	if console != "" {
		ev.ConsoleURL = console + "/ui/#policy"
	}
	return ev
}

// size is what the event holds in a queue.
func (ev *Event) size() int { return len(ev.Decision) + len(ev.Session) + 256 }

// body is the event as sent at t.
func (ev *Event) body(t time.Time) ([]byte, string, error) {
	sent := *ev
	sent.SentAt = t.UTC().Format(time.RFC3339)
	raw, err := json.Marshal(sent)
	return raw, sent.SentAt, err
}
