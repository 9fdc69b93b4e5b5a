package httpapi_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
)

// TestAnOutcomeIsNoAnswer: a dispatcher records allow_once on an ask a
// request is parked on (?wait=). An outcome is a record of what a
// runtime did, never a permission: the waiter is not woken and gets no
// answer, the ask stays pending, and a person's later answer still
// decides it and wakes the next waiter.
func TestAnOutcomeIsNoAnswer(t *testing.T) {
	s := newSecuredService(t)
	runtime, person := s.as("d-secret"), s.as("u-secret")
	body := shell("o", "make")
	body["tool_use_id"] = "toolu_o"
	ask := runtime.mustStatus(200, "POST", "/v1/decide", body)
	id := ask["decision_id"].(string)

	var wg sync.WaitGroup
	var parked map[string]any
	var waited time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		_, parked = runtime.call("GET", "/v1/decisions/"+id+"?wait=1500ms", nil)
		waited = time.Since(start)
	}()
	time.Sleep(200 * time.Millisecond)
	rec := runtime.mustStatus(200, "POST", "/v1/decisions/by-tool-use/toolu_o/outcome", map[string]any{"answer": "allow_once", "channel": "claude-code"})
	if rec["answer"] != nil {
		t.Fatalf("the outcome was recorded as an answer: %v", rec["answer"])
	}
	if o, _ := rec["outcome"].(map[string]any); o["answer"] != "allow_once" || o["channel"] != "claude-code" || o["by"] != "runtime" || o["recorded_at"] == nil {
		t.Fatalf("the outcome: %v", rec["outcome"])
	}
	wg.Wait()
	if parked["answer"] != nil || waited < 1500*time.Millisecond {
		t.Fatalf("the parked request got answer %v after %s: an outcome ended the wait", parked["answer"], waited)
	}
	if o, _ := parked["outcome"].(map[string]any); o["answer"] != "allow_once" {
		t.Fatalf("the parked request's record has no outcome: %v", parked)
	}

	// Still pending: a person answers it, and the next waiter gets that.
	var answered map[string]any
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, answered = runtime.call("GET", "/v1/decisions/"+id+"?wait=5s", nil)
	}()
	time.Sleep(200 * time.Millisecond)
	person.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "deny", "channel": "desktop"})
	wg.Wait()
	if a, _ := answered["answer"].(map[string]any); a["answer"] != "deny" || a["channel"] != "desktop" {
		t.Fatalf("the waiter after the person's answer got %v", answered["answer"])
	}
	if o, _ := answered["outcome"].(map[string]any); o["answer"] != "allow_once" {
		t.Fatalf("the person's answer dropped the outcome: %v", answered["outcome"])
	}
	// One outcome per ask; none grants.
	runtime.mustStatus(http.StatusConflict, "POST", "/v1/decisions/by-tool-use/toolu_o/outcome", map[string]any{"answer": "allow_once", "channel": "claude-code"})
	if grants := person.mustStatus(200, "GET", "/v1/sessions/o/grants", nil)["grants"].([]any); len(grants) != 0 {
		t.Fatalf("grants: %v", grants)
	}
}

// TestAnOutcomeNamesTheRuntime: an outcome is recorded under the
// runtime's channel; a person's channel, or anything that is not a plain
// runtime name, is refused and writes nothing.
func TestAnOutcomeNamesTheRuntime(t *testing.T) {
	s := newSecuredService(t)
	runtime, person := s.as("d-secret"), s.as("u-secret")
	body := shell("ch", "make")
	body["tool_use_id"] = "toolu_ch"
	id := runtime.mustStatus(200, "POST", "/v1/decide", body)["decision_id"].(string)
	for _, channel := range []string{"console", "desktop", "terminal", "cli", "api", "CONSOLE", "ᴄonsole", "desktop\u200b", "", "a b"} {
		if channel == "" {
			continue // the default, below
		}
		code, out := runtime.call("POST", "/v1/decisions/by-tool-use/toolu_ch/outcome", map[string]any{"answer": "allow_once", "channel": channel})
		if e, _ := out["error"].(map[string]any); code != http.StatusBadRequest || e["code"] != "invalid_channel" {
			t.Fatalf("channel %q: %d %v, want 400 invalid_channel", channel, code, out)
		}
	}
	if got := person.mustStatus(200, "GET", "/v1/decisions/"+id, nil); got["outcome"] != nil || got["answer"] != nil {
		t.Fatalf("a refused outcome was recorded: %v / %v", got["outcome"], got["answer"])
	}
	rec := runtime.mustStatus(200, "POST", "/v1/decisions/by-tool-use/toolu_ch/outcome", map[string]any{"answer": "deny"})
	if o, _ := rec["outcome"].(map[string]any); o["channel"] != "runtime" || o["answer"] != "deny" {
		t.Fatalf("without a channel: %v", rec["outcome"])
	}
}

// TestAnOutcomeIsAnOutcomeEvent: the live stream tells of an outcome as
// an outcome event, never as an answer; the person's answer after it is
// the answer event.
func TestAnOutcomeIsAnOutcomeEvent(t *testing.T) {
	s := newService(t)
	stream := s.events("")
	body := shell("oe", "make")
	body["tool_use_id"] = "toolu_oe"
	id := s.decide(body)["decision_id"].(string)
	if ev := next(t, stream, time.Second); ev.Kind != client.EventAsk {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
	s.mustStatus(200, "POST", "/v1/decisions/by-tool-use/toolu_oe/outcome", map[string]any{"answer": "allow_once", "channel": "claude-code"})
	ev := next(t, stream, time.Second)
	if ev.Kind != client.EventOutcome || ev.Decision == nil || ev.Decision.DecisionID != id || ev.Decision.Answer != nil ||
		ev.Decision.Outcome == nil || ev.Decision.Outcome.Answer != client.AllowOnce {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
	s.mustStatus(200, "POST", "/v1/decisions/"+id+"/answer", map[string]any{"answer": "allow_once", "channel": "desktop"})
	if ev := next(t, stream, time.Second); ev.Kind != client.EventAnswer || ev.Decision.Answer == nil || ev.Decision.Answer.Channel != "desktop" {
		t.Fatalf("%s event: %s", ev.Kind, ev.Data)
	}
}
