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

	"github.com/toolperm/pdp/client"
)

// Options say how a hook reaches the PDP.
type Options struct {
	// URL is the PDP server and Token its dispatcher token.
	URL, Token string
	// Local decides in this process instead of asking a server (--local);
	// workspace is the project root (Options.Workspace or the event's).
	Local func(ctx context.Context, c Call, workspace string) (Verdict, error)
	// Timeout bounds one decision; Wait holds an ask this long for a
	// person's answer at the PDP.
	Timeout, Wait time.Duration
	// Workspace is the project root the flags give (--workspace); it wins
	// over the event's.
	Workspace string
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
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var v Verdict
	var err error
	if o.Local != nil {
		v, err = o.Local(ctx, c, o.workspace(c))
	} else {
		v, err = o.server(ctx, c)
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
			why = "this agent cannot ask, so the call is denied until " + whereToAnswer(v.DecisionID, o.URL)
		}
		return Verdict{Decision: "deny", DecisionID: v.DecisionID, Reason: v.Reason + " — " + why}
	}
	return v
}

func (o Options) client(checked bool) *client.Client {
	// No client-side timeout: the contexts bound every call, and a wait
	// may hold a request longer than any fixed timeout.
	opts := []client.Option{client.WithToken(o.Token), client.WithRetries(1, 50*time.Millisecond)}
	if checked {
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: CompleteDecisions{http.DefaultTransport}}))
	}
	return client.New(o.URL, opts...)
}

func (o Options) server(ctx context.Context, c Call) (Verdict, error) {
	api := o.client(true)
	// The main session is created with the project as its workspace when
	// it is known (otherwise the server takes the first cwd), and a
	// sub-agent's session as its child.
	workspace := o.workspace(c)
	if workspace == "" {
		workspace = c.Cwd
	}
	var sessions []client.Session
	if c.Child != "" || workspace != c.Cwd {
		sessions = append(sessions, client.Session{ID: c.Session, Workspace: workspace, ExecutionMode: "LOCAL"})
		if c.Child != "" {
			sessions = append(sessions, client.Session{ID: c.Child, ParentSessionID: c.Session})
		}
	}
	for _, s := range sessions {
		if _, err := api.Sessions().Create(ctx, s); err != nil && !errors.Is(err, client.ErrConflict) {
			return Verdict{}, err
		}
	}
	d, err := api.Decide(ctx, c.Request(), false)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Decision: d.Decision, Reason: reason(d.Reason, d.Rule, d.DecisionID), DecisionID: d.DecisionID}
	if d.Decision != client.Ask || o.Wait <= 0 {
		return v, nil
	}
	waitCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Wait+5*time.Second)
	defer cancel()
	// Only a person's answer decides here; a runtime's outcome on the ask
	// is a record of what a runtime did, never a permission.
	answered, err := api.Decision(waitCtx, d.DecisionID, o.Wait)
	if err != nil || answered.DecisionID != d.DecisionID || answered.Answer == nil || answered.Answer.ReportedBy != "" {
		return v, nil
	}
	if a := answered.Answer; a.Allows() {
		return Verdict{Decision: client.Allow, DecisionID: d.DecisionID, Reason: fmt.Sprintf("toolperm: allowed by a person (%s, %s) — decision %s", a.Channel, a.Answer, d.DecisionID)}, nil
	}
	return Verdict{Decision: client.Deny, DecisionID: d.DecisionID, Reason: fmt.Sprintf("toolperm: denied by a person (%s) — decision %s", answered.Answer.Channel, d.DecisionID)}, nil
}

// Record records what an Outcome call says became of its ask, with the
// agent's name as the channel. It is only a record: a call the PDP did
// not ask about, or an ask with an outcome already, is no error; without
// a server or a tool use id there is nothing to record.
func Record(ctx context.Context, o Options, c Call) error {
	if o.Local != nil || c.ToolUseID == "" || c.Outcome == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	_, err := o.client(false).RecordOutcome(ctx, c.ToolUseID, c.Outcome, c.Agent)
	if err == nil || errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrNotFound) {
		return nil
	}
	return fmt.Errorf("toolperm: could not record %s of %s (%s) at the PDP: %w", c.Outcome, c.Tool, c.ToolUseID, err)
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
