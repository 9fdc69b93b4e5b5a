package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/testserver"
)

// TestWalkThrough runs the README's walk-through through the client.
func TestWalkThrough(t *testing.T) {
	srv := testserver.New(t)
	c := client.New(srv.URL)
	ctx := context.Background()
	ws := "/home/me/proj"

	if _, err := c.Sessions().Create(ctx, client.Session{ID: "demo", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	shell := func(cmd string) client.Decision {
		d, err := c.Decide(ctx, client.DecideRequest{SessionID: "demo", Tool: "shell", Args: map[string]any{"command": cmd}, Cwd: ws}, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ask := shell("make check")
	if ask.Decision != client.Ask || !ask.Grantable || *ask.Fingerprint != "make check" {
		t.Fatalf("first make check: %+v", ask)
	}
	ev, err := c.Answer(ctx, ask.DecisionID, client.AllowSession, "cli")
	if err != nil || ev.Answer == nil || ev.Answer.GrantID == 0 {
		t.Fatalf("answer: %+v %v", ev, err)
	}
	if d := shell("make check --short"); d.Decision != client.Allow || d.Source != "session-grant" {
		t.Fatalf("granted: %+v", d)
	}
	compound := shell("make check; rm -rf build")
	if compound.Decision != client.Ask || compound.Fingerprint != nil {
		t.Fatalf("compound: %+v", compound)
	}
	page, err := c.Decisions(ctx, client.Filter{SessionID: "demo", Limit: 2})
	if err != nil || len(page.Decisions) != 2 || page.Decisions[0].DecisionID != compound.DecisionID || page.NextBefore == "" {
		t.Fatalf("audit trail: %+v %v", page, err)
	}
	level := client.Level("READ_WRITE")
	if s, err := c.Sessions().Update(ctx, "demo", client.SessionChange{PermissionLevel: &level}); err != nil || s.PermissionLevel != level {
		t.Fatalf("level switch: %+v %v", s, err)
	}
	d, err := c.Decide(ctx, client.DecideRequest{SessionID: "demo", Tool: "write_file", Args: map[string]any{"path": "src/a.go"}, Cwd: ws}, true)
	if err != nil || d.Decision != client.Allow || d.Source != "level" || len(d.Trace) == 0 {
		t.Fatalf("write after the switch: %+v %v", d, err)
	}
	grants, err := c.Grants().List(ctx, "demo")
	if err != nil || len(grants) != 1 {
		t.Fatalf("grants: %+v %v", grants, err)
	}
	if err := c.Grants().Revoke(ctx, "demo", grants[0].ID); err != nil {
		t.Fatal(err)
	}
	if d := shell("make check"); d.Decision != client.Ask {
		t.Fatalf("after revoking: %+v", d)
	}
}

func TestTypedErrors(t *testing.T) {
	srv := testserver.New(t)
	c := client.New(srv.URL)
	ctx := context.Background()

	_, err := c.Decide(ctx, client.DecideRequest{SessionID: "bad id", Tool: "Read"}, false)
	var apiErr *client.Error
	if !errors.Is(err, client.ErrBadRequest) || !errors.As(err, &apiErr) || apiErr.Code != "invalid_session_id" {
		t.Fatalf("bad id: %v", err)
	}
	if _, err := c.Sessions().Get(ctx, "nobody"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := c.Sessions().Create(ctx, client.Session{ID: "twice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sessions().Create(ctx, client.Session{ID: "twice"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("duplicate: %v", err)
	}
	d, _ := c.Decide(ctx, client.DecideRequest{SessionID: "twice", Tool: "shell", Args: map[string]any{"command": "ls | sh"}}, false)
	if _, err := c.Answer(ctx, d.DecisionID, client.AllowSession, "cli"); !errors.Is(err, client.ErrNotGrantable) {
		t.Fatalf("allow_session on a compound command: %v", err)
	}
	ev, err := c.Decision(ctx, d.DecisionID, 50*time.Millisecond)
	if err != nil || ev.Answer != nil {
		t.Fatalf("an unanswered ask after a wait: %+v %v", ev, err)
	}
}

func TestRetriesOnlyConnectionErrors(t *testing.T) {
	// A server that is not listening yet: the client retries until it is.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	go func() {
		time.Sleep(150 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		_ = http.Serve(l, testserver.New(t).Handler) // the PDP's real API on a real SQLite file
	}()
	c := client.New("http://"+addr, client.WithRetries(8, 50*time.Millisecond))
	if _, err := c.Decide(context.Background(), client.DecideRequest{SessionID: "r", Tool: "Read", Cwd: "/w"}, false); err != nil {
		t.Fatalf("no retry on a refused connection: %v", err)
	}

	// An HTTP answer, even 503, is never retried.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"audit_unavailable","message":"disk full"}}`))
	}))
	defer srv.Close()
	_, err = client.New(srv.URL, client.WithRetries(3, time.Millisecond)).Decide(context.Background(), client.DecideRequest{SessionID: "r", Tool: "Read"}, false)
	if !errors.Is(err, client.ErrUnavailable) || calls.Load() != 1 {
		t.Fatalf("503: %v after %d calls", err, calls.Load())
	}
}

// TestAwaitAnswerWaitsTheWholeWait: a server that ends each wait early
// (its max_wait, a restart) is asked again while time is left, not in a
// busy loop, and the answer ends the wait; a wait without an answer
// returns the decision as it stands when it ends.
func TestAwaitAnswerWaitsTheWholeWait(t *testing.T) {
	var asked, answerAfter atomic.Int32
	answerAfter.Store(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asked.Add(1)
		if n == 1 && r.URL.Query().Get("wait") == "" {
			t.Errorf("the first request asked without a wait: %s", r.URL)
		}
		ev := `{"decision_id":"d1","decision":"ask"}`
		if n >= answerAfter.Load() {
			ev = `{"decision_id":"d1","decision":"ask","answer":{"answer":"allow_once","channel":"console"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(ev))
	}))
	defer srv.Close()
	c := client.New(srv.URL)
	start := time.Now()
	ev, err := c.AwaitAnswer(context.Background(), "d1", 10*time.Second, time.Second)
	if err != nil || ev.Answer == nil || ev.Answer.Answer != "allow_once" || asked.Load() != 3 {
		t.Fatalf("got %+v %v after %d requests", ev, err, asked.Load())
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("asked 3 times in %v: a busy loop", took)
	}

	asked.Store(0)
	answerAfter.Store(100)
	ev, err = c.AwaitAnswer(context.Background(), "d1", 1500*time.Millisecond, time.Second)
	if err != nil || ev.Answer != nil || ev.DecisionID != "d1" || asked.Load() > 3 {
		t.Fatalf("an unanswered wait: %+v %v after %d requests", ev, err, asked.Load())
	}
}
