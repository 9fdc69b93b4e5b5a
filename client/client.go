// Package client is a Go client of the toolperm PDP's HTTP API for agent
// runtimes (dispatchers) and for people's channels: decide before a tool
// call, answer asks, manage sessions and grants, read the audit trail.
// It depends on the standard library only.
//
//	c := client.New("http://127.0.0.1:8181", client.WithToken(os.Getenv("PDP_TOKEN")))
//	d, err := c.Decide(ctx, client.DecideRequest{SessionID: "s1", Tool: "shell", Args: map[string]any{"command": "git status"}, Cwd: dir})
//	if err != nil || d.Decision != client.Allow { /* do not run the call */ }
//
// Every error means "no decision": a caller must treat it as deny.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolperm/pdp/api"
)

// Client talks to one PDP. It is safe for concurrent use.
type Client struct {
	base    string
	token   string
	http    *http.Client
	retries int
	backoff time.Duration
	caFile  string
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends token as a bearer token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient replaces the HTTP client (default: 10 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries retries a request that could not reach the server (a
// connection error; never an HTTP answer) up to n times (default 2).
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) { c.retries, c.backoff = n, backoff }
}

// New returns a client of the PDP at baseURL (e.g. http://127.0.0.1:8181).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		base:    strings.TrimRight(baseURL, "/"),
		http:    &http.Client{Timeout: 10 * time.Second},
		retries: 2,
		backoff: 100 * time.Millisecond,
	}
	for _, o := range opts {
		o(c)
	}
	if c.caFile != "" {
		c.trustCAFile()
	}
	return c
}

// Error is an error answer of the API, with its HTTP status and code.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("pdp: %d %s: %s", e.Status, e.Code, e.Message) }

// Is lets errors.Is match an *Error against the sentinel errors by status.
func (e *Error) Is(target error) bool {
	status, ok := sentinelStatus[target]
	return ok && e.Status == status
}

// Sentinel errors to test with errors.Is.
var (
	ErrBadRequest   = errors.New("bad request")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrNotGrantable = errors.New("not grantable")
	ErrUnavailable  = errors.New("unavailable")
	// ErrResumeTooOld: the server no longer keeps the events after the
	// id an event stream asked to resume from; list again and start anew.
	ErrResumeTooOld = errors.New("resume too old")
)

// sentinelStatus is the HTTP status each sentinel error stands for.
var sentinelStatus = map[error]int{
	ErrBadRequest:   http.StatusBadRequest,
	ErrUnauthorized: http.StatusUnauthorized,
	ErrForbidden:    http.StatusForbidden,
	ErrNotFound:     http.StatusNotFound,
	ErrConflict:     http.StatusConflict,
	ErrResumeTooOld: http.StatusGone,
	ErrNotGrantable: http.StatusUnprocessableEntity,
	ErrUnavailable:  http.StatusServiceUnavailable,
}

// do sends one request and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("pdp: encoding the request: %w", err)
		}
	}
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("pdp: %w", err)
		}
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err = c.http.Do(req)
		if err == nil {
			break
		}
		if attempt >= c.retries || !isConnectionError(err) || ctx.Err() != nil {
			return fmt.Errorf("pdp: %s %s: %w", method, path, err)
		}
		select {
		case <-time.After(c.backoff << attempt):
		case <-ctx.Done():
			return fmt.Errorf("pdp: %s %s: %w", method, path, ctx.Err())
		}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("pdp: reading the answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e api.Error
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return &Error{Status: resp.StatusCode, Code: "http_error", Message: strings.TrimSpace(string(raw))}
		}
		return &Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("pdp: the answer is not what the API returns: %w", err)
	}
	return nil
}

// isConnectionError: the request never got an answer (refused, reset,
// DNS), so sending it again is safe to try.
func isConnectionError(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func query(values map[string]string) string {
	q := url.Values{}
	for k, v := range values {
		if v != "" {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
