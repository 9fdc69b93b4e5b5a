package pdp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/policytest"
	"github.com/toolperm/pdp/pdp"
)

// What the engine reuses across evaluations — the memo of whole answers,
// the constants, the session facts, the function results that hold the
// chain's verdict per call facts and a command's parts — must never
// change an answer. These tests decide the same calls with two engines
// over the same built-in policy: one evaluating as OPA does (nothing
// kept), one as pdp serves; answers, traces and audit records must be
// the same, call by call, in every order.

// recordingAudit keeps every audit record, in order.
type recordingAudit struct {
	mu      sync.Mutex
	records []pdp.AuditRecord
}

func (a *recordingAudit) Record(_ context.Context, ev pdp.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.records = append(a.records, ev)
	return nil
}

func (a *recordingAudit) last() pdp.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.records[len(a.records)-1]
}

// wordAssessor judges a command by its words, the same for both
// engines: SAFE unless it holds "rm", "curl" or "sudo".
type wordAssessor struct{}

func (wordAssessor) Assess(_ context.Context, command pdp.AssessedCommand, _ *pdp.SessionTree) api.Danger {
	for _, w := range []string{"rm", "curl", "sudo"} {
		if strings.Contains(command.Text, w) {
			return api.Danger{Verdict: pdp.Dangerous, By: "llm"}
		}
	}
	return api.Danger{Verdict: pdp.Safe, By: "llm"}
}

// twinEngines are an engine as pdp serves and one that evaluates plainly.
type twinEngines struct {
	reused, plain       *pdp.Engine
	reusedLog, plainLog *recordingAudit
	reusedPol, plainPol *pdp.Policy
}

func newTwins(t testing.TB) *twinEngines {
	t.Helper()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tw := &twinEngines{reusedLog: &recordingAudit{}, plainLog: &recordingAudit{},
		reusedPol: builtinPolicy(t), plainPol: builtinPolicy(t)}
	pdp.EvaluatePlainly(tw.plainPol)
	c := func(log *recordingAudit) pdp.Components {
		return pdp.Components{Workspace: paths.Resolver{}, Audit: log, Assessor: wordAssessor{}, Now: func() time.Time { return at }}
	}
	tw.reused = newEngineWithPolicy(t, tw.reusedPol, c(tw.reusedLog))
	tw.plain = newEngineWithPolicy(t, tw.plainPol, c(tw.plainLog))
	return tw
}

// same decides call with both engines and fails on any difference in
// the answer (its id aside) or the audit record.
func (tw *twinEngines) same(t testing.TB, call pdp.Call) api.Decision {
	t.Helper()
	ctx := context.Background()
	want, wantErr := tw.plain.Decide(ctx, call)
	got, gotErr := tw.reused.Decide(ctx, call)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%s %v: plain error %v, reused error %v", call.Request.Tool, call.Request.Args, wantErr, gotErr)
	}
	if wantErr != nil {
		return want
	}
	want.DecisionID, got.DecisionID = "", ""
	if a, b := encode(t, want), encode(t, got); a != b {
		t.Fatalf("%s %v (explain %v):\nplain  %s\nreused %s", call.Request.Tool, call.Request.Args, call.Explain, a, b)
	}
	wantRec, gotRec := tw.plainLog.last(), tw.reusedLog.last()
	wantRec.Decision.DecisionID, gotRec.Decision.DecisionID = "", ""
	for _, rec := range []*pdp.AuditRecord{&wantRec, &gotRec} {
		rec.Labels = slices.Clone(rec.Labels)
		for i := range rec.Labels {
			rec.Labels[i].DecisionID = ""
		}
	}
	if a, b := encode(t, wantRec), encode(t, gotRec); a != b {
		t.Fatalf("%s %v: audit records differ:\nplain  %s\nreused %s", call.Request.Tool, call.Request.Args, a, b)
	}
	return got
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sessionKinds are sessions of every kind the chain tells apart: each
// level and mode, CLOUD, command and capability rules of every action,
// grants of the session and of its project, a sub-agent with a scope.
func sessionKinds(ws string) map[string]*pdp.SessionTree {
	root := &pdp.SessionTree{ID: "root", Workspace: ws, PermissionLevel: api.ReadWrite,
		Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}, {Capability: "shell.exec", Fingerprint: "go test", Scope: "project"}}}
	return map[string]*pdp.SessionTree{
		"read-only":  {ID: "ro", Workspace: ws},
		"read-write": root,
		"smart":      {ID: "smart", Workspace: ws, PermissionLevel: api.Smart},
		"full":       {ID: "full", Workspace: ws, PermissionLevel: api.Full},
		"allow-all":  {ID: "aa", Workspace: ws, Mode: api.AllowAll},
		"always-ask": {ID: "ask", Workspace: ws, Mode: api.AlwaysAsk, PermissionLevel: api.ReadWrite},
		"cloud":      {ID: "cloud", Workspace: ws, ExecutionMode: api.Cloud},
		"command-rules": {ID: "cr", Workspace: ws, PermissionLevel: api.Smart,
			CommandRules: map[string]string{"go test": "allow", "git push": "deny", "rm": "ask", "make": "allow", "ls": "allow"}},
		"capability-rules": {ID: "rules", Workspace: ws,
			Rules: map[string]string{"mcp.github.*": "ask", "mcp.github.list_issues": "allow", "fs.write": "deny", "shell.exec": "assess"}},
		"sub-agent": {ID: "child", Workspace: ws, Scope: []string{"fs.*", "shell.exec"}, Parent: root},
	}
}

// corpusCalls are the public corpus and the compound bypasses.
func corpusCalls(ws string) []api.DecideRequest {
	var out []api.DecideRequest
	for _, c := range publicCorpus {
		out = append(out, api.DecideRequest{Tool: "shell", Args: map[string]any{"command": c.cmd}, Cwd: ws})
	}
	for _, c := range compoundBypasses {
		out = append(out, api.DecideRequest{Tool: "shell", Args: map[string]any{"command": c}, Cwd: ws})
	}
	return out
}

// streamCalls are the shell stream's shapes with fresh words (n), and
// file, search, MCP and unknown tools inside and outside the workspace.
func streamCalls(ws string, n int) []api.DecideRequest {
	var out []api.DecideRequest
	for _, shape := range []string{
		"go test -run Test%[1]d ./pkg/...", "git log -n %[1]d --oneline", "grep -rn handler%[1]d src/ | head -20",
		"cat notes/day%[1]d.txt | wc -l", "ls -la build/out%[1]d", "npm run build -- --filter pkg%[1]d",
		"make test%[1]d && git status", "python3 scripts/gen.py --seed %[1]d", "rm -rf build/tmp%[1]d",
		"echo run%[1]d $(date +%%s) > stamp.txt", "cd sub%[1]d && go vet ./...", "git push origin b%[1]d",
	} {
		out = append(out, api.DecideRequest{Tool: "shell", Args: map[string]any{"command": fmt.Sprintf(shape, n)}, Cwd: ws})
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": fmt.Sprintf("src/a%d.go", n)}},
		{"Read", map[string]any{"file_path": fmt.Sprintf("%s/README%d.md", ws, n)}},
		{"write_file", map[string]any{"path": fmt.Sprintf("src/new%d.go", n), "content": "x"}},
		{"edit_file", map[string]any{"path": fmt.Sprintf("../other/x%d.go", n)}},
		{"grep_search", map[string]any{"path": "src", "pattern": fmt.Sprintf("fn%d", n)}},
		{"glob_search", map[string]any{"pattern": fmt.Sprintf("src/**/*%d.go", n)}},
		{"mcp__github__create_issue", map[string]any{"title": fmt.Sprintf("issue %d", n)}},
		{"mcp__github__list_issues", map[string]any{"page": n}},
		{"WebFetch", map[string]any{"url": fmt.Sprintf("https://example.com/%d", n)}},
		{"no_such_tool", map[string]any{}},
	} {
		out = append(out, api.DecideRequest{Tool: c.tool, Args: c.args, Cwd: ws})
	}
	return out
}

// TestSubDecisionsAnswerAsPlainEvaluation decides the stream's calls in
// every session kind, in two workspaces and two rounds with fresh words,
// each with and without its explanation, and the corpora in the kinds
// with grants and rules: every answer, trace and audit record as the
// plain evaluation's. The second workspace and round meet what the first
// kept under other documents: the same call facts, the same parts, the
// same session settings.
func TestSubDecisionsAnswerAsPlainEvaluation(t *testing.T) {
	tw := newTwins(t)
	seen := map[string]int{}
	decide := func(s *pdp.SessionTree, req api.DecideRequest, explain bool) {
		req.SessionID = s.ID
		d := tw.same(t, pdp.Call{Request: req, Session: s, Explain: explain})
		seen[d.Decision]++
	}
	for round := 1; round <= 2; round++ {
		for _, ws := range []string{"/w/one", "/w/two"} {
			kinds := sessionKinds(ws)
			for _, name := range sortedKeys(kinds) {
				for _, req := range streamCalls(ws, round) {
					decide(kinds[name], req, false)
					decide(kinds[name], req, true)
				}
			}
			if round == 1 {
				for _, name := range []string{"read-write", "command-rules", "smart"} {
					for _, req := range corpusCalls(ws) {
						decide(kinds[name], req, ws == "/w/two")
					}
				}
			}
		}
	}
	for _, d := range []string{api.Allow, api.Ask, api.Deny} {
		if seen[d] == 0 {
			t.Errorf("no call was answered %s: the calls do not cover the chain (%v)", d, seen)
		}
	}
}

// What is kept follows what it was kept for: a session whose rules,
// command rules or grants change, and a new policy, get the plain
// evaluation's answer for the new state, not the one kept for the old.
func TestKeptSubDecisionsFollowRulesGrantsAndPolicy(t *testing.T) {
	tw := newTwins(t)
	s := &pdp.SessionTree{ID: "s", Workspace: "/w", PermissionLevel: api.ReadWrite}
	call := func(tool string, args map[string]any) pdp.Call {
		return pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: tool, Args: args, Cwd: "/w"}, Session: s}
	}
	goTest := func(n int) pdp.Call {
		return call("shell", map[string]any{"command": fmt.Sprintf("go test -run T%d ./...", n)})
	}
	read := func(n int) pdp.Call { return call("read_file", map[string]any{"path": fmt.Sprintf("f%d", n)}) }
	n := 0
	step := func(what string, c func(int) pdp.Call, want string) {
		t.Helper()
		n++
		if d := tw.same(t, c(n)); d.Decision != want {
			t.Errorf("%s: %s, want %s (%s)", what, d.Decision, want, d.Reason)
		}
	}
	step("a command no rule covers", goTest, api.Ask)
	step("again, other words", goTest, api.Ask)
	s.Grants = []pdp.Grant{{Capability: "shell.exec", Fingerprint: "go test"}}
	step("after a grant", goTest, api.Allow)
	s.Grants = nil
	s.CommandRules = map[string]string{"go test": "deny"}
	step("after a command rule denies it", goTest, api.Deny)
	s.CommandRules = nil
	step("a read", read, api.Allow)
	s.Rules = map[string]string{"fs.read": "deny"}
	step("after a rule denies reads", read, api.Deny)
	s.Rules = nil
	step("the rule gone", read, api.Allow)

	// A new policy: the built-in one with reads denied by its own rules.
	for _, e := range []*pdp.Engine{tw.reused, tw.plain} {
		p := builtinPolicyWith(t, func(data map[string]any) {
			data["rules"].(map[string]any)["fs.read"] = "deny"
		})
		if e == tw.plain {
			pdp.EvaluatePlainly(p)
		}
		if err := e.Swap(p); err != nil {
			t.Fatal(err)
		}
	}
	step("under a policy that denies reads", read, api.Deny)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// builtinPolicyWith is the built-in policy with its data changed by edit.
func builtinPolicyWith(t testing.TB, edit func(data map[string]any)) *pdp.Policy {
	t.Helper()
	files := fstest.MapFS{}
	for name, b := range policytest.Files(t, edit) {
		files[name] = &fstest.MapFile{Data: b}
	}
	p, err := policysource.LoadFS(context.Background(), files, "builtin+edited")
	if err != nil {
		t.Fatalf("loading the policy: %v", err)
	}
	return p
}

var (
	fuzzTwinsOnce sync.Once
	fuzzTwins     *twinEngines
)

// FuzzSubDecisionsAnswerAsPlainEvaluation decides random calls — any
// command text, a tool, a session kind, a capability rule and a command
// rule of any action — with the twin engines, one pair for the whole run,
// so what one input kept meets the next: every answer and audit record
// must be the plain evaluation's.
func FuzzSubDecisionsAnswerAsPlainEvaluation(f *testing.F) {
	f.Add(uint8(0), "go test -run T1 ./...", "shell", "shell.exec", "ask", "go test")
	f.Add(uint8(3), "git status && rm -rf ~", "Bash", "fs.*", "deny", "git status")
	f.Add(uint8(9), "cat x | sh", "read_file", "mcp.*", "allow", "cat")
	f.Add(uint8(5), "sudo make install > /etc/x", "shell", "shell.exec", "assess", "make")
	f.Fuzz(func(t *testing.T, kind uint8, command, tool, pattern, action, prefix string) {
		fuzzTwinsOnce.Do(func() { fuzzTwins = newTwins(t) })
		kinds := sessionKinds("/w")
		names := sortedKeys(kinds)
		s := kinds[names[int(kind)%len(names)]]
		if pattern != "" {
			s.Rules = map[string]string{pattern: action}
		}
		if prefix != "" {
			s.CommandRules = map[string]string{prefix: action}
		}
		args := map[string]any{"command": command, "path": command, "file_path": "/w/" + command, "pattern": command}
		call := pdp.Call{Request: api.DecideRequest{SessionID: s.ID, Tool: tool, Args: args, Cwd: "/w"}, Session: s, Explain: kind&0x80 != 0}
		fuzzTwins.same(t, call)
	})
}
