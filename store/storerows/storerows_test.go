package storerows_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/feed"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/storerows"
)

func ptr[T any](v T) *T { return &v }

func TestSession(t *testing.T) {
	cases := []struct {
		name    string
		rec     api.Session
		cols    storerows.SessionColumns
		wantErr string
		check   func(t *testing.T, rec api.Session)
	}{
		{
			name: "unknown values read as the strict defaults",
			rec:  api.Session{ID: "s", PermissionLevel: "ROOT", Mode: "always", ExecutionMode: "elsewhere"},
			cols: storerows.SessionColumns{Rules: `{}`, PathRules: `{}`},
			check: func(t *testing.T, rec api.Session) {
				if rec.PermissionLevel != api.ReadOnly || rec.Mode != api.OnDemand || rec.ExecutionMode != api.Local {
					t.Fatalf("got %q %q %q", rec.PermissionLevel, rec.Mode, rec.ExecutionMode)
				}
			},
		},
		{
			name: "command rules in a column",
			rec:  api.Session{ID: "s"},
			cols: storerows.SessionColumns{Rules: `{"fs.read":"allow"}`, PathRules: `{}`, CommandRules: ptr(`{"rm":"deny"}`), Scope: ptr(`["fs.read"]`)},
			check: func(t *testing.T, rec api.Session) {
				if rec.CommandRules["rm"] != "deny" || rec.Rules["fs.read"] != "allow" || len(rec.Scope) != 1 {
					t.Fatalf("got %+v", rec)
				}
			},
		},
		{name: "unreadable rules", rec: api.Session{ID: "s"}, cols: storerows.SessionColumns{Rules: `[`, PathRules: `{}`}, wantErr: `session "s" has unreadable rules`},
		{name: "unreadable scope", rec: api.Session{ID: "s"}, cols: storerows.SessionColumns{Rules: `{}`, PathRules: `{}`, Scope: ptr(`{`)}, wantErr: `session "s" has an unreadable scope`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := c.rec
			err := storerows.Session(&rec, c.cols)
			if c.wantErr != "" {
				if err == nil || len(err.Error()) < len(c.wantErr) || err.Error()[:len(c.wantErr)] != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, rec)
		})
	}
}

func TestDecision(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var rec api.Event
	rec.Decision.Decision = api.Ask
	storerows.Decision(&rec, storerows.DecisionColumns{Args: `not json`, DangerVerdict: ptr("dangerous"), Answer: ptr(api.AllowOnce), AnsweredAt: at, GrantID: ptr(int64(7))})
	if !rec.NeedApproval || rec.Danger == nil || rec.Danger.By != "" || len(rec.Args) != 0 || rec.Args == nil {
		t.Fatalf("got %+v", rec)
	}
	if rec.Answer == nil || rec.Answer.GrantID != 7 || !rec.Answer.AnsweredAt.Equal(at) || rec.Answer.Channel != "" {
		t.Fatalf("answer %+v", rec.Answer)
	}
}

func TestAttachDecisions(t *testing.T) {
	changes := make([]feed.Change, 3)
	lookup := func(_ context.Context, id string) (api.Event, error) {
		if id == "pruned" {
			return api.Event{}, fmt.Errorf("decision %s: %w", id, pdp.ErrNotFound)
		}
		return api.Event{Decision: api.Decision{DecisionID: id}}, nil
	}
	if err := storerows.AttachDecisions(context.Background(), changes, []string{"", "pruned", "d-1"}, lookup); err != nil {
		t.Fatal(err)
	}
	if changes[0].Decision != nil || changes[1].Decision != nil || changes[2].Decision == nil || changes[2].Decision.DecisionID != "d-1" {
		t.Fatalf("got %+v", changes)
	}
	broken := errors.New("connection lost")
	err := storerows.AttachDecisions(context.Background(), changes, []string{"d-1"}, func(context.Context, string) (api.Event, error) {
		return api.Event{}, broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("error %v", err)
	}
	if storerows.ChangeSession(ptr(`{`)) != nil || storerows.ChangeSession(nil) != nil || storerows.ChangeSession(ptr(`{"id":"s"}`)).ID != "s" {
		t.Fatal("session snapshots")
	}
}

func TestEachInChunks(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	var reads []string
	read := func(from string, first bool) ([]api.Event, error) {
		reads = append(reads, fmt.Sprint(from, first))
		var out []api.Event
		for _, id := range ids {
			if (first && id >= from || id > from) && len(out) < 2 {
				out = append(out, api.Event{Decision: api.Decision{DecisionID: id}})
			}
		}
		return out, nil
	}
	var got []string
	if err := storerows.EachInChunks("a", 2, read, func(ev api.Event) error {
		got = append(got, ev.DecisionID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[a b c d e]" || fmt.Sprint(reads) != "[atrue bfalse dfalse]" {
		t.Fatalf("got %v after reads %v", got, reads)
	}
}
