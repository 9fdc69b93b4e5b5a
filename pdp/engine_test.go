package pdp_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
)

func builtinPolicy(t testing.TB) *pdp.Policy {
	t.Helper()
	p, err := policysource.LoadFS(context.Background(), policies.FS, "builtin")
	if err != nil {
		t.Fatalf("loading the built-in policy: %v", err)
	}
	return p
}

func newEngine(t testing.TB, c pdp.Components) *pdp.Engine {
	t.Helper()
	return newEngineWithPolicy(t, builtinPolicy(t), c)
}

// newEngineWithPolicy is an engine serving p, with the path resolver and
// the shell parser when c names none.
func newEngineWithPolicy(t testing.TB, p *pdp.Policy, c pdp.Components) *pdp.Engine {
	t.Helper()
	if c.Workspace == nil {
		c.Workspace = paths.Resolver{}
	}
	if c.Shell == nil {
		c.Shell = shell.Parser{}
	}
	return pdp.New(p, c)
}

func decide(t testing.TB, e *pdp.Engine, call pdp.Call) api.Decision {
	t.Helper()
	d, err := e.Decide(context.Background(), call)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

func shellCall(cmd string, s *pdp.SessionTree) pdp.Call {
	return pdp.Call{Request: api.DecideRequest{SessionID: "s1", Tool: "shell", Args: map[string]any{"command": cmd}}, Session: s}
}

func str(s string) *string { return &s }

// fixedAssessor answers one verdict and counts its calls.
type fixedAssessor struct {
	verdict string
	calls   atomic.Int32
}

func (a *fixedAssessor) Assess(_ context.Context, _ pdp.AssessedCommand, _ *pdp.SessionTree) api.Danger {
	a.calls.Add(1)
	return api.Danger{Verdict: a.verdict, By: "llm"}
}

func TestDecideExamplesOfTheDesign(t *testing.T) {
	grantGitStatus := []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}
	cases := []struct {
		name     string
		req      api.DecideRequest
		session  *pdp.SessionTree
		decision string
		source   string
		rule     string
		fp       *string
	}{
		{"read-write write inside the workspace", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.SessionTree{PermissionLevel: api.ReadWrite, Workspace: "/w"}, "allow", "level", "fs.write", nil},
		{"read-only write asks", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.SessionTree{Workspace: "/w"}, "ask", "level", "fs.write", nil},
		{"read-only read", api.DecideRequest{Tool: "read_file", Args: map[string]any{"path": "a.txt"}, Cwd: "/w/sub"}, &pdp.SessionTree{Workspace: "/w"}, "allow", "level", "fs.read", nil},
		{"dotdot leaves the workspace", api.DecideRequest{Tool: "read_file", Args: map[string]any{"path": "../../etc/passwd"}, Cwd: "/w/sub"}, &pdp.SessionTree{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"absolute path outside", api.DecideRequest{Tool: "Read", Args: map[string]any{"file_path": "/etc/passwd"}}, &pdp.SessionTree{Workspace: "/w", PermissionLevel: api.Full}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"/wx is not inside /w", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "/wx/a"}}, &pdp.SessionTree{Workspace: "/w", Mode: api.AllowAll}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"one of paths[] outside", api.DecideRequest{Tool: "fs.read", Args: map[string]any{"paths": []any{"/w/a", "/tmp/b"}}}, &pdp.SessionTree{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"CLOUD ignores the level", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "make -j4"}}, &pdp.SessionTree{Workspace: "/w", ExecutionMode: api.Cloud}, "allow", "mode", "MODE", nil},
		{"CLOUD still checks the workspace", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "/etc/x"}}, &pdp.SessionTree{Workspace: "/w", ExecutionMode: api.Cloud}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"FULL allows dangerous capabilities", api.DecideRequest{Tool: "mcp__github__create_issue"}, &pdp.SessionTree{PermissionLevel: api.Full}, "allow", "mode", "MODE", nil},
		{"allow-all keeps an explicit deny", api.DecideRequest{Tool: "WebFetch", Args: map[string]any{"url": "https://x"}}, &pdp.SessionTree{Mode: api.AllowAll, Rules: map[string]string{"net.*": "deny"}}, "deny", "config", "net.*", nil},
		{"mcp without a rule is denied", api.DecideRequest{Tool: "mcp__github__create_issue"}, &pdp.SessionTree{}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"mcp.github.* asks", api.DecideRequest{Tool: "mcp__github__create_issue"}, &pdp.SessionTree{Rules: map[string]string{"mcp.github.*": "ask"}}, "ask", "config", "mcp.github.*", nil},
		{"mcp.github.* misses mcp.githubx", api.DecideRequest{Capability: "mcp.githubx.y"}, &pdp.SessionTree{Rules: map[string]string{"mcp.github.*": "ask"}}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"mcp.git.* misses mcp.github", api.DecideRequest{Capability: "mcp.github.x"}, &pdp.SessionTree{Rules: map[string]string{"mcp.git.*": "allow"}}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"user rule cannot loosen the level", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.SessionTree{Workspace: "/w", Rules: map[string]string{"fs.*": "allow"}}, "ask", "level", "fs.write", nil},
		{"shell asks at read-only, grantable", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git status"}}, &pdp.SessionTree{}, "ask", "level", "shell.exec", str("git status")},
		{"grant allows the fingerprint", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git status -s"}}, &pdp.SessionTree{Grants: grantGitStatus}, "allow", "session-grant", "SESSION_GRANT", str("git status")},
		{"grant does not cover a list", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git status; rm -rf build"}}, &pdp.SessionTree{Grants: grantGitStatus}, "ask", "level", "shell.exec", nil},
		// ~ may name any path, so the shipped path rules ask before rm writes it.
		{"a list with a word that may name any path", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git status; cat ~/notes"}}, &pdp.SessionTree{Grants: grantGitStatus, PermissionLevel: api.Full}, "ask", "config", ".env.*", nil},
		{"the deny floor holds at FULL", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "git status; rm -rf ~"}}, &pdp.SessionTree{Grants: grantGitStatus, PermissionLevel: api.Full}, "deny", "config", "rm -rf /", nil},
		{"command wins over argv", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "rm -rf build", "argv": []any{"git", "status"}}}, &pdp.SessionTree{Grants: grantGitStatus}, "ask", "level", "shell.exec", nil},
		{"argv when there is no command", api.DecideRequest{Tool: "shell", Args: map[string]any{"argv": []any{"git", "status"}}}, &pdp.SessionTree{Grants: grantGitStatus}, "allow", "session-grant", "SESSION_GRANT", str("git status")},
		{"write_stdin is shell.stdin", api.DecideRequest{Tool: "shell", Args: map[string]any{"action": "write_stdin", "input": "y\n"}}, &pdp.SessionTree{}, "allow", "level", "shell.stdin", nil},
		{"unknown tool", api.DecideRequest{Tool: "frobnicate"}, &pdp.SessionTree{Mode: api.AllowAll}, "deny", "default", "UNKNOWN_TOOL", nil},
		{"always-ask fallback asks", api.DecideRequest{Capability: "widget.spin"}, &pdp.SessionTree{Mode: api.AlwaysAsk}, "ask", "default", "FALLBACK", nil},
		{"on-demand fallback denies", api.DecideRequest{Capability: "widget.spin"}, &pdp.SessionTree{}, "deny", "default", "FALLBACK", nil},
		{"no session at all confines nothing", api.DecideRequest{Tool: "write_file", Args: map[string]any{"path": "a"}, Cwd: "/w"}, nil, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"cwd outside the workspace", api.DecideRequest{Tool: "shell", Args: map[string]any{"command": "make -j4"}, Cwd: "/"}, &pdp.SessionTree{Workspace: "/w", PermissionLevel: api.Full}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"glob reaching out", api.DecideRequest{Tool: "Glob", Args: map[string]any{"pattern": "/etc/*"}}, &pdp.SessionTree{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"glob inside", api.DecideRequest{Tool: "Glob", Args: map[string]any{"pattern": "**/*.go"}, Cwd: "/w"}, &pdp.SessionTree{Workspace: "/w"}, "allow", "level", "fs.glob", nil},
		{"grep pattern is not a path", api.DecideRequest{Tool: "Grep", Args: map[string]any{"pattern": "/etc/passwd", "path": "src"}, Cwd: "/w"}, &pdp.SessionTree{Workspace: "/w"}, "allow", "level", "fs.grep", nil},
		{"dotted mcp name is unknown", api.DecideRequest{Tool: "mcp__a.b__c"}, &pdp.SessionTree{Mode: api.AlwaysAsk}, "deny", "default", "UNKNOWN_TOOL", nil},
	}
	e := newEngine(t, pdp.Components{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SessionID = "s1"
			d := decide(t, e, pdp.Call{Request: tc.req, Session: tc.session})
			if d.Decision != tc.decision || d.Source != tc.source || d.Rule != tc.rule {
				t.Fatalf("got %s/%s/%s (%s), want %s/%s/%s", d.Decision, d.Source, d.Rule, d.Reason, tc.decision, tc.source, tc.rule)
			}
			if d.NeedApproval != (d.Decision == api.Ask) {
				t.Errorf("need_approval %v with decision %s", d.NeedApproval, d.Decision)
			}
			if (tc.fp == nil) != (d.Fingerprint == nil) || (tc.fp != nil && *tc.fp != *d.Fingerprint) {
				t.Errorf("fingerprint %v, want %v", deref(d.Fingerprint), deref(tc.fp))
			}
			if d.Grantable != (d.Fingerprint != nil) {
				t.Errorf("grantable %v with fingerprint %v", d.Grantable, deref(d.Fingerprint))
			}
			if d.DecisionID == "" || d.Revision == "" || d.Reason == "" {
				t.Errorf("missing decision_id, revision or reason: %+v", d)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func TestSmartAsksTheAssessorOnlyWhenNeeded(t *testing.T) {
	safe := &fixedAssessor{verdict: pdp.Safe}
	e := newEngine(t, pdp.Components{Assessor: safe})
	smart := &pdp.SessionTree{PermissionLevel: api.Smart, Workspace: "/w"}

	d := decide(t, e, shellCall("go test ./...", smart))
	if d.Decision != api.Allow || d.Source != "assessor" || d.Danger == nil || d.Danger.Verdict != pdp.Safe {
		t.Fatalf("SAFE verdict: got %+v", d)
	}
	if safe.calls.Load() != 1 {
		t.Fatalf("assessor called %d times, want 1", safe.calls.Load())
	}

	// No LLM call for a deny, a grant, FULL, CLOUD or a non-shell call.
	for name, call := range map[string]pdp.Call{
		"grant": shellCall("git status", &pdp.SessionTree{PermissionLevel: api.Smart, Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}}),
		"deny":  shellCall("make", &pdp.SessionTree{PermissionLevel: api.Smart, Rules: map[string]string{"shell.*": "deny"}}),
		"full":  shellCall("make", &pdp.SessionTree{PermissionLevel: api.Full}),
		"cloud": shellCall("make", &pdp.SessionTree{PermissionLevel: api.Smart, ExecutionMode: api.Cloud}),
		"write": {Request: api.DecideRequest{SessionID: "s", Tool: "write_file", Args: map[string]any{"path": "/w/x"}}, Session: smart},
	} {
		before := safe.calls.Load()
		decide(t, e, call)
		if safe.calls.Load() != before {
			t.Errorf("%s: the assessor was called", name)
		}
	}

	dangerous := &fixedAssessor{verdict: pdp.Dangerous}
	d = decide(t, newEngine(t, pdp.Components{Assessor: dangerous}), shellCall("make", smart))
	if d.Decision != api.Ask || d.Source != "level" || d.Danger.Verdict != pdp.Dangerous {
		t.Fatalf("DANGEROUS verdict: got %+v", d)
	}
}

func TestNoAssessorMeansUnavailable(t *testing.T) {
	d := decide(t, newEngine(t, pdp.Components{}), shellCall("make", &pdp.SessionTree{PermissionLevel: api.Smart}))
	if d.Decision != api.Ask || d.Danger == nil || *d.Danger != (api.Danger{Verdict: pdp.Dangerous, By: "unavailable"}) {
		t.Fatalf("got %+v danger %+v", d, d.Danger)
	}
}

func TestSubAgentsAreCappedByTheirParent(t *testing.T) {
	assessor := &fixedAssessor{verdict: pdp.Safe}
	e := newEngine(t, pdp.Components{Assessor: assessor})
	parent := &pdp.SessionTree{Workspace: "/w"} // READ_ONLY: writes ask
	cases := []struct {
		name             string
		call             pdp.Call
		decision, source string
		rule             string
	}{
		{"outside the child's scope", shellCall("ls", &pdp.SessionTree{PermissionLevel: api.Full, Scope: []string{"fs.*"}, Parent: parent}), "deny", "default", "PARENT_SCOPE"},
		{"parent denies", pdp.Call{Request: api.DecideRequest{SessionID: "c", Capability: "mcp.x.y"}, Session: &pdp.SessionTree{Mode: api.AllowAll, Parent: parent}}, "deny", "default", "PARENT_SCOPE"},
		{"parent asks, child allows", pdp.Call{Request: api.DecideRequest{SessionID: "c", Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.SessionTree{PermissionLevel: api.Full, Workspace: "/w", Parent: parent}}, "ask", "level", "fs.write"},
		{"both allow", pdp.Call{Request: api.DecideRequest{SessionID: "c", Tool: "read_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.SessionTree{Workspace: "/w", Scope: []string{"fs.read"}, Parent: parent}}, "allow", "level", "fs.read"},
		{"outside the parent's workspace", pdp.Call{Request: api.DecideRequest{SessionID: "c", Tool: "read_file", Args: map[string]any{"path": "/w2/a"}}, Session: &pdp.SessionTree{Workspace: "/w2", Parent: parent}}, "deny", "default", "PARENT_SCOPE"},
		{"grant of the root applies", shellCall("git status", &pdp.SessionTree{Parent: &pdp.SessionTree{Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}}}), "allow", "session-grant", "SESSION_GRANT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, e, tc.call)
			if d.Decision != tc.decision || d.Source != tc.source || d.Rule != tc.rule {
				t.Fatalf("got %s/%s/%s (%s), want %s/%s/%s", d.Decision, d.Source, d.Rule, d.Reason, tc.decision, tc.source, tc.rule)
			}
		})
	}

	// The parent's chain shares the child's verdict: one LLM call.
	before := assessor.calls.Load()
	d := decide(t, e, shellCall("make", &pdp.SessionTree{PermissionLevel: api.Smart, Parent: &pdp.SessionTree{PermissionLevel: api.Smart}}))
	if d.Decision != api.Allow || assessor.calls.Load()-before != 1 {
		t.Fatalf("got %s with %d assessor calls", d.Decision, assessor.calls.Load()-before)
	}
}

func TestExplainAddsTheTrace(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	call := pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.SessionTree{Workspace: "/w"}}
	if d := decide(t, e, call); d.Trace != nil {
		t.Fatalf("trace without explain: %+v", d.Trace)
	}
	call.Explain = true
	d := decide(t, e, call)
	var steps []string
	for _, s := range d.Trace {
		steps = append(steps, s.Step+"="+s.Outcome)
	}
	want := "capability=pass parent_scope=pass workspace=pass explicit_deny=pass mode=pass dangerous=pass session_grant=pass rule=decided ask_always=not_reached fallback=not_reached"
	if got := strings.Join(steps, " "); got != want {
		t.Fatalf("trace\n got %s\nwant %s", got, want)
	}
	if d.Matches["level"] != (api.RuleMatch{Pattern: "fs.write", Action: "ask"}) {
		t.Fatalf("matches %+v", d.Matches)
	}
}

func TestBadInputIsAnErrorNeverADecision(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	cases := map[string]pdp.Call{
		"empty session id":     {Request: api.DecideRequest{Tool: "Read"}},
		"bad session id":       {Request: api.DecideRequest{SessionID: "a/b", Tool: "Read"}},
		"no tool":              {Request: api.DecideRequest{SessionID: "s"}},
		"bad capability":       {Request: api.DecideRequest{SessionID: "s", Capability: "Fs..read"}},
		"tool and capability":  {Request: api.DecideRequest{SessionID: "s", Tool: "Bash", Capability: "fs.read"}},
		"command not a string": {Request: api.DecideRequest{SessionID: "s", Tool: "Bash", Args: map[string]any{"command": 3.0}}},
		"path not a string":    {Request: api.DecideRequest{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": []any{"x"}}}},
		"unknown level":        {Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{PermissionLevel: "ROOT"}},
		"unknown mode":         {Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{Mode: "yolo"}},
		"bad rule action":      {Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{Rules: map[string]string{"fs.*": "maybe"}}},
		"bad rule pattern":     {Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{Rules: map[string]string{"fs*": "allow"}}},
		"bad parent level":     {Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{Parent: &pdp.SessionTree{PermissionLevel: "x"}}},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := e.Decide(context.Background(), call)
			var bad *pdp.Error
			if !errors.As(err, &bad) || bad.Code == "" || bad.Message == "" {
				t.Fatalf("want a *pdp.Error, got %v (decision %+v)", err, d)
			}
			if d.Decision == api.Allow {
				t.Fatal("bad input was allowed")
			}
		})
	}
}

func TestPolicyFailuresDeny(t *testing.T) {
	wrongShape := fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := {\"decision\": \"allow\", \"source\": 7}\n")}}
	unknownAnswer := fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := {\"decision\": \"maybe\", \"source\": \"x\", \"rule\": \"x\", \"reason\": \"x\", \"capability\": null, \"fingerprint\": null, \"grantable\": false, \"danger\": null, \"needs\": []}\n")}}
	undefined := fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := 1 if false\n")}}
	needsForever := fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := {\"decision\": \"allow\", \"source\": \"x\", \"rule\": \"x\", \"reason\": \"x\", \"capability\": null, \"fingerprint\": null, \"grantable\": false, \"danger\": null, \"needs\": [\"danger\"]}\n")}}
	conflict := fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := {\"decision\": \"allow\"} if input.tool\nanswer := {\"decision\": \"deny\"} if input.tool\n")}}
	for name, fsys := range map[string]fstest.MapFS{"wrong shape": wrongShape, "unknown answer": unknownAnswer, "undefined": undefined, "needs forever": needsForever, "eval conflict": conflict} {
		t.Run(name, func(t *testing.T) {
			p, err := policysource.LoadFS(context.Background(), fsys, name)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			e := pdp.New(p, pdp.Components{})
			d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read"}})
			if d.Decision != api.Deny || d.Source != "default" {
				t.Fatalf("got %+v", d)
			}
		})
	}
	t.Run("no policy", func(t *testing.T) {
		d := decide(t, pdp.New(nil, pdp.Components{}), pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read"}})
		if d.Decision != api.Deny {
			t.Fatalf("got %+v", d)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		d, err := newEngine(t, pdp.Components{}).Decide(ctx, pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read"}, Session: &pdp.SessionTree{PermissionLevel: api.Full}})
		if err == nil && d.Decision == api.Allow {
			t.Fatalf("a cancelled decision was allowed: %+v", d)
		}
	})
}

func TestSwapKeepsTheLastGoodPolicy(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	good := e.Policy()
	if err := e.Swap(nil); err == nil {
		t.Fatal("swapping in nil succeeded")
	}
	if e.Policy() != good {
		t.Fatal("the active policy changed")
	}
	if _, err := policysource.LoadFS(context.Background(), fstest.MapFS{"p.rego": {Data: []byte("package toolperm\n\ndecision := answer\n\nanswer := x")}}, "bad"); err == nil {
		t.Fatal("a policy that does not compile compiled")
	}
	denyAll := fstest.MapFS{"p.rego": {Data: []byte(`package toolperm

decision := answer

answer := {"decision": "deny", "source": "config", "rule": "ALL", "reason": "Everything is denied.", "capability": null, "fingerprint": null, "grantable": false, "danger": null, "needs": []}
`)}}
	p, err := policysource.LoadFS(context.Background(), denyAll, "deny-all")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Swap(p); err != nil {
		t.Fatal(err)
	}
	d := decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read"}})
	if d.Rule != "ALL" || d.Revision != p.Revision || d.Revision == good.Revision {
		t.Fatalf("after swap: %+v", d)
	}
}

type failingAudit struct{}

func (failingAudit) Record(context.Context, pdp.AuditRecord) error { return errors.New("disk full") }

type memoryAudit struct{ events []pdp.AuditRecord }

func (m *memoryAudit) Record(_ context.Context, ev pdp.AuditRecord) error {
	m.events = append(m.events, ev)
	return nil
}

func TestAuditFailureDenies(t *testing.T) {
	e := newEngine(t, pdp.Components{Audit: failingAudit{}})
	d, err := e.Decide(context.Background(), pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": "/w/a"}}, Session: &pdp.SessionTree{Workspace: "/w"}})
	if !errors.Is(err, pdp.ErrAuditUnavailable) || d.Decision != api.Deny {
		t.Fatalf("got %+v, %v", d, err)
	}

	audit := &memoryAudit{}
	e = newEngine(t, pdp.Components{Audit: audit})
	d = decide(t, e, pdp.Call{Request: api.DecideRequest{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": "/w/a"}}, Session: &pdp.SessionTree{Workspace: "/w"}})
	if len(audit.events) != 1 || audit.events[0].Decision.DecisionID != d.DecisionID {
		t.Fatalf("audit events %+v", audit.events)
	}
}
