package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client speaks the PDP's HTTP API.
type client struct {
	base string
	http *http.Client
}

func newClient(base string, conns int) *client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns * 2
	t.MaxIdleConnsPerHost = conns * 2
	return &client{base: base, http: &http.Client{Transport: t, Timeout: 60 * time.Second}}
}

// apiError is a non-2xx answer.
type apiError struct {
	Status int
	Body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Body) }

func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{Status: resp.StatusCode, Body: string(bytes.TrimSpace(raw))}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

type decision struct {
	DecisionID  string  `json:"decision_id"`
	Decision    string  `json:"decision"`
	Source      string  `json:"source"`
	Rule        string  `json:"rule"`
	Reason      string  `json:"reason"`
	Capability  *string `json:"capability"`
	Fingerprint *string `json:"fingerprint"`
	Grantable   bool    `json:"grantable"`
	Danger      *struct {
		Verdict string `json:"verdict"`
		By      string `json:"by"`
	} `json:"danger"`
}

func (c *client) createSession(ctx context.Context, id, workspace, level string) error {
	in := map[string]any{"id": id, "permission_level": level}
	if workspace != "" {
		in["workspace"] = workspace
	}
	return c.do(ctx, http.MethodPost, "/v1/sessions", in, nil)
}

func (c *client) decide(ctx context.Context, session, tool string, args map[string]any, cwd string) (decision, error) {
	var d decision
	in := map[string]any{"session_id": session, "tool": tool, "args": args}
	if cwd != "" {
		in["cwd"] = cwd
	}
	err := c.do(ctx, http.MethodPost, "/v1/decide", in, &d)
	return d, err
}

// labels are the flow labels of the session's tree.
func (c *client) labels(ctx context.Context, id string) ([]string, error) {
	var s struct {
		Labels []struct {
			Label string `json:"label"`
		} `json:"labels"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/sessions/"+id, nil, &s); err != nil {
		return nil, fmt.Errorf("reading session %s: %w", id, err)
	}
	var out []string
	for _, l := range s.Labels {
		out = append(out, l.Label)
	}
	return out, nil
}

func (c *client) answer(ctx context.Context, id, answer string) error {
	return c.do(ctx, http.MethodPost, "/v1/decisions/"+id+"/answer", map[string]string{"answer": answer, "channel": "cli"}, nil)
}
