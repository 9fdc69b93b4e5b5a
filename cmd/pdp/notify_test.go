package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/pgtest"
	"github.com/toolperm/pdp/internal/testserver"
)

const notifySecret = "test-secret-0123456789"

// delivered is one event a webhook receiver got, its signature checked.
type delivered struct {
	Event       string     `json:"event"`
	ID          int64      `json:"id"`
	Decision    *api.Event `json:"decision"`
	Session     *api.Session
	Policy      *struct{ Revision, Source string } `json:"policy"`
	ConsoleURL  string                             `json:"console_url"`
	AnswerLinks map[string]string                  `json:"answer_links"`
	SentAt      string                             `json:"sent_at"`
	at          time.Time
}

// receiver is a webhook endpoint that checks every POST as the docs tell
// a receiver to: the HMAC-SHA256 of the raw body with the shared secret,
// and a timestamp header equal to the body's sent_at.
type receiver struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	got []delivered
	new chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, new: make(chan struct{}, 1000)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mac := hmac.New(sha256.New, []byte(notifySecret))
		mac.Write(body)
		want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
		if !hmac.Equal([]byte(req.Header.Get("X-PDP-Signature")), []byte(want)) {
			t.Errorf("bad signature %q on %s", req.Header.Get("X-PDP-Signature"), body)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var d delivered
		if err := json.Unmarshal(body, &d); err != nil || d.SentAt == "" || d.SentAt != req.Header.Get("X-PDP-Timestamp") || req.Header.Get("X-PDP-Event") != d.Event {
			t.Errorf("event %s with headers %v: %v", body, req.Header, err)
		}
		d.at = time.Now()
		r.mu.Lock()
		r.got = append(r.got, d)
		r.mu.Unlock()
		r.new <- struct{}{}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// await waits until cond holds of what arrived (a hang guard of 30 s).
func (r *receiver) await(what string, cond func([]delivered) bool) []delivered {
	r.t.Helper()
	guard := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		got := slices.Clone(r.got)
		r.mu.Unlock()
		if cond(got) {
			return got
		}
		select {
		case <-r.new:
		case <-guard:
			r.t.Fatalf("%s: the receiver got %+v", what, got)
		}
	}
}

func find(got []delivered, event, decisionID string) *delivered {
	for i := range got {
		if got[i].Event == event && (decisionID == "" || got[i].Decision != nil && got[i].Decision.DecisionID == decisionID) {
			return &got[i]
		}
	}
	return nil
}

// metricValue reads one sample of /metrics, 0 when absent.
func metricValue(t *testing.T, url, series string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestNotificationsReachPeople runs `pdp serve` with four webhook sinks:
// one that works, one that is down, one that takes 30 s, one that
// answers 500. The working one gets the ask, its answer and a level
// change, signed, with a link to the console; the others are tried
// again, then dropped and counted; and every decision meanwhile is
// answered as usual.
func TestNotificationsReachPeople(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	good := newReceiver(t)
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
	}))
	defer slow.Close()
	defer close(release)
	five := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer five.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()

	dir := t.TempDir()
	sink := func(name, url, extra string) string {
		return fmt.Sprintf("    - name: %s\n      kind: webhook\n      url: %s\n      secret_env: PDP_TEST_NOTIFY_SECRET\n%s", name, url, extra)
	}
	failing := "      events: [ask]\n      timeout: 300ms\n      max_attempts: 2\n      backoff: 10ms\n"
	cfg := writeConfig(t, dir, "notify:\n  console_url: https://pdp.example:8181/\n  sinks:\n"+
		sink("ops", good.srv.URL, "      events: [ask, answer, expired, level]\n      answer_links: true\n")+
		sink("down", down, failing)+sink("slow", slow.URL, failing)+sink("five", five.URL, failing))
	url := startCmd(t, serveProcess(filepath.Join(dir, "pdp.db"), cfg, "PDP_TEST_NOTIFY_SECRET="+notifySecret))

	work := t.TempDir()
	asked := time.Now()
	ask := decide(t, url, "nt", "shell", `{"command":"make release"}`, work)
	if ask.Decision != api.Ask {
		t.Fatalf("want an ask, got %+v", ask)
	}
	got := good.await("the ask", func(got []delivered) bool { return find(got, "ask", ask.DecisionID) != nil })
	ev := find(got, "ask", ask.DecisionID)
	t.Logf("the ask reached the webhook %v after the decide call began", ev.at.Sub(asked))
	if ev.ConsoleURL != "https://pdp.example:8181/ui/?ask="+ask.DecisionID+"#inbox" || ev.Decision.Args["command"] != "make release" || ev.Decision.SessionID != "nt" {
		t.Fatalf("the ask event: %+v", ev)
	}

	// Decisions go on while the failing sinks are tried: each is answered.
	var worst time.Duration
	for i := range 20 {
		start := time.Now()
		decide(t, url, "nt", "shell", fmt.Sprintf(`{"command":"make step%d"}`, i), work)
		worst = max(worst, time.Since(start))
	}
	t.Logf("20 decisions while three sinks failed: the slowest took %v", worst)

	// The deny link: its page answers nothing, its form's POST does.
	deny, ok := strings.CutPrefix(ev.AnswerLinks["deny"], "https://pdp.example:8181")
	if !ok || len(ev.AnswerLinks) != 2 || ev.AnswerLinks["allow_once"] == "" {
		t.Fatalf("answer links %v: want allow_once and deny, no grant (allow_grants is off)", ev.AnswerLinks)
	}
	for _, method := range []string{"GET", "POST"} {
		req, _ := http.NewRequest(method, url+deny, nil)
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Origin", url)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s of the deny link: %v %v", method, resp, err)
		}
		resp.Body.Close()
		var rec api.Event
		call(t, "GET", url+"/v1/decisions/"+ask.DecisionID, "", &rec)
		if answered := rec.Answer != nil; answered != (method == "POST") {
			t.Fatalf("after the %s the answer is %+v", method, rec.Answer)
		}
	}
	if code := call(t, "PATCH", url+"/v1/sessions/nt", `{"permission_level":"READ_WRITE"}`, nil); code != http.StatusOK {
		t.Fatalf("level: %d", code)
	}
	got = good.await("the answer and the level", func(got []delivered) bool {
		return find(got, "answer", ask.DecisionID) != nil && find(got, "level", "") != nil
	})
	if a := find(got, "answer", ask.DecisionID); a.Decision.Answer == nil || a.Decision.Answer.Answer != "deny" || a.Decision.Answer.Channel != "ops" {
		t.Fatalf("the answer event: %+v", a)
	}
	if l := find(got, "level", ""); l.Session == nil || l.Session.ID != "nt" || l.Session.PermissionLevel != "READ_WRITE" {
		t.Fatalf("the level event: %+v", l)
	}

	// The first ask of each failing sink: tried twice, then dropped.
	for deadline := time.Now().Add(30 * time.Second); ; {
		done := true
		for _, s := range []string{"down", "slow", "five"} {
			if metricValue(t, url, `pdp_notify_failed_total{sink="`+s+`"}`) < 2 || metricValue(t, url, `pdp_notify_dropped_total{reason="gave_up",sink="`+s+`"}`) < 1 {
				done = false
			}
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the failing sinks were not tried twice and dropped")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sent := metricValue(t, url, `pdp_notify_sent_total{sink="ops"}`); sent < 3 {
		t.Fatalf("pdp_notify_sent_total{sink=\"ops\"} = %v", sent)
	}
	for _, s := range []string{"down", "slow", "five"} {
		if sent := metricValue(t, url, `pdp_notify_sent_total{sink="`+s+`"}`); sent != 0 {
			t.Fatalf("the failing sink %s counted %v sent", s, sent)
		}
	}
}

// TestNotificationsOnceAcrossReplicas: two `pdp serve` on one PostgreSQL
// database, with the same sink; asks made on either are each delivered
// once, by one replica.
func TestNotificationsOnceAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and server processes")
	}
	db := pgtest.Start(t)
	good := newReceiver(t)
	cfg := writeConfig(t, t.TempDir(), "notify:\n  sinks:\n    - name: ops\n      kind: webhook\n      url: "+good.srv.URL+
		"\n      secret_env: PDP_TEST_NOTIFY_SECRET\n      events: [ask, policy]\n")
	env := "PDP_TEST_NOTIFY_SECRET=" + notifySecret
	a, b := serveProcess(db, cfg, env), serveProcess(db, cfg, env)
	urlA, _ := testserver.Process(t, a, 30*time.Second)
	urlB, _ := testserver.Process(t, b, 30*time.Second)
	work := t.TempDir()
	var ids []string
	for i := range 12 {
		url := []string{urlA, urlB}[i%2]
		d := decide(t, url, "once", "shell", fmt.Sprintf(`{"command":"make r%d"}`, i), work)
		if d.Decision != api.Ask {
			t.Fatalf("want an ask, got %+v", d)
		}
		ids = append(ids, d.DecisionID)
	}
	good.await("every ask and the policy both replicas activated", func(got []delivered) bool {
		if find(got, "policy", "") == nil {
			return false
		}
		for _, id := range ids {
			if find(got, "ask", id) == nil {
				return false
			}
		}
		return true
	})
	for _, cmd := range []*exec.Cmd{a, b} {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("pdp serve exited with %v", err)
		}
	}
	good.mu.Lock()
	defer good.mu.Unlock()
	count := map[string]int{}
	policies := 0
	for _, d := range good.got {
		if d.Event == "policy" {
			if d.Policy == nil || d.Policy.Revision == "" || d.Policy.Source != "builtin" || d.ID >= 0 {
				t.Fatalf("the policy event: %+v", d)
			}
			policies++
			continue
		}
		count[d.Decision.DecisionID]++
	}
	if policies != 1 {
		t.Fatalf("the revision both replicas activated was delivered %d times", policies)
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Fatalf("ask %s delivered %d times (all: %v)", id, count[id], count)
		}
	}
	if len(good.got) != len(ids)+1 {
		t.Fatalf("%d deliveries for %d asks and one policy", len(good.got), len(ids))
	}
}
