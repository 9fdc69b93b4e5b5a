package suggest_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/testserver"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/pdp/suggest"
	"github.com/toolperm/pdp/policies"
)

// trail is a server whose trail is built through its API: a dispatcher
// decides, a person answers.
type trail struct {
	t      *testing.T
	srv    *testserver.Server
	agent  *client.Client
	person *client.Client
}

func newTrail(t *testing.T, sessions ...string) *trail {
	t.Helper()
	srv := testserver.New(t, testserver.Tokens(
		testserver.Token("agent", "agent-secret", httpapi.Dispatcher),
		testserver.Token("alice", "alice-secret", httpapi.User),
	))
	tr := &trail{t: t, srv: srv,
		agent:  client.New(srv.URL, client.WithToken("agent-secret")),
		person: client.New(srv.URL, client.WithToken("alice-secret"))}
	for _, id := range sessions {
		if _, err := tr.agent.Sessions().Create(context.Background(), client.Session{ID: id, Workspace: "/w/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// run decides the command in the session and, when it is asked, has the
// person answer it; it returns the decision.
func (tr *trail) run(session, command, answer string) api.Decision {
	tr.t.Helper()
	ctx := context.Background()
	d, err := tr.agent.Decide(ctx, client.DecideRequest{SessionID: session, Tool: "shell", Args: map[string]any{"command": command}, Cwd: "/w/" + session}, false)
	if err != nil {
		tr.t.Fatal(err)
	}
	if d.Decision == api.Ask && answer != "" {
		if _, err := tr.person.Answer(ctx, d.DecisionID, answer, "console"); err != nil {
			tr.t.Fatalf("answering %q: %v", command, err)
		}
	}
	return d
}

func (tr *trail) suggest(o suggest.Options) api.Suggestions {
	tr.t.Helper()
	out, err := suggest.Suggest(context.Background(), tr.srv.Policy, tr.srv.Store, o)
	if err != nil {
		tr.t.Fatal(err)
	}
	return out
}

func find(out api.Suggestions, pattern string) *api.Suggestion {
	for i := range out.Suggestions {
		if out.Suggestions[i].Pattern == pattern {
			return &out.Suggestions[i]
		}
	}
	return nil
}

func TestSuggestsWhatPeopleAllowed(t *testing.T) {
	tr := newTrail(t, "s1", "s2", "s3")
	for _, s := range []string{"s1", "s2", "s3"} {
		for range 2 {
			if d := tr.run(s, "go test ./...", api.AllowOnce); d.Decision != api.Ask || d.Fingerprint == nil {
				t.Fatalf("go test ./... was not a grantable ask: %+v", d)
			}
			tr.run(s, "make docs --quiet", api.AllowOnce)
		}
	}
	tr.run("s1", "make docs --quiet -3", api.DenyAnswer)
	// Five allows in one session: not enough sessions.
	for range 5 {
		tr.run("s1", "cargo build --release", api.AllowOnce)
	}
	// Never: no fingerprint, however often allowed.
	for range 10 {
		for _, s := range []string{"s1", "s2"} {
			for _, cmd := range []string{"bash -c 'make all'", "python3 -c 'print(1)'", "sudo make install", "rm -rf build"} {
				tr.run(s, cmd, api.AllowOnce)
			}
		}
	}
	// A pending ask no one answered still becomes an allow: it is one of
	// the rule's asks.
	tr.run("s2", "go test ./...", "")

	out := tr.suggest(suggest.Options{})
	if b, err := json.MarshalIndent(out, "", " "); err == nil {
		t.Logf("%s", b)
	}
	got := find(out, "go test ./...")
	if got == nil {
		t.Fatalf("go test ./... allowed 6 times in 3 sessions is not suggested: %+v", out)
	}
	want := api.SuggestionEvidence{Allows: 6, Sessions: 3, People: 1}
	if got.Evidence.Allows != want.Allows || got.Evidence.Sessions != want.Sessions || got.Evidence.People != want.People ||
		got.Evidence.Denies != 0 || len(got.Evidence.Examples) != 5 {
		t.Errorf("evidence = %+v, want %+v with 5 examples", got.Evidence, want)
	}
	if got.Kind != "command_rule" || got.Action != "allow" || got.Scope != "policy" || got.Fingerprint != "go test" {
		t.Errorf("suggestion = %+v", got)
	}
	if got.Impact.AsksToAllow != 7 || got.Impact.OtherChanges != 0 {
		t.Errorf("impact = %+v, want 7 asks to allow (6 answered, 1 pending) and nothing else", got.Impact)
	}
	if got.PolicyData["commands"]["go test ./..."] != "allow" {
		t.Errorf("policy data = %v", got.PolicyData)
	}
	if len(out.Suggestions) != 1 {
		t.Errorf("only go test ./... should be suggested, got %+v", out.Suggestions)
	}
	dropped := map[string]api.DroppedSuggestion{}
	for _, d := range out.Dropped {
		dropped[d.Pattern] = d
	}
	if d, ok := dropped["make docs --quiet"]; !ok || len(d.Examples) != 1 {
		t.Errorf("make docs --quiet, denied once, is not dropped for it: %+v", out.Dropped)
	}
	for _, d := range out.Dropped {
		for _, never := range []string{"bash", "python3", "sudo", "rm"} {
			if d.Pattern == never || len(d.Pattern) > len(never) && d.Pattern[:len(never)+1] == never+" " {
				t.Errorf("%q is a candidate at all: %+v", d.Pattern, d)
			}
		}
	}

	// Stricter thresholds: nothing.
	if out := tr.suggest(suggest.Options{MinAnswers: 7}); len(out.Suggestions) != 0 {
		t.Errorf("--min-answers 7 still suggests %+v", out.Suggestions)
	}
	// Each session is a project of its own (its own workspace): one
	// session's project holds one session, not enough.
	project, err := suggest.ProjectSessions(context.Background(), tr.srv.Store, "s1")
	if err != nil || len(project) != 1 || !project["s1"] {
		t.Fatalf("the project of s1 = %v, %v", project, err)
	}
	if out := tr.suggest(suggest.Options{Sessions: project}); len(out.Suggestions) != 0 {
		t.Errorf("one session's project suggests %+v", out.Suggestions)
	}

	// The impact is what pdp replay reports for a candidate policy with
	// the rule in its data.commands.
	candidate := candidatePolicy(t, got.PolicyData["commands"])
	report, err := pdp.Impact(context.Background(), candidate, tr.srv.Store, pdp.ReplayFilter{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if report.Changed != got.Impact.AsksToAllow || report.Loosened != got.Impact.AsksToAllow || len(report.Changes) != 1 ||
		report.Changes[0].From != api.Ask || report.Changes[0].To != api.Allow {
		t.Errorf("replay of the candidate = %+v, the suggestion's impact %+v", report, got.Impact)
	}
	if len(report.Changes) == 1 && !sameIDs(report.Changes[0].Examples, got.Impact.Examples) {
		t.Errorf("replay examples %v, suggestion's %v", report.Changes[0].Examples, got.Impact.Examples)
	}
}

// candidatePolicy is the built-in policy with these rules in data.commands.
func candidatePolicy(t *testing.T, commands map[string]string) *pdp.Policy {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(policies.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(policies.FS, path)
		files[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(files["data.json"].Data, &data); err != nil {
		t.Fatal(err)
	}
	data["commands"] = commands
	b, _ := json.Marshal(data)
	files["data.json"] = &fstest.MapFile{Data: b}
	p, err := policysource.LoadFS(context.Background(), files, "candidate")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, id := range a {
		seen[id] = true
	}
	for _, id := range b {
		if !seen[id] {
			return false
		}
	}
	return true
}

// TestPeopleAreCountedBySubject: a person signed in with the provider
// counts once by subject, whatever name their answers carry; answers by
// tokens count by token.
func TestPeopleAreCountedBySubject(t *testing.T) {
	tr := newTrail(t, "s1", "s2", "s3")
	by := []api.Answerer{
		{Name: "alice@example.com", Subject: "sub-alice"},
		{Name: "alice@example.org", Subject: "sub-alice"}, // her address changed
		{Name: "bob@example.com", Subject: "sub-bob"},
		{Name: "desktop"}, {Name: "desktop"}, // a token
		{Name: "alice@example.com", Subject: "sub-alice"},
	}
	i := 0
	for _, s := range []string{"s1", "s2", "s3"} {
		for range 2 {
			d := tr.run(s, "go test ./...", "")
			if _, err := tr.srv.Store.AnswerDecision(t.Context(), d.DecisionID, api.AllowOnce, "console", by[i]); err != nil {
				t.Fatal(err)
			}
			i++
		}
	}
	got := find(tr.suggest(suggest.Options{}), "go test ./...")
	if got == nil || got.Evidence.People != 3 {
		t.Fatalf("people = %+v, want 3 (alice, bob, the desktop token)", got)
	}
}
