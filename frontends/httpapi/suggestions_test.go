package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
)

func TestSuggestionsEndpoint(t *testing.T) {
	srv := testserver.New(t, testserver.Tokens(
		testserver.Token("agent", "agent-secret", httpapi.Dispatcher),
		testserver.Token("other", "other-secret", httpapi.Dispatcher),
		testserver.Token("alice", "alice-secret", httpapi.User),
		testserver.Token("audit", "audit-secret", httpapi.Auditor),
	))
	ctx := context.Background()
	agent := client.New(srv.URL, client.WithToken("agent-secret"))
	alice := client.New(srv.URL, client.WithToken("alice-secret"))
	for _, s := range []string{"s1", "s2"} {
		if _, err := agent.Sessions().Create(ctx, client.Session{ID: s, Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			d, err := agent.Decide(ctx, client.DecideRequest{SessionID: s, Tool: "shell", Args: map[string]any{"command": "go vet ./..."}, Cwd: "/w"}, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := alice.Answer(ctx, d.DecisionID, api.AllowOnce, "console"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := agent.Sessions().Create(ctx, client.Session{ID: "lone", Workspace: "/elsewhere"}); err != nil {
		t.Fatal(err)
	}
	get := func(token, query string) (int, api.Suggestions) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/suggestions"+query, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out api.Suggestions
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, tc := range []struct {
		name, token, query string
		code, suggestions  int
	}{
		{"a person reads every session", "alice-secret", "", 200, 1},
		{"an auditor too", "audit-secret", "?since=1d", 200, 1},
		{"min_answers above the evidence", "alice-secret", "?min_answers=7", 200, 0},
		{"a dispatcher must name a session", "agent-secret", "", 403, 0},
		{"a dispatcher reads its own session's project", "agent-secret", "?session_id=s1", 200, 1},
		{"a session without the suggestion's evidence in its project", "agent-secret", "?session_id=lone", 200, 0},
		{"another dispatcher's session is unknown", "other-secret", "?session_id=s1", 404, 0},
		{"bad since", "alice-secret", "?since=last+week", 400, 0},
		{"bad min_answers", "alice-secret", "?min_answers=0", 400, 0},
		{"no token", "", "", 401, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := get(tc.token, tc.query)
			if code != tc.code || len(out.Suggestions) != tc.suggestions {
				t.Fatalf("%d %+v, want %d with %d suggestions", code, out, tc.code, tc.suggestions)
			}
			wantScope := "policy"
			if tc.query != "" && tc.query[:min(len(tc.query), 11)] == "?session_id" {
				wantScope = "project"
			}
			if tc.suggestions == 1 && (out.Suggestions[0].Pattern != "go vet ./..." || out.Suggestions[0].Evidence.Allows != 6 || out.Suggestions[0].Scope != wantScope) {
				t.Fatalf("%+v", out.Suggestions[0])
			}
		})
	}
}
