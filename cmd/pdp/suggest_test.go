package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/internal/testserver"
)

// pdp suggest reads the trail a server recorded and suggests what people
// allowed; pdp replay of a candidate with the suggested policy data
// reports the same impact.
func TestSuggestCommand(t *testing.T) {
	srv := testserver.New(t)
	c := client.New(srv.URL)
	ctx := context.Background()
	for _, s := range []string{"p1", "p2", "p3"} {
		if _, err := c.Sessions().Create(ctx, client.Session{ID: s, Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			d, err := c.Decide(ctx, client.DecideRequest{SessionID: s, Tool: "shell", Args: map[string]any{"command": "npm run lint"}, Cwd: "/w"}, false)
			if err != nil || d.Decision != api.Ask {
				t.Fatalf("%+v %v", d, err)
			}
			if _, err := c.Answer(ctx, d.DecisionID, api.AllowOnce, "console"); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(args ...string) (string, error) {
		cmd := rootCommand()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String() + errOut.String(), err
	}
	raw, err := run("suggest", "--db", srv.DBPath, "--format", "json", "--since", "1d")
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var out api.Suggestions
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(out.Suggestions) != 1 || out.Suggestions[0].Pattern != "npm run lint" || out.Suggestions[0].Impact.AsksToAllow != 6 {
		t.Fatalf("suggestions = %s", raw)
	}
	dir := policytest.Dir(t, func(data map[string]any) { data["commands"] = map[string]any{"npm run lint": "allow"} })
	report, err := replay(t, srv.DBPath, dir)
	if err != nil || report.Changed != 6 || report.Loosened != 6 {
		t.Fatalf("replay of the suggestion as policy data: %+v, %v", report, err)
	}

	if text, err := run("suggest", "--db", srv.DBPath, "--min-answers", "7"); err != nil || !strings.HasPrefix(text, "0 suggestions") {
		t.Errorf("--min-answers 7: %q, %v", text, err)
	}
	if text, err := run("suggest", "--db", srv.DBPath); err != nil || !strings.Contains(text, `"npm run lint": "allow"`) {
		t.Errorf("text output: %q, %v", text, err)
	}
	if text, err := run("suggest", "--db", srv.DBPath, "--session", "p2", "--format", "json"); err != nil || !strings.Contains(text, `"scope": "project"`) {
		t.Errorf("--session p2 (all three share its project): %q, %v", text, err)
	}
	if text, err := run("suggest", "--db", srv.DBPath, "--session", "nosuch"); err == nil {
		t.Errorf("--session of an unknown session: %q", text)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if text, err := run("suggest", "--db", srv.DBPath, "--since", future); err != nil || !strings.HasPrefix(text, "0 suggestions") {
		t.Errorf("--since in the future: %q, %v", text, err)
	}
	for _, bad := range [][]string{{"--since", "-3d"}, {"--since", "yesterday"}, {"--min-answers", "0"}, {"--format", "yaml"}} {
		if text, err := run(append([]string{"suggest", "--db", srv.DBPath}, bad...)...); err == nil {
			t.Errorf("%v accepted: %s", bad, text)
		}
	}
}

// replay and suggest read a trail that exists: a mistyped --db is an
// error and leaves no new empty database behind.
func TestReplayAndSuggestRefuseAMissingDatabase(t *testing.T) {
	for name, args := range map[string][]string{"replay": {"replay", "--policies", "../../policies"}, "suggest": {"suggest"}} {
		db := filepath.Join(t.TempDir(), "typo.db")
		cmd := rootCommand()
		cmd.SetArgs(append(args, "--db", db))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "no database at") {
			t.Errorf("%s on a missing database: %v", name, err)
		}
		if _, statErr := os.Stat(db); statErr == nil {
			t.Errorf("%s created %s", name, db)
		}
	}
}
