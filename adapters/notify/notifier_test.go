package notify_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/notify"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/sqlite"
)

// trail is a real SQLite store with its live feed, where the tests make
// asks as the engine records them.
type trail struct {
	t     *testing.T
	store *sqlite.Store
	hub   *feed.Hub
	n     int
}

func newTrail(t *testing.T) *trail {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "pdp.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := feed.New(t.Context(), store, feed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close(); store.Close() })
	return &trail{t: t, store: store, hub: hub}
}

// ask records an ask of a shell command in session and returns its id.
func (tr *trail) ask(session, command string) string {
	tr.t.Helper()
	tr.n++
	at := time.Now()
	capability := "shell.exec"
	ev := pdp.AuditRecord{Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: api.Ask, Source: "level", Rule: "LEVEL_shell.exec",
		Reason: "asks", Capability: &capability}, SessionID: session, Time: at,
		Request: api.DecideRequest{Tool: "shell", Args: map[string]any{"command": command}}}
	if _, err := tr.store.EnsureSession(tr.t.Context(), api.Session{ID: session, PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		tr.t.Fatal(err)
	}
	if err := tr.store.Record(tr.t.Context(), ev); err != nil {
		tr.t.Fatal(err)
	}
	tr.hub.Changed()
	return ev.Decision.DecisionID
}

// counts is an Observer that counts.
type counts struct {
	mu      sync.Mutex
	sent    map[string]int
	failed  map[string]int
	dropped map[string]int
	changed chan struct{}
}

func newCounts() *counts {
	return &counts{sent: map[string]int{}, failed: map[string]int{}, dropped: map[string]int{}, changed: make(chan struct{}, 1000)}
}

func (c *counts) add(m map[string]int, k string) {
	c.mu.Lock()
	m[k]++
	c.mu.Unlock()
	c.changed <- struct{}{}
}
func (c *counts) NotifySent(s string)            { c.add(c.sent, s) }
func (c *counts) NotifyFailed(s string)          { c.add(c.failed, s) }
func (c *counts) NotifyDropped(s, reason string) { c.add(c.dropped, s+" "+reason) }

// await waits until cond holds of the counts (a hang guard of 20 s).
func (c *counts) await(t *testing.T, what string, cond func(sent, failed, dropped map[string]int) bool) {
	t.Helper()
	guard := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		ok := cond(c.sent, c.failed, c.dropped)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.changed:
		case <-guard:
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Fatalf("%s: sent %v failed %v dropped %v", what, c.sent, c.failed, c.dropped)
		}
	}
}

// A sink that holds every request: its queue fills, and what does not
// fit is dropped and counted, never held; a filtered sink beside it gets
// only its sessions' asks, in order, at once.
func TestQueueBoundedAndFiltered(t *testing.T) {
	tr := newTrail(t)
	release := make(chan struct{})
	held := make(chan struct{}, 100)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held <- struct{}{}
		<-release
	}))
	defer stuck.Close()
	defer close(release)
	var mu sync.Mutex
	var prod []string
	fine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		prod = append(prod, ev.SessionID)
		mu.Unlock()
	}))
	defer fine.Close()
	c := newCounts()
	secret := []byte("0123456789abcdef0123")
	n, err := notify.New(notify.Options{Feed: tr.hub, Observer: c, Sinks: []notify.Sink{
		{Name: "stuck", Kind: notify.Webhook, URL: stuck.URL, Secret: secret, Events: []string{"ask"}, Queue: 4, Timeout: time.Hour, MaxAttempts: 1},
		{Name: "prod", Kind: notify.Webhook, URL: fine.URL, Secret: secret, Events: []string{"ask"}, Filter: notify.Filter{SessionPrefix: "prod-"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stop := n.Start(t.Context())
	defer stop()
	tr.ask("dev-1", "make")
	<-held // the stuck sink holds its first event
	for i := range 20 {
		tr.ask([]string{"dev-2", "prod-1"}[i%2], "make")
	}
	// One held, four queued: the other 16 are dropped.
	c.await(t, "the stuck sink's drops", func(_, _, dropped map[string]int) bool { return dropped["stuck queue_full"] == 16 })
	c.await(t, "the filtered sink", func(sent, _, _ map[string]int) bool { return sent["prod"] == 10 })
	mu.Lock()
	defer mu.Unlock()
	for _, s := range prod {
		if s != "prod-1" {
			t.Fatalf("the prod- sink got an ask of %s", s)
		}
	}
}

// A command sink runs its program, without a shell, with the event on
// standard input; a program that fails is tried again, then dropped.
func TestCommandSink(t *testing.T) {
	tr := newTrail(t)
	out := filepath.Join(t.TempDir(), "event.json")
	c := newCounts()
	n, err := notify.New(notify.Options{Feed: tr.hub, Observer: c, ConsoleURL: "https://pdp.example", Sinks: []notify.Sink{
		{Name: "desk", Kind: notify.Command, Command: []string{"sh", "-c", `cat > "$0"`, out}, Events: []string{"ask"}},
		{Name: "broken", Kind: notify.Command, Command: []string{"sh", "-c", "exit 3"}, Events: []string{"ask"}, MaxAttempts: 2, Backoff: time.Millisecond},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stop := n.Start(t.Context())
	defer stop()
	id := tr.ask("s", "git push")
	c.await(t, "the command sinks", func(sent, failed, dropped map[string]int) bool {
		return sent["desk"] == 1 && failed["broken"] == 2 && dropped["broken gave_up"] == 1
	})
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Event    string
		Decision struct {
			DecisionID string `json:"decision_id"`
			Args       map[string]any
		}
		ConsoleURL string `json:"console_url"`
		SentAt     string `json:"sent_at"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.Event != "ask" || ev.Decision.DecisionID != id || ev.Decision.Args["command"] != "git push" ||
		ev.ConsoleURL != "https://pdp.example/ui/?ask="+id+"#inbox" || ev.SentAt == "" {
		t.Fatalf("the program read %s (%v)", raw, err)
	}
}

// Bad sinks are refused with a message naming what is wrong.
func TestSinkChecks(t *testing.T) {
	hub := newTrail(t).hub
	for name, s := range map[string]notify.Sink{
		"no name":           {Kind: notify.Slack, URL: "https://hooks.slack.com/x", Events: []string{"ask"}},
		"unknown kind":      {Name: "a", Kind: "email", Events: []string{"ask"}},
		"webhook no secret": {Name: "a", Kind: notify.Webhook, URL: "https://x.example", Events: []string{"ask"}},
		"not http":          {Name: "a", Kind: notify.Slack, URL: "file:///etc/passwd", Events: []string{"ask"}},
		"unknown event":     {Name: "a", Kind: notify.Slack, URL: "https://x.example", Events: []string{"grant"}},
		"no events":         {Name: "a", Kind: notify.Slack, URL: "https://x.example"},
		"command no argv":   {Name: "a", Kind: notify.Command, Events: []string{"ask"}},
	} {
		if _, err := notify.New(notify.Options{Feed: hub, Sinks: []notify.Sink{s}}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := notify.SecretFrom("PDP_TEST_NO_SUCH_SECRET", os.Getenv); err == nil {
		t.Error("a missing secret was accepted")
	}
}

// An answer and an expiry are events of their own kinds: the sink that
// asks for "expired" only gets the asks the PDP answered itself.
func TestExpiredIsItsOwnEvent(t *testing.T) {
	tr := newTrail(t)
	got := make(chan notify.Event, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev notify.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		got <- ev
	}))
	defer srv.Close()
	n, err := notify.New(notify.Options{Feed: tr.hub, Sinks: []notify.Sink{
		{Name: "late", Kind: notify.Webhook, URL: srv.URL, Secret: []byte("0123456789abcdef"), Events: []string{"expired"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Start(t.Context())()
	answered, left := tr.ask("s", "make a"), tr.ask("s", "make b")
	if _, err := tr.store.AnswerDecision(t.Context(), answered, api.DenyAnswer, "console", api.Answerer{}); err != nil {
		t.Fatal(err)
	}
	tr.hub.Changed()
	if ids, _, err := tr.store.ExpireAsks(t.Context(), time.Now().Add(time.Hour), 10); err != nil || len(ids) != 1 || ids[0] != left {
		t.Fatalf("expired %v, %v", ids, err)
	}
	tr.hub.Changed()
	select {
	case ev := <-got:
		var d struct {
			DecisionID string `json:"decision_id"`
			Answer     struct{ Answer, Channel string }
		}
		if err := json.Unmarshal(ev.Decision, &d); err != nil || ev.Event != "expired" || d.DecisionID != left || d.Answer.Answer != "expired" || d.Answer.Channel != "pdp" {
			t.Fatalf("the expired event: %+v %s (%v)", ev, ev.Decision, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no expired event")
	}
	select {
	case ev := <-got:
		t.Fatalf("a second event: %+v", ev)
	default:
	}
}

// Answer links: an ask carries one link per answer it may take — only
// allow_once and deny, unless the sink allows grants and the call is
// grantable — each a ticket for that answer and that sink only.
func TestAnswerLinksInAsks(t *testing.T) {
	tr := newTrail(t)
	got := make(chan map[string]any, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		body["path"] = r.URL.Path
		got <- body
	}))
	defer srv.Close()
	secret := []byte("0123456789abcdef")
	n, err := notify.New(notify.Options{Feed: tr.hub, Tickets: tr.store, TicketTTL: time.Hour, ConsoleURL: "https://pdp.example", Sinks: []notify.Sink{
		{Name: "plain", Kind: notify.Webhook, URL: srv.URL + "/plain", Secret: secret, Events: []string{"ask"}, AnswerLinks: true},
		{Name: "grants", Kind: notify.Webhook, URL: srv.URL + "/grants", Secret: secret, Events: []string{"ask"}, AnswerLinks: true, AllowGrants: true},
		{Name: "slack", Kind: notify.Slack, URL: srv.URL + "/slack", Events: []string{"ask"}, AnswerLinks: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Start(t.Context())()
	id := tr.grantableAsk("s", "git status")
	bySink := map[string]map[string]any{}
	for range 3 {
		select {
		case b := <-got:
			bySink[b["path"].(string)] = b
		case <-time.After(20 * time.Second):
			t.Fatalf("got %v", bySink)
		}
	}
	for sink, want := range map[string][]string{"plain": {"allow_once", "deny"}, "grants": {"allow_once", "allow_project", "allow_session", "deny"}} {
		links, _ := bySink["/"+sink]["answer_links"].(map[string]any)
		if len(links) != len(want) {
			t.Fatalf("%s links: %v, want %v", sink, links, want)
		}
		for _, answer := range want {
			link, _ := links[answer].(string)
			ticket, ok := strings.CutPrefix(link, "https://pdp.example/v1/decisions/"+id+"/answer?ticket=")
			if !ok {
				t.Fatalf("%s %s link %q", sink, answer, link)
			}
			tk, err := tr.store.PeekTicket(t.Context(), ticket, id)
			if err != nil || tk.Answer != answer || tk.Sink != sink || !tk.Expires.After(time.Now()) {
				t.Fatalf("%s %s ticket: %+v %v", sink, answer, tk, err)
			}
		}
	}
	blocks, _ := json.Marshal(bySink["/slack"]["blocks"])
	for _, want := range []string{"Allow once…", "Deny…", "/answer?ticket="} {
		if !strings.Contains(string(blocks), want) {
			t.Fatalf("the Slack message lacks %q: %s", want, blocks)
		}
	}
	if strings.Contains(string(blocks), "Allow for the session") {
		t.Fatalf("a grant button without allow_grants: %s", blocks)
	}
}

// grantableAsk records an ask a person may answer allow_session.
func (tr *trail) grantableAsk(session, command string) string {
	tr.t.Helper()
	at := time.Now()
	capability, fp := "shell.exec", command
	ev := pdp.AuditRecord{Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: api.Ask, Source: "level", Rule: "LEVEL_shell.exec",
		Reason: "asks", Capability: &capability, Fingerprint: &fp, Grantable: true}, SessionID: session, Time: at,
		Request: api.DecideRequest{Tool: "shell", Args: map[string]any{"command": command}}}
	if _, err := tr.store.EnsureSession(tr.t.Context(), api.Session{ID: session, PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		tr.t.Fatal(err)
	}
	if err := tr.store.Record(tr.t.Context(), ev); err != nil {
		tr.t.Fatal(err)
	}
	tr.hub.Changed()
	return ev.Decision.DecisionID
}

// TestTheRuleOfTwosAskLinksAcceptForTheSession: a sink with grants links
// the Rule of Two's ask to allow_session (which accepts the session's
// three flow labels), never to allow_project.
func TestTheRuleOfTwosAskLinksAcceptForTheSession(t *testing.T) {
	tr := newTrail(t)
	got := make(chan map[string]any, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
	}))
	defer srv.Close()
	n, err := notify.New(notify.Options{Feed: tr.hub, Tickets: tr.store, TicketTTL: time.Hour, ConsoleURL: "https://pdp.example", Sinks: []notify.Sink{
		{Name: "grants", Kind: notify.Webhook, URL: srv.URL, Secret: []byte("0123456789abcdef"), Events: []string{"ask"}, AnswerLinks: true, AllowGrants: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Start(t.Context())()
	at := time.Now()
	capability := "shell.exec"
	ev := pdp.AuditRecord{Decision: api.Decision{DecisionID: pdp.NewDecisionID(at), Decision: api.Ask, Source: "config", Rule: api.FlowRule,
		Reason: "the Rule of Two", Capability: &capability, Labels: []string{api.LabelExternal}}, SessionID: "f", Time: at,
		Request: api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git push"}}}
	if _, err := tr.store.EnsureSession(t.Context(), api.Session{ID: "f", PermissionLevel: api.Full, Mode: api.OnDemand, ExecutionMode: api.Local}); err != nil {
		t.Fatal(err)
	}
	if err := tr.store.Record(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	tr.hub.Changed()
	var body map[string]any
	select {
	case body = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("no notification")
	}
	links, _ := body["answer_links"].(map[string]any)
	if len(links) != 3 || links["allow_session"] == nil || links["allow_project"] != nil {
		t.Fatalf("links: %v, want allow_once, deny and allow_session", links)
	}
}
