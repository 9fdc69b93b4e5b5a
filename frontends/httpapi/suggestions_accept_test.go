package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"bytes"
	"encoding/json"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
)

// Accepting a suggestion for a project makes the next such call allow in
// every session of the project and changes no other call; it is an
// answer in the trail and the live feed, and a dispatcher cannot.
func TestAcceptSuggestionForTheProject(t *testing.T) {
	srv := testserver.New(t, testserver.Tokens(
		testserver.Token("agent", "agent-secret", httpapi.Dispatcher),
		testserver.Token("other", "other-secret", httpapi.Dispatcher),
		testserver.Token("alice", "alice-secret", httpapi.User),
		testserver.Token("audit", "audit-secret", httpapi.Auditor),
	))
	ctx := context.Background()
	agent := client.New(srv.URL, client.WithToken("agent-secret"))
	other := client.New(srv.URL, client.WithToken("other-secret"))
	alice := client.New(srv.URL, client.WithToken("alice-secret"))
	cwds := map[string]string{}
	create := func(c *client.Client, id, workspace string) {
		t.Helper()
		cwds[id] = workspace
		if _, err := c.Sessions().Create(ctx, client.Session{ID: id, Workspace: workspace}); err != nil {
			t.Fatal(err)
		}
	}
	decide := func(c *client.Client, session, command string) api.Decision {
		t.Helper()
		d, err := c.Decide(ctx, client.DecideRequest{SessionID: session, Tool: "shell", Args: map[string]any{"command": command}, Cwd: cwds[session]}, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		create(agent, s, "/w")
		for _, cmd := range []string{"make check", "make check --short"} {
			if _, err := alice.Answer(ctx, decide(agent, s, cmd).DecisionID, api.AllowOnce, "console"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := alice.Answer(ctx, decide(agent, s, "go test ./..."+" -run X").DecisionID, api.AllowOnce, "console"); err != nil {
			t.Fatal(err)
		}
	}
	create(agent, "s4", "/w")        // the same project, no evidence of its own
	create(agent, "elsewhere", "/x") // another workspace
	create(other, "theirs", "/w")    // another owner's project

	accept := func(token string, body map[string]any) (int, map[string]any) {
		t.Helper()
		return postJSON(t, srv.URL+"/v1/suggestions/accept", token, body)
	}
	if code, out := accept("agent-secret", map[string]any{"pattern": "make check", "session_id": "s1"}); code != http.StatusForbidden {
		t.Fatalf("a dispatcher's accept: %d %v", code, out)
	}
	events, err := client.New(srv.URL, client.WithToken("alice-secret")).Events(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	if code, out := accept("alice-secret", map[string]any{"pattern": "go test ./... -run X", "session_id": "s1", "min_answers": 3}); code != http.StatusUnprocessableEntity {
		t.Fatalf("accepting a rule longer than its fingerprint: %d %v", code, out)
	}
	if code, out := accept("alice-secret", map[string]any{"pattern": "make lint", "session_id": "s1"}); code != http.StatusNotFound {
		t.Fatalf("accepting what is not suggested: %d %v", code, out)
	}
	code, out := accept("alice-secret", map[string]any{"pattern": "make check", "session_id": "s1"})
	if code != http.StatusOK {
		t.Fatalf("accept: %d %v", code, out)
	}
	answer, _ := out["answer"].(map[string]any)
	id, _ := out["decision_id"].(string)
	if answer["answer"] != api.AllowProject || answer["channel"] != "suggestion" || answer["grant_id"] == nil || out["fingerprint"] != "make check" {
		t.Fatalf("the accept is not a project grant: %v", out)
	}

	for _, s := range []string{"s1", "s2", "s3", "s4"} {
		for _, cmd := range []string{"make check", "make check -sb"} {
			if d := decide(agent, s, cmd); d.Decision != api.Allow || d.Source != "project-grant" {
				t.Errorf("%s in %s after the accept: %s %s", cmd, s, d.Decision, d.Source)
			}
		}
		for _, cmd := range []string{"make lint", "make check; rm -rf x", "go test ./... -run X"} {
			if d := decide(agent, s, cmd); d.Decision == api.Allow {
				t.Errorf("%s in %s changed: %s %s", cmd, s, d.Decision, d.Source)
			}
		}
	}
	if d := decide(agent, "elsewhere", "make check"); d.Decision != api.Ask {
		t.Errorf("another workspace: %s %s", d.Decision, d.Source)
	}
	if d := decide(other, "theirs", "make check"); d.Decision != api.Ask {
		t.Errorf("another owner's project: %s %s", d.Decision, d.Source)
	}

	// In the trail and the live feed: the ask it made and its answer.
	rec, err := alice.Decision(ctx, id, 0)
	if err != nil || rec.Answer == nil || rec.Answer.Channel != "suggestion" || rec.SessionID != "s1" {
		t.Fatalf("the accept in the trail: %+v %v", rec, err)
	}
	seen := map[string]bool{}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() { <-wait.Done(); events.Close() }()
	for !seen["answer"] {
		ev, err := events.Next()
		if err != nil {
			t.Fatalf("the live feed ended before the accept's answer (%v); saw %v", err, seen)
		}
		if ev.Decision != nil && ev.Decision.DecisionID == id {
			seen[ev.Kind] = true
		}
	}
	if !seen["ask"] {
		t.Errorf("the live feed had the answer but not the ask: %v", seen)
	}
	// The dispatcher's refusal is recorded.
	var refusals struct {
		AccessEvents []map[string]any `json:"access_events"`
	}
	getJSON(t, srv.URL+"/v1/access-events", "audit-secret", &refusals)
	found := false
	for _, r := range refusals.AccessEvents {
		if r["route"] == "/v1/suggestions/accept" && r["token"] == "agent" {
			found = true
		}
	}
	if !found {
		t.Errorf("the dispatcher's accept is not among the refusals: %v", refusals.AccessEvents)
	}
}

func postJSON(t *testing.T, url, token string, body any) (int, map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func getJSON(t *testing.T, url, token string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
