package hookflow

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/client"
)

// Remote is a PDP server reached through its API with a dispatcher
// token; decide answers are checked whole (CompleteDecisions).
type Remote struct {
	checked, plain *client.Client
	url            string
}

// NewRemote is the server at url, reached through base (nil:
// http.DefaultTransport; client.NewTransport trusts a CA file). With
// TRACEPARENT in the environment, every request carries it on
// (traceparent.go).
func NewRemote(url, token string, base http.RoundTripper) Remote {
	if base == nil {
		base = http.DefaultTransport
	}
	base = withTraceparent(base, os.Getenv)
	// No client-side timeout: the contexts bound every call, and a wait
	// may hold a request longer than any fixed timeout.
	opts := []client.Option{client.WithToken(token), client.WithRetries(1, 50*time.Millisecond)}
	checked := client.New(url, append(opts, client.WithHTTPClient(&http.Client{Transport: CompleteDecisions{base}}))...)
	plain := client.New(url, append(opts, client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: base}))...)
	return Remote{checked: checked, plain: plain, url: url}
}

// ConsoleURL is the server's console.
func (r Remote) ConsoleURL() string { return strings.TrimRight(r.url, "/") + "/ui/" }

// CreateSession creates a session; a conflict is an existing one.
func (r Remote) CreateSession(ctx context.Context, s api.NewSession) error {
	_, err := r.checked.Sessions().Create(ctx, client.Session{ID: s.ID, Workspace: s.Workspace, ExecutionMode: s.ExecutionMode, ParentSessionID: s.ParentSessionID})
	if errors.Is(err, client.ErrConflict) {
		return nil
	}
	return err
}

// Decide decides one call.
func (r Remote) Decide(ctx context.Context, req api.DecideRequest) (api.Decision, error) {
	return r.checked.Decide(ctx, req, false)
}

// Answer waits for a person's answer: only an answer a person gave for
// this very decision counts.
func (r Remote) Answer(ctx context.Context, id string, wait time.Duration) (*api.Answer, error) {
	// The whole wait, though the server caps one request's (client.AwaitAnswer).
	ev, err := r.checked.AwaitAnswer(ctx, id, wait, answerSlack)
	if err != nil || ev.DecisionID != id || ev.Answer == nil || ev.Answer.ReportedBy != "" {
		return nil, err
	}
	return ev.Answer, nil
}

// answerSlack is how much longer than the wait left one request for an
// answer may take (the server's answer itself, after its wait).
const answerSlack = 5 * time.Second

// RecordOutcome records the outcome of a tool use's ask.
func (r Remote) RecordOutcome(ctx context.Context, toolUseID, outcome, channel string) error {
	_, err := r.plain.RecordOutcome(ctx, toolUseID, outcome, channel)
	if err == nil || errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrNotFound) {
		return nil
	}
	return err
}
