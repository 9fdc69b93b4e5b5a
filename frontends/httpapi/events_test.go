package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
)

// events opens GET /v1/events as the service's token and reads its ready
// event.
func (s *service) events(lastID string) *client.Stream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := client.New(s.srv.URL, client.WithToken(s.token)).Events(ctx, lastID)
	if err != nil {
		cancel()
		s.t.Fatalf("GET /v1/events: %v", err)
	}
	s.t.Cleanup(func() { cancel(); stream.Close() })
	if ev := next(s.t, stream, 5*time.Second); ev.Kind != client.EventReady {
		s.t.Fatalf("the first event is %q, not ready", ev.Kind)
	}
	return stream
}

// next reads one event within d.
func next(t *testing.T, stream *client.Stream, d time.Duration) client.LiveEvent {
	t.Helper()
	type read struct {
		ev  client.LiveEvent
		err error
	}
	got := make(chan read, 1)
	go func() {
		ev, err := stream.Next()
		got <- read{ev, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("reading the stream: %v", r.err)
		}
		return r.ev
	case <-time.After(d):
		t.Fatalf("no event within %s", d)
	}
	return client.LiveEvent{}
}

// logged is a logger that hands over every record with this message,
// so a test can wait for what the server says it did.
func logged(message string) (*slog.Logger, <-chan slog.Record) {
	records := make(chan slog.Record, 64)
	return slog.New(signalLog{message, records}), records
}

type signalLog struct {
	message string
	records chan<- slog.Record
}

func (h signalLog) Enabled(context.Context, slog.Level) bool { return true }
func (h signalLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h signalLog) WithGroup(string) slog.Handler            { return h }
func (h signalLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.message {
		h.records <- r
	}
	return nil
}

// attr is the value of a record's attribute key.
func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
		}
		return true
	})
	return v
}

// nothingWithin checks that the stream sends no event for d (it is then
// closed: a read is left pending).
func nothingWithin(t *testing.T, stream *client.Stream, d time.Duration) {
	t.Helper()
	got := make(chan client.LiveEvent, 1)
	go func() {
		if ev, err := stream.Next(); err == nil {
			got <- ev
		}
	}()
	select {
	case ev := <-got:
		t.Fatalf("unexpected %s event: %s", ev.Kind, ev.Data)
	case <-time.After(d):
	}
	stream.Close()
}

func TestEventsAnAskAppearsWithinASecond(t *testing.T) {
	s := newService(t)
	stream := s.events("")
	ask := s.decide(shell("live", "make check"))
	ev := next(t, stream, time.Second)
	if ev.Kind != client.EventAsk || ev.Decision == nil || ev.Decision.DecisionID != ask["decision_id"] || ev.Decision.Answer != nil {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
	if ev.Decision.SessionID != "live" || ev.Decision.Args["command"] != "make check" {
		t.Fatalf("the ask event lacks the call: %s", ev.Data)
	}
	// The live ask says what allow_session would grant, as the decision did.
	if !slices.Equal(ev.Decision.WouldGrant, []string{"make check"}) {
		t.Fatalf("the ask event's would_grant: %s", ev.Data)
	}
	// Allows and denies are not events; answers and level changes are.
	s.decide(map[string]any{"session_id": "live", "tool": "read_file", "args": map[string]any{"path": "a"}, "cwd": "/w"})
	s.mustStatus(200, "POST", "/v1/decisions/"+ev.Decision.DecisionID+"/answer", map[string]any{"answer": "allow_once", "channel": "desktop"})
	if ev := next(t, stream, time.Second); ev.Kind != client.EventAnswer || ev.Decision.Answer == nil || ev.Decision.Answer.Channel != "desktop" {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
	s.mustStatus(200, "PATCH", "/v1/sessions/live", map[string]any{"mode": "always-ask"})
	s.mustStatus(200, "PATCH", "/v1/sessions/live", map[string]any{"permission_level": "READ_WRITE"})
	if ev := next(t, stream, time.Second); ev.Kind != client.EventLevel || ev.Session.ID != "live" || ev.Session.PermissionLevel != "READ_WRITE" {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
}

// A reader that reconnects with the last id it read gets everything
// after it, in order, once — also from a restarted server.
func TestEventsResumeWithLastEventIDMissesNothing(t *testing.T) {
	s := newService(t)
	stream := s.events("")
	first := s.decide(shell("r", "make check"))
	ev := next(t, stream, time.Second)
	if ev.Decision.DecisionID != first["decision_id"] {
		t.Fatalf("first event: %s", ev.Data)
	}
	stream.Close()
	var want []string
	for _, cmd := range []string{"make docs", "make lint", "make"} {
		want = append(want, "ask "+s.decide(shell("r", cmd))["decision_id"].(string))
	}
	s.mustStatus(200, "POST", "/v1/decisions/"+first["decision_id"].(string)+"/answer", map[string]any{"answer": "deny"})
	want = append(want, "answer "+first["decision_id"].(string))
	s.mustStatus(200, "PATCH", "/v1/sessions/r", map[string]any{"permission_level": "FULL"})
	want = append(want, "level r")

	got := func(stream *client.Stream, n int) (out []string, last string) {
		for range n {
			ev := next(t, stream, time.Second)
			switch ev.Kind {
			case client.EventLevel:
				out = append(out, "level "+ev.Session.ID)
			default:
				out = append(out, ev.Kind+" "+ev.Decision.DecisionID)
			}
			last = ev.ID
		}
		return out, last
	}
	resumed := s.events(ev.ID)
	events, last := got(resumed, len(want))
	if !equal(events, want) {
		t.Fatalf("after a reconnect:\n got %v\nwant %v", events, want)
	}
	nothingWithin(t, resumed, 300*time.Millisecond)

	// The ids hold across a restart: the change log is in the database.
	s = s.restart()
	later := s.decide(shell("r2", "make check"))
	if events, _ := got(s.events(ev.ID), len(want)+1); !equal(events, append(want, "ask "+later["decision_id"].(string))) {
		t.Fatalf("after a restart:\n got %v", events)
	}
	if events, _ := got(s.events(last), 1); events[0] != "ask "+later["decision_id"].(string) {
		t.Fatalf("after a restart, from the last id: %v", events)
	}
	// An id this log never gave cannot be resumed from.
	_, err := client.New(s.srv.URL).Events(context.Background(), "99999")
	var apiErr *client.Error
	if !errors.Is(err, client.ErrResumeTooOld) || !errors.As(err, &apiErr) || apiErr.Code != "resume_too_old" {
		t.Fatalf("resume from an unknown id: %v", err)
	}
	if _, err := client.New(s.srv.URL).Events(context.Background(), "x"); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("a Last-Event-ID that is no id: %v", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEventsADispatcherSeesOnlyItsOwnSessions(t *testing.T) {
	s := securedService(t,
		token("runtime", "d-secret", httpapi.Dispatcher),
		token("other", "o-secret", httpapi.Dispatcher),
		token("desktop", "u-secret", httpapi.User),
		token("audit", "a-secret", httpapi.Auditor),
	)
	runtime, other, person := s.as("d-secret"), s.as("o-secret"), s.as("u-secret")
	mine, theirs, person2, auditor := runtime.events(""), other.events(""), person.events(""), s.as("a-secret").events("")
	a := runtime.decide(shell("runtime-s", "make check"))
	b := other.decide(shell("other-s", "make check"))
	if ev := next(t, mine, time.Second); ev.Decision.DecisionID != a["decision_id"] {
		t.Fatalf("the runtime's stream: %s", ev.Data)
	}
	if ev := next(t, theirs, time.Second); ev.Decision.DecisionID != b["decision_id"] {
		t.Fatalf("the other dispatcher's stream: %s", ev.Data)
	}
	for name, stream := range map[string]*client.Stream{"user": person2, "auditor": auditor} {
		seen := map[string]bool{}
		for range 2 {
			seen[next(t, stream, time.Second).Decision.DecisionID] = true
		}
		if !seen[a["decision_id"].(string)] || !seen[b["decision_id"].(string)] {
			t.Fatalf("the %s's stream does not show every session: %v", name, seen)
		}
	}
	// The other dispatcher's answer and level change stay out of the
	// runtime's stream too.
	person.mustStatus(200, "POST", "/v1/decisions/"+b["decision_id"].(string)+"/answer", map[string]any{"answer": "deny"})
	person.mustStatus(200, "PATCH", "/v1/sessions/other-s", map[string]any{"permission_level": "READ_WRITE"})
	person.mustStatus(200, "PATCH", "/v1/sessions/runtime-s", map[string]any{"permission_level": "READ_WRITE"})
	if ev := next(t, mine, time.Second); ev.Kind != client.EventLevel || ev.Session.ID != "runtime-s" {
		t.Fatalf("the runtime's stream: %s %s", ev.Kind, ev.Data)
	}
	// Without a token there is no stream.
	if _, err := client.New(s.srv.URL).Events(context.Background(), ""); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("no token: %v", err)
	}
}

// A subscriber that reads nothing is dropped; decisions never wait for
// it, and other readers get every event. The stalls end only when the
// test says so (feed.Options.After), so a reader the machine's load keeps
// from its buffer for a while is never dropped by mistake, and the slow
// one is dropped exactly when its stall is ended.
func TestEventsASlowSubscriberIsDropped(t *testing.T) {
	stalls := make(chan chan time.Time, 256)
	logger, dropped := logged("dropped an event reader that fell behind; it resumes from its last id")
	var hub *feed.Hub
	s := startServiceWith(t, func(c *httpapi.Config, comp *pdp.Components) {
		h, err := feed.New(context.Background(), c.Store.(feed.ChangeLog), feed.Options{Buffer: 4, Logger: logger,
			After: func(time.Duration) <-chan time.Time {
				end := make(chan time.Time, 1)
				stalls <- end
				return end
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		hub, c.Feed, comp.Changes = h, h, h
	})
	slow, err := hub.Subscribe(context.Background(), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	// Five asks: the slow subscriber's buffer takes four, and it stalls
	// on the fifth — the only subscriber, so the first stall is its own.
	for i := range 5 {
		s.decide(shell("busy", "make docs -n "+strconv.Itoa(i)))
	}
	slowStall := <-stalls
	// Decisions go on while it stalls, and a reader gets each of them.
	reader := s.events("")
	const asks = 40
	for i := range asks {
		s.decide(shell("busy", "make lint -U"+strconv.Itoa(i)))
	}
	for i := range asks {
		if ev := next(t, reader, 10*time.Second); ev.Kind != client.EventAsk {
			t.Fatalf("event %d: %s", i, ev.Kind)
		}
	}
	// Its stall ends: it is dropped. Nothing reads its buffer before the
	// hub says so, or the room made would let it catch up.
	slowStall <- time.Now()
	<-dropped
	n := 0
	for range slow.Changes() {
		n++
	}
	if !errors.Is(slow.Err(), feed.ErrSlowReader) || n != 4 {
		t.Fatalf("the slow subscriber ended with %v after %d changes, want %v after its buffer's 4", slow.Err(), n, feed.ErrSlowReader)
	}
}

// The stream ends when the server shuts down, so a graceful stop does
// not wait for readers.
func TestEventsEndWhenTheFeedCloses(t *testing.T) {
	s := newService(t)
	stream := s.events("")
	s.feed.Close()
	done := make(chan error, 1)
	go func() {
		_, err := stream.Next()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("the stream ended with %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived the feed")
	}
}
