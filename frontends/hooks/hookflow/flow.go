package hookflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
)

// PDP is what the flow needs of the PDP: a server through its API
// (Remote, for command hooks) or the server itself (its hook endpoint).
type PDP interface {
	// CreateSession creates a session; one that exists already is fine.
	CreateSession(ctx context.Context, s api.NewSession) error
	// Decide decides one call.
	Decide(ctx context.Context, r api.DecideRequest) (api.Decision, error)
	// Answer waits up to wait for a person's answer to an ask: nil when
	// none came (a runtime's outcome is never one).
	Answer(ctx context.Context, decisionID string, wait time.Duration) (*api.Answer, error)
	// RecordOutcome records what became of the ask of a tool use; an
	// unknown tool use or one with an outcome already is no error.
	RecordOutcome(ctx context.Context, toolUseID, outcome, channel string) error
}

// Options say how a hook reaches the PDP.
type Options struct {
	// PDP decides; nil with Local set.
	PDP PDP
	// ConsoleURL is where a person answers asks, for a reason that says
	// so.
	ConsoleURL string
	// Local decides in this process instead of asking a server (--local);
	// workspace is the project root (Options.Workspace or the event's).
	Local func(ctx context.Context, c Call, workspace string) (Verdict, error)
	// Timeout bounds one decision; Wait holds an ask this long for a
	// person's answer at the PDP.
	Timeout, Wait time.Duration
	// Workspace is the project root the flags give (--workspace); it wins
	// over the event's.
	Workspace string
	// SendProject sends the workspace's project policy file with each
	// call (a hook running beside the agent: `pdp hook`); the server's
	// own hook endpoint never does, as it would read its own host's files.
	SendProject bool
	// CanAsk says the agent shows its own prompt for an ask of this call.
	// Without one an ask that no person answered within Wait is denied,
	// saying where to answer it.
	CanAsk bool
}

func (o Options) workspace(c Call) string {
	if o.Workspace != "" {
		return o.Workspace
	}
	return c.Workspace
}

// Decide answers a Pre or Permission call. It never fails: every error
// is a deny verdict.
func Decide(ctx context.Context, o Options, c Call) Verdict {
	if why := windowsPaths(c, o.workspace(c)); why != "" {
		return Verdict{Decision: "deny", Reason: why}
	}
	if c.NoWorkspace != "" && o.workspace(c) == "" && !c.FileFree {
		return Verdict{Decision: "deny", Reason: c.NoWorkspace}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var v Verdict
	var err error
	switch {
	case o.Local != nil:
		v, err = o.Local(ctx, c, o.workspace(c))
	case o.PDP != nil:
		v, err = o.server(ctx, c)
	default:
		err = errors.New("no PDP is configured")
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", o.Timeout, err)
		}
		return Deny(err)
	}
	v = v.Normal()
	if v.Decision == "ask" && !o.CanAsk {
		why := "this agent cannot ask and, decided in-process, there is no server to answer at, so the call is denied"
		if o.Local == nil {
			why = "this agent cannot ask, so the call is denied until " + whereToAnswer(v.DecisionID, o.ConsoleURL)
		}
		return Verdict{Decision: "deny", DecisionID: v.DecisionID, Reason: v.Reason + " — " + why}
	}
	return v
}

func (o Options) server(ctx context.Context, c Call) (Verdict, error) {
	// The main session is created with the project as its workspace when
	// it is known (otherwise the server takes the first cwd), and a
	// sub-agent's session as its child.
	workspace := o.workspace(c)
	if workspace == "" {
		workspace = c.Cwd
	}
	var sessions []api.NewSession
	if c.Child != "" || workspace != c.Cwd {
		sessions = append(sessions, api.NewSession{ID: c.Session, Workspace: workspace, ExecutionMode: "LOCAL"})
		if c.Child != "" {
			sessions = append(sessions, api.NewSession{ID: c.Child, ParentSessionID: c.Session})
		}
	}
	for _, s := range sessions {
		if err := o.PDP.CreateSession(ctx, s); err != nil {
			return Verdict{}, err
		}
	}
	req := c.Request()
	if o.SendProject {
		req.ProjectPolicy = ProjectFile(workspace)
	}
	d, err := o.PDP.Decide(ctx, req)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Decision: d.Decision, Reason: reason(d.Reason, d.Rule, d.DecisionID), DecisionID: d.DecisionID}
	if d.Decision != api.Ask || o.Wait <= 0 {
		return v, nil
	}
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Wait+5*time.Second)
	defer cancel()
	// Only a person's answer decides here; a runtime's outcome on the ask
	// is a record of what a runtime did, never a permission.
	a, err := o.PDP.Answer(waitCtx, d.DecisionID, o.Wait)
	if err != nil || a == nil {
		return v, nil
	}
	if a.Allows() {
		return Verdict{Decision: api.Allow, DecisionID: d.DecisionID, Reason: fmt.Sprintf("toolperm: allowed by a person (%s, %s) — decision %s", a.Channel, a.Answer, d.DecisionID)}, nil
	}
	if a.Answer == api.Expired {
		return Verdict{Decision: api.Deny, DecisionID: d.DecisionID, Reason: fmt.Sprintf("toolperm: denied: nobody answered the ask in time (it expired) — decision %s", d.DecisionID)}, nil
	}
	return Verdict{Decision: api.Deny, DecisionID: d.DecisionID, Reason: fmt.Sprintf("toolperm: denied by a person (%s) — decision %s", a.Channel, d.DecisionID)}, nil
}

// Record records what an Outcome call says became of its ask, with the
// agent's name as the channel. It is only a record; without a server or
// a tool use id there is nothing to record.
func Record(ctx context.Context, o Options, c Call) error {
	if o.Local != nil || o.PDP == nil || c.ToolUseID == "" || c.Outcome == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := o.PDP.RecordOutcome(ctx, c.ToolUseID, c.Outcome, c.Agent); err != nil {
		return fmt.Errorf("toolperm: could not record %s of %s (%s) at the PDP: %w", c.Outcome, c.Tool, c.ToolUseID, err)
	}
	return nil
}

// CompleteDecisions hands the client only complete answers of POST
// /v1/decide. The client's typed decode would fill a missing field with
// its zero value (a bare {"decision":"allow"} would read as an allow), so
// the bytes are checked first and replaced by exactly what was checked;
// any other answer is an error, and so a deny.
type CompleteDecisions struct{ Next http.RoundTripper }

// RoundTrip checks the answer of a decide request.
func (t CompleteDecisions) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.Next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/v1/decide") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the PDP's answer: %w", err)
	}
	d, err := ParseDecision(raw)
	if err != nil {
		return nil, err
	}
	checked, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encoding the PDP's answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(checked))
	resp.ContentLength = int64(len(checked))
	resp.Header.Del("Content-Length")
	return resp, nil
}
