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
	if c.Workspace == nil {
		c.Workspace = paths.Resolver{}
	}
	if c.Shell == nil {
		c.Shell = shell.Parser{}
	}
	return pdp.New(builtinPolicy(t), c)
}

func decide(t testing.TB, e *pdp.Engine, call pdp.Call) pdp.Decision {
	t.Helper()
	d, err := e.Decide(context.Background(), call)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

func shellCall(cmd string, s *pdp.Session) pdp.Call {
	return pdp.Call{Request: pdp.Request{SessionID: "s1", Tool: "shell", Args: map[string]any{"command": cmd}}, Session: s}
}

func str(s string) *string { return &s }

// fixedAssessor answers one verdict and counts its calls.
type fixedAssessor struct {
	verdict string
	calls   atomic.Int32
}

func (a *fixedAssessor) Assess(_ context.Context, _ string, _ *pdp.Session) pdp.Danger {
	a.calls.Add(1)
	return pdp.Danger{Verdict: a.verdict, By: "llm"}
}

func TestDecideExamplesOfTheDesign(t *testing.T) {
	grantGitStatus := []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}
	cases := []struct {
		name     string
		req      pdp.Request
		session  *pdp.Session
		decision string
		source   string
		rule     string
		fp       *string
	}{
		{"read-write write inside the workspace", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.Session{PermissionLevel: pdp.ReadWrite, Workspace: "/w"}, "allow", "level", "fs.write", nil},
		{"read-only write asks", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.Session{Workspace: "/w"}, "ask", "level", "fs.write", nil},
		{"read-only read", pdp.Request{Tool: "read_file", Args: map[string]any{"path": "a.txt"}, Cwd: "/w/sub"}, &pdp.Session{Workspace: "/w"}, "allow", "level", "fs.read", nil},
		{"dotdot leaves the workspace", pdp.Request{Tool: "read_file", Args: map[string]any{"path": "../../etc/passwd"}, Cwd: "/w/sub"}, &pdp.Session{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"absolute path outside", pdp.Request{Tool: "Read", Args: map[string]any{"file_path": "/etc/passwd"}}, &pdp.Session{Workspace: "/w", PermissionLevel: pdp.Full}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"/wx is not inside /w", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "/wx/a"}}, &pdp.Session{Workspace: "/w", Mode: pdp.AllowAll}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"one of paths[] outside", pdp.Request{Tool: "fs.read", Args: map[string]any{"paths": []any{"/w/a", "/tmp/b"}}}, &pdp.Session{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"CLOUD ignores the level", pdp.Request{Tool: "shell", Args: map[string]any{"command": "make -j4"}}, &pdp.Session{Workspace: "/w", ExecutionMode: pdp.Cloud}, "allow", "mode", "MODE", nil},
		{"CLOUD still checks the workspace", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "/etc/x"}}, &pdp.Session{Workspace: "/w", ExecutionMode: pdp.Cloud}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"FULL allows dangerous capabilities", pdp.Request{Tool: "mcp__github__create_issue"}, &pdp.Session{PermissionLevel: pdp.Full}, "allow", "mode", "MODE", nil},
		{"allow-all keeps an explicit deny", pdp.Request{Tool: "WebFetch", Args: map[string]any{"url": "https://x"}}, &pdp.Session{Mode: pdp.AllowAll, Rules: map[string]string{"net.*": "deny"}}, "deny", "config", "net.*", nil},
		{"mcp without a rule is denied", pdp.Request{Tool: "mcp__github__create_issue"}, &pdp.Session{}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"mcp.github.* asks", pdp.Request{Tool: "mcp__github__create_issue"}, &pdp.Session{Rules: map[string]string{"mcp.github.*": "ask"}}, "ask", "config", "mcp.github.*", nil},
		{"mcp.github.* misses mcp.githubx", pdp.Request{Capability: "mcp.githubx.y"}, &pdp.Session{Rules: map[string]string{"mcp.github.*": "ask"}}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"mcp.git.* misses mcp.github", pdp.Request{Capability: "mcp.github.x"}, &pdp.Session{Rules: map[string]string{"mcp.git.*": "allow"}}, "deny", "default", "DANGEROUS_NO_RULE", nil},
		{"user rule cannot loosen the level", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, &pdp.Session{Workspace: "/w", Rules: map[string]string{"fs.*": "allow"}}, "ask", "level", "fs.write", nil},
		{"shell asks at read-only, grantable", pdp.Request{Tool: "shell", Args: map[string]any{"command": "git status"}}, &pdp.Session{}, "ask", "level", "shell.exec", str("git status")},
		{"grant allows the fingerprint", pdp.Request{Tool: "shell", Args: map[string]any{"command": "git status -s"}}, &pdp.Session{Grants: grantGitStatus}, "allow", "session-grant", "SESSION_GRANT", str("git status")},
		{"grant does not cover a list", pdp.Request{Tool: "shell", Args: map[string]any{"command": "git status; rm -rf build"}}, &pdp.Session{Grants: grantGitStatus}, "ask", "level", "shell.exec", nil},
		// ~ may name any path, so the shipped path rules ask before rm writes it.
		{"a list with a word that may name any path", pdp.Request{Tool: "shell", Args: map[string]any{"command": "git status; cat ~/notes"}}, &pdp.Session{Grants: grantGitStatus, PermissionLevel: pdp.Full}, "ask", "config", ".env.*", nil},
		{"the deny floor holds at FULL", pdp.Request{Tool: "shell", Args: map[string]any{"command": "git status; rm -rf ~"}}, &pdp.Session{Grants: grantGitStatus, PermissionLevel: pdp.Full}, "deny", "config", "rm -rf /", nil},
		{"command wins over argv", pdp.Request{Tool: "shell", Args: map[string]any{"command": "rm -rf build", "argv": []any{"git", "status"}}}, &pdp.Session{Grants: grantGitStatus}, "ask", "level", "shell.exec", nil},
		{"argv when there is no command", pdp.Request{Tool: "shell", Args: map[string]any{"argv": []any{"git", "status"}}}, &pdp.Session{Grants: grantGitStatus}, "allow", "session-grant", "SESSION_GRANT", str("git status")},
		{"write_stdin is shell.stdin", pdp.Request{Tool: "shell", Args: map[string]any{"action": "write_stdin", "input": "y\n"}}, &pdp.Session{}, "allow", "level", "shell.stdin", nil},
		{"unknown tool", pdp.Request{Tool: "frobnicate"}, &pdp.Session{Mode: pdp.AllowAll}, "deny", "default", "UNKNOWN_TOOL", nil},
		{"always-ask fallback asks", pdp.Request{Capability: "widget.spin"}, &pdp.Session{Mode: pdp.AlwaysAsk}, "ask", "default", "FALLBACK", nil},
		{"on-demand fallback denies", pdp.Request{Capability: "widget.spin"}, &pdp.Session{}, "deny", "default", "FALLBACK", nil},
		{"no session at all confines nothing", pdp.Request{Tool: "write_file", Args: map[string]any{"path": "a"}, Cwd: "/w"}, nil, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"cwd outside the workspace", pdp.Request{Tool: "shell", Args: map[string]any{"command": "make -j4"}, Cwd: "/"}, &pdp.Session{Workspace: "/w", PermissionLevel: pdp.Full}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"glob reaching out", pdp.Request{Tool: "Glob", Args: map[string]any{"pattern": "/etc/*"}}, &pdp.Session{Workspace: "/w"}, "deny", "default", "OUTSIDE_WORKSPACE", nil},
		{"glob inside", pdp.Request{Tool: "Glob", Args: map[string]any{"pattern": "**/*.go"}, Cwd: "/w"}, &pdp.Session{Workspace: "/w"}, "allow", "level", "fs.glob", nil},
		{"grep pattern is not a path", pdp.Request{Tool: "Grep", Args: map[string]any{"pattern": "/etc/passwd", "path": "src"}, Cwd: "/w"}, &pdp.Session{Workspace: "/w"}, "allow", "level", "fs.grep", nil},
		{"dotted mcp name is unknown", pdp.Request{Tool: "mcp__a.b__c"}, &pdp.Session{Mode: pdp.AlwaysAsk}, "deny", "default", "UNKNOWN_TOOL", nil},
	}
	e := newEngine(t, pdp.Components{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.SessionID = "s1"
			d := decide(t, e, pdp.Call{Request: tc.req, Session: tc.session})
			if d.Decision != tc.decision || d.Source != tc.source || d.Rule != tc.rule {
				t.Fatalf("got %s/%s/%s (%s), want %s/%s/%s", d.Decision, d.Source, d.Rule, d.Reason, tc.decision, tc.source, tc.rule)
			}
			if d.NeedApproval != (d.Decision == pdp.Ask) {
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
	smart := &pdp.Session{PermissionLevel: pdp.Smart, Workspace: "/w"}

	d := decide(t, e, shellCall("go test ./...", smart))
	if d.Decision != pdp.Allow || d.Source != "assessor" || d.Danger == nil || d.Danger.Verdict != pdp.Safe {
		t.Fatalf("SAFE verdict: got %+v", d)
	}
	if safe.calls.Load() != 1 {
		t.Fatalf("assessor called %d times, want 1", safe.calls.Load())
	}

	// No LLM call for a deny, a grant, FULL, CLOUD or a non-shell call.
	for name, call := range map[string]pdp.Call{
		"grant": shellCall("git status", &pdp.Session{PermissionLevel: pdp.Smart, Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}}),
		"deny":  shellCall("make", &pdp.Session{PermissionLevel: pdp.Smart, Rules: map[string]string{"shell.*": "deny"}}),
		"full":  shellCall("make", &pdp.Session{PermissionLevel: pdp.Full}),
		"cloud": shellCall("make", &pdp.Session{PermissionLevel: pdp.Smart, ExecutionMode: pdp.Cloud}),
		"write": {Request: pdp.Request{SessionID: "s", Tool: "write_file", Args: map[string]any{"path": "/w/x"}}, Session: smart},
	} {
		before := safe.calls.Load()
		decide(t, e, call)
		if safe.calls.Load() != before {
			t.Errorf("%s: the assessor was called", name)
		}
	}

	dangerous := &fixedAssessor{verdict: pdp.Dangerous}
	d = decide(t, newEngine(t, pdp.Components{Assessor: dangerous}), shellCall("make", smart))
	if d.Decision != pdp.Ask || d.Source != "level" || d.Danger.Verdict != pdp.Dangerous {
		t.Fatalf("DANGEROUS verdict: got %+v", d)
	}
}

func TestNoAssessorMeansUnavailable(t *testing.T) {
	d := decide(t, newEngine(t, pdp.Components{}), shellCall("make", &pdp.Session{PermissionLevel: pdp.Smart}))
	if d.Decision != pdp.Ask || d.Danger == nil || *d.Danger != (pdp.Danger{Verdict: pdp.Dangerous, By: "unavailable"}) {
		t.Fatalf("got %+v danger %+v", d, d.Danger)
	}
}

func TestSubAgentsAreCappedByTheirParent(t *testing.T) {
	assessor := &fixedAssessor{verdict: pdp.Safe}
	e := newEngine(t, pdp.Components{Assessor: assessor})
	parent := &pdp.Session{Workspace: "/w"} // READ_ONLY: writes ask
	cases := []struct {
		name             string
		call             pdp.Call
		decision, source string
		rule             string
	}{
		{"outside the child's scope", shellCall("ls", &pdp.Session{PermissionLevel: pdp.Full, Scope: []string{"fs.*"}, Parent: parent}), "deny", "default", "PARENT_SCOPE"},
		{"parent denies", pdp.Call{Request: pdp.Request{SessionID: "c", Capability: "mcp.x.y"}, Session: &pdp.Session{Mode: pdp.AllowAll, Parent: parent}}, "deny", "default", "PARENT_SCOPE"},
		{"parent asks, child allows", pdp.Call{Request: pdp.Request{SessionID: "c", Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.Session{PermissionLevel: pdp.Full, Workspace: "/w", Parent: parent}}, "ask", "level", "fs.write"},
		{"both allow", pdp.Call{Request: pdp.Request{SessionID: "c", Tool: "read_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.Session{Workspace: "/w", Scope: []string{"fs.read"}, Parent: parent}}, "allow", "level", "fs.read"},
		{"outside the parent's workspace", pdp.Call{Request: pdp.Request{SessionID: "c", Tool: "read_file", Args: map[string]any{"path": "/w2/a"}}, Session: &pdp.Session{Workspace: "/w2", Parent: parent}}, "deny", "default", "PARENT_SCOPE"},
		{"grant of the root applies", shellCall("git status", &pdp.Session{Parent: &pdp.Session{Grants: []pdp.Grant{{Capability: "shell.exec", Fingerprint: "git status"}}}}), "allow", "session-grant", "SESSION_GRANT"},
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
	d := decide(t, e, shellCall("make", &pdp.Session{PermissionLevel: pdp.Smart, Parent: &pdp.Session{PermissionLevel: pdp.Smart}}))
	if d.Decision != pdp.Allow || assessor.calls.Load()-before != 1 {
		t.Fatalf("got %s with %d assessor calls", d.Decision, assessor.calls.Load()-before)
	}
}

func TestExplainAddsTheTrace(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	call := pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "write_file", Args: map[string]any{"path": "/w/a"}}, Session: &pdp.Session{Workspace: "/w"}}
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
	if d.Matches["level"] != (pdp.RuleMatch{Pattern: "fs.write", Action: "ask"}) {
		t.Fatalf("matches %+v", d.Matches)
	}
}

func TestBadInputIsAnErrorNeverADecision(t *testing.T) {
	e := newEngine(t, pdp.Components{})
	cases := map[string]pdp.Call{
		"empty session id":     {Request: pdp.Request{Tool: "Read"}},
		"bad session id":       {Request: pdp.Request{SessionID: "a/b", Tool: "Read"}},
		"no tool":              {Request: pdp.Request{SessionID: "s"}},
		"bad capability":       {Request: pdp.Request{SessionID: "s", Capability: "Fs..read"}},
		"tool and capability":  {Request: pdp.Request{SessionID: "s", Tool: "Bash", Capability: "fs.read"}},
		"command not a string": {Request: pdp.Request{SessionID: "s", Tool: "Bash", Args: map[string]any{"command": 3.0}}},
		"path not a string":    {Request: pdp.Request{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": []any{"x"}}}},
		"unknown level":        {Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{PermissionLevel: "ROOT"}},
		"unknown mode":         {Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{Mode: "yolo"}},
		"bad rule action":      {Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{Rules: map[string]string{"fs.*": "maybe"}}},
		"bad rule pattern":     {Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{Rules: map[string]string{"fs*": "allow"}}},
		"bad parent level":     {Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{Parent: &pdp.Session{PermissionLevel: "x"}}},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			d, err := e.Decide(context.Background(), call)
			var bad *pdp.Error
			if !errors.As(err, &bad) || bad.Code == "" || bad.Message == "" {
				t.Fatalf("want a *pdp.Error, got %v (decision %+v)", err, d)
			}
			if d.Decision == pdp.Allow {
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
			d := decide(t, e, pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read"}})
			if d.Decision != pdp.Deny || d.Source != "default" {
				t.Fatalf("got %+v", d)
			}
		})
	}
	t.Run("no policy", func(t *testing.T) {
		d := decide(t, pdp.New(nil, pdp.Components{}), pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read"}})
		if d.Decision != pdp.Deny {
			t.Fatalf("got %+v", d)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		d, err := newEngine(t, pdp.Components{}).Decide(ctx, pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read"}, Session: &pdp.Session{PermissionLevel: pdp.Full}})
		if err == nil && d.Decision == pdp.Allow {
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
	d := decide(t, e, pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read"}})
	if d.Rule != "ALL" || d.Revision != p.Revision || d.Revision == good.Revision {
		t.Fatalf("after swap: %+v", d)
	}
}

type failingAudit struct{}

func (failingAudit) Record(context.Context, pdp.Event) error { return errors.New("disk full") }

type memoryAudit struct{ events []pdp.Event }

func (m *memoryAudit) Record(_ context.Context, ev pdp.Event) error {
	m.events = append(m.events, ev)
	return nil
}

func TestAuditFailureDenies(t *testing.T) {
	e := newEngine(t, pdp.Components{Audit: failingAudit{}})
	d, err := e.Decide(context.Background(), pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": "/w/a"}}, Session: &pdp.Session{Workspace: "/w"}})
	if !errors.Is(err, pdp.ErrAuditUnavailable) || d.Decision != pdp.Deny {
		t.Fatalf("got %+v, %v", d, err)
	}

	audit := &memoryAudit{}
	e = newEngine(t, pdp.Components{Audit: audit})
	d = decide(t, e, pdp.Call{Request: pdp.Request{SessionID: "s", Tool: "Read", Args: map[string]any{"file_path": "/w/a"}}, Session: &pdp.Session{Workspace: "/w"}})
	if len(audit.events) != 1 || audit.events[0].Decision.DecisionID != d.DecisionID {
		t.Fatalf("audit events %+v", audit.events)
	}
}
