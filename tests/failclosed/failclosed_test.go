// Package failclosed holds the fail-closed matrix: one row per way the
// decision path can break, each with the answer it must give. The same
// table is in docs/security.md.
package failclosed

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/toolperm/pdp/adapters/assessor"
	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
	"github.com/toolperm/pdp/store/sqlite"
)

// setup is one scenario: the engine parts and the store options.
type setup struct {
	policy   func(t *testing.T) *pdp.Policy
	assessor func(t *testing.T) pdp.Assessor
	store    sqlite.Options
	// before breaks things once the service is up.
	before func(t *testing.T, dbPath string) (restore func())
	call   map[string]any
	// cancelAfter cancels the request's context mid-decision.
	cancelAfter time.Duration
}

// want is the answer the row must give: an HTTP status, and for 200 the
// decision and source.
type want struct {
	status           int
	decision, source string
}

func builtin(t *testing.T) *pdp.Policy {
	p, err := policysource.LoadFS(context.Background(), policies.FS, "builtin")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func regoPolicy(src string) func(t *testing.T) *pdp.Policy {
	return func(t *testing.T) *pdp.Policy {
		p, err := policysource.LoadFS(context.Background(), fstest.MapFS{"p.rego": {Data: []byte(src)}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func noPolicy(*testing.T) *pdp.Policy { return nil }

// llm is an OpenAI-compatible endpoint scripted by a handler.
func llm(h http.HandlerFunc) func(t *testing.T) pdp.Assessor {
	return func(t *testing.T) pdp.Assessor {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		a, err := assessor.New(assessor.Config{URL: srv.URL, Model: "m", Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

var (
	// bulkyRead needs new pages in the audit trail (a capped file has none).
	bulkyRead = map[string]any{"session_id": "fc", "tool": "read_file", "args": map[string]any{"path": "a.go", "note": strings.Repeat("x", 64<<10)}, "cwd": "/w"}
	read      = map[string]any{"session_id": "fc", "tool": "read_file", "args": map[string]any{"path": "a.go"}, "cwd": "/w"}
	smartMake = map[string]any{"session_id": "smart", "tool": "shell", "args": map[string]any{"command": "make build"}, "cwd": "/w"}
)

func TestFailClosedMatrix(t *testing.T) {
	rows := []struct {
		name string
		s    setup
		want want
	}{
		{"policy evaluation error (conflicting values)", setup{policy: regoPolicy("package toolperm\n\nanswer := {\"decision\": \"allow\"} if input.tool\nanswer := {\"decision\": \"deny\"} if input.tool\n")},
			want{200, "deny", "default"}},
		{"policy evaluation timeout", setup{policy: regoPolicy("package toolperm\n\nanswer := {\"decision\": \"allow\", \"n\": n} if {\n\tn := count([1 | some i in numbers.range(1, 4000); some j in numbers.range(1, 4000)])\n}\n")},
			want{200, "deny", "default"}},
		{"policy answers an unexpected shape", setup{policy: regoPolicy("package toolperm\n\nanswer := \"allow\"\n")},
			want{200, "deny", "default"}},
		{"policy answers an unknown decision", setup{policy: regoPolicy(`package toolperm

answer := {"decision": "permit", "source": "x", "rule": "x", "reason": "x", "capability": null, "fingerprint": null, "grantable": false, "danger": null, "needs": []}
`)}, want{200, "deny", "default"}},
		{"policy undefined", setup{policy: regoPolicy("package toolperm\n\nanswer := 1 if false\n")},
			want{200, "deny", "default"}},
		{"no active policy", setup{policy: noPolicy}, want{200, "deny", "default"}},
		{"database read-only", setup{policy: builtin, store: sqlite.Options{Pragmas: []string{"query_only = 1"}}}, want{503, "", ""}},
		{"database full", setup{policy: builtin, store: sqlite.Options{Pragmas: []string{"max_page_count = 1"}}, call: bulkyRead}, want{503, "", ""}},
		{"database locked", setup{policy: builtin, store: sqlite.Options{BusyTimeout: 200 * time.Millisecond}, before: lockDatabase}, want{503, "", ""}},
		{"assessor down", setup{policy: builtin, assessor: llm(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }), call: smartMake}, want{200, "ask", "level"}},
		{"assessor slow", setup{policy: builtin, assessor: llm(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		}), call: smartMake}, want{200, "ask", "level"}},
		{"assessor answers garbage", setup{policy: builtin, assessor: llm(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"Sure! SAFE"}}]}`))
		}), call: smartMake},
			want{200, "ask", "level"}},
		{"context cancelled mid-decision", setup{policy: builtin, assessor: llm(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
			_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"SAFE"}}]}`))
		}), call: smartMake, cancelAfter: 50 * time.Millisecond}, want{0, "", ""}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			status, d := run(t, row.s)
			if row.want.status == 0 { // the caller gave up: nothing may have been allowed
				if d["decision"] == "allow" {
					t.Fatalf("a cancelled call was allowed: %v", d)
				}
				return
			}
			if status != row.want.status {
				t.Fatalf("status %d, want %d: %v", status, row.want.status, d)
			}
			if status == 200 && (d["decision"] != row.want.decision || d["source"] != row.want.source) {
				t.Fatalf("got %v/%v (%v), want %s/%s", d["decision"], d["source"], d["reason"], row.want.decision, row.want.source)
			}
			if status != 200 {
				if e, _ := d["error"].(map[string]any); e["code"] == nil {
					t.Fatalf("error body without a code: %v", d)
				}
			}
		})
	}
}

func run(t *testing.T, s setup) (int, map[string]any) {
	t.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "pdp.db")
	if len(s.store.Pragmas) > 0 {
		// The session must exist before the database is broken.
		st, err := sqlite.Open(ctx, dbPath, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"fc", "smart"} {
			if _, err := st.CreateSession(ctx, api.Session{ID: id, PermissionLevel: api.ReadOnly, Mode: api.OnDemand, ExecutionMode: api.Local, Workspace: "/w"}); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
	}
	store, err := sqlite.Open(ctx, dbPath, s.store)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	components := pdp.Components{Audit: store, Shell: shell.Parser{}, Workspace: paths.Resolver{}, EvalTimeout: 100 * time.Millisecond}
	if s.assessor != nil {
		components.Assessor = s.assessor(t)
	}
	handler := httpapi.New(httpapi.Config{Engine: pdp.New(s.policy(t), components), Store: store})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	call := s.call
	if call == nil {
		call = read
	}
	if call["session_id"] == "smart" && len(s.store.Pragmas) == 0 {
		if _, err := store.CreateSession(ctx, api.Session{ID: "smart", PermissionLevel: api.Smart, Mode: api.OnDemand, ExecutionMode: api.Local, Workspace: "/w"}); err != nil {
			t.Fatal(err)
		}
	}
	if s.before != nil {
		defer s.before(t, dbPath)()
	}
	body, _ := json.Marshal(call)
	reqCtx := ctx
	if s.cancelAfter > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeout(ctx, s.cancelAfter)
		defer cancel()
	}
	req, _ := http.NewRequestWithContext(reqCtx, "POST", srv.URL+"/v1/decide", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if s.cancelAfter > 0 {
			// The caller is gone; the server must not have recorded an allow either.
			time.Sleep(300 * time.Millisecond)
			list, _ := store.Decisions(ctx, pdp.DecisionFilter{Limit: 10})
			for _, ev := range list {
				if ev.Decision.Decision == api.Allow {
					return 0, map[string]any{"decision": "allow"}
				}
			}
			return 0, nil
		}
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// lockDatabase holds an exclusive lock from another connection.
func lockDatabase(t *testing.T, dbPath string) func() {
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?_busy_timeout=100&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("CREATE TABLE IF NOT EXISTS lock_holder (x)"); err != nil {
		t.Fatal(fmt.Errorf("taking the write lock: %w", err))
	}
	return func() { _ = tx.Rollback(); db.Close() }
}
