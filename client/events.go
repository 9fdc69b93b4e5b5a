package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolperm/pdp/api"
)

// The kinds of event GET /v1/events sends.
const (
	// EventReady is the first event of a stream: its ID is where the
	// stream starts.
	EventReady = "ready"
	// EventAsk: an ask was made (Decision).
	EventAsk = "ask"
	// EventAnswer: a person answered an ask (Decision, with its Answer).
	EventAnswer = "answer"
	// EventOutcome: a runtime reported what became of an ask (Decision,
	// with its Outcome). It is no answer: the ask stays pending.
	EventOutcome = "outcome"
	// EventLevel: a session's permission level changed (Session).
	EventLevel = "level"
)

// LiveEvent is one event of the live stream.
type LiveEvent struct {
	// ID is what to pass to Events to resume after this event.
	ID   string
	Kind string
	// Decision is set for ask, answer and outcome events, Session for
	// level events.
	Decision *Event
	Session  *Session
	// Data is the event's JSON as sent.
	Data json.RawMessage
}

// Stream reads the events of GET /v1/events.
type Stream struct {
	body io.ReadCloser
	r    *bufio.Reader
	last string
}

// Events opens the live event stream (Server-Sent Events): asks, answers
// and level changes as they happen, for the sessions the token may read.
// With lastEventID (an ID of an event read before) it resumes right after
// that event, missing nothing; ErrResumeTooOld when the server no longer
// keeps what followed it. The stream has no timeout: end it with ctx or
// Close.
func (c *Client) Events(ctx context.Context, lastEventID string) (*Stream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/events", nil)
	if err != nil {
		return nil, fmt.Errorf("pdp: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	// The client's timeout would cut a stream that is meant to stay open.
	h := *c.http
	h.Timeout = 0
	resp, err := h.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pdp: GET /v1/events: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var e api.Error
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return nil, &Error{Status: resp.StatusCode, Code: "http_error", Message: strings.TrimSpace(string(raw))}
		}
		return nil, &Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("pdp: GET /v1/events answered %q, not an event stream", ct)
	}
	return &Stream{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10), last: lastEventID}, nil
}

// maxEventBytes bounds one event of the stream.
const maxEventBytes = 16 << 20

// Next returns the next event; io.EOF when the server ended the stream
// (reconnect with LastID to go on).
func (s *Stream) Next() (LiveEvent, error) {
	var ev LiveEvent
	var data strings.Builder
	hasData := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ev, io.EOF
			}
			return ev, fmt.Errorf("pdp: reading the event stream: %w", err)
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if !hasData {
				ev = LiveEvent{}
				continue
			}
			return s.dispatch(ev, data.String())
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Kind = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
			if data.Len() > maxEventBytes {
				return ev, fmt.Errorf("pdp: an event of the stream is over %d bytes", maxEventBytes)
			}
		}
	}
}

func (s *Stream) dispatch(ev LiveEvent, data string) (LiveEvent, error) {
	if ev.Kind == "" {
		ev.Kind = "message"
	}
	if ev.ID != "" {
		s.last = ev.ID
	}
	ev.Data = json.RawMessage(data)
	var err error
	switch ev.Kind {
	case EventAsk, EventAnswer, EventOutcome:
		ev.Decision = new(Event)
		err = json.Unmarshal(ev.Data, ev.Decision)
	case EventLevel:
		ev.Session = new(Session)
		err = json.Unmarshal(ev.Data, ev.Session)
	}
	if err != nil {
		return ev, fmt.Errorf("pdp: a %s event is not what the API sends: %w", ev.Kind, err)
	}
	return ev, nil
}

// LastID is the ID of the last event read (or the one the stream resumed
// from): pass it to Events to go on after a disconnect.
func (s *Stream) LastID() string { return s.last }

// Close ends the stream.
func (s *Stream) Close() error { return s.body.Close() }

// RecordOutcome reports what became of an ask the runtime showed in its
// own prompt, found by the runtime's id of the call (the tool_use_id of
// the decide request): AllowOnce when the call ran, DenyAnswer when it
// was refused. It is a record of what the runtime did, never a
// permission: the server keeps it apart from a person's answer (the
// returned Event's Outcome; its Answer stays nil until a person
// answers), wakes no Decision waiting for an answer and creates no
// grant. channel names the runtime ("" records "runtime"); a person's
// channel is ErrBadRequest. A dispatcher may record one outcome per ask
// of its own sessions (ErrConflict for a second one or a decision that
// is not an ask, ErrNotFound when there is none).
func (c *Client) RecordOutcome(ctx context.Context, toolUseID, answer, channel string) (Event, error) {
	var ev Event
	err := c.do(ctx, "POST", "/v1/decisions/by-tool-use/"+url.PathEscape(toolUseID)+"/outcome", api.OutcomeRequest{Answer: answer, Channel: channel}, &ev)
	return ev, err
}
