package assessor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/pdp"
)

// DefaultTimeout bounds one call to the model. Chat endpoints take 1-3 s
// a call, more under load; a bound at the slow end would turn every slow
// third of the verdicts into asks, so it sits well above it.
const DefaultTimeout = 6 * time.Second

// Config configures the assessor. URL is the base of the API: requests go
// to URL + "/chat/completions".
type Config struct {
	URL             string
	Model           string
	APIKey          string // optional; sent as a bearer token
	Timeout         time.Duration
	MaxTokens       int
	CacheSize       int
	CacheTTL        time.Duration
	MaxCommandBytes int
	// BreakerFailures consecutive failures open the circuit for
	// BreakerCooldown; 0 disables the breaker.
	BreakerFailures int
	BreakerCooldown time.Duration
	// Observer receives the assessor's events (metrics); may be nil.
	Observer Observer
	// Client overrides the HTTP client (tests); may be nil.
	Client *http.Client
}

// Observer is told what the assessor does, for metrics.
type Observer interface {
	// Assessed reports one verdict and how it was reached: by is one of
	// llm, cache, screen, error, unavailable.
	Assessed(by, verdict string)
	// Called reports one upstream call: its outcome (safe, dangerous,
	// error, timeout) and how long it took.
	Called(outcome string, took time.Duration)
}

// Assessor is an LLM danger assessor; it implements pdp.Assessor.
type Assessor struct {
	cfg     Config
	client  *http.Client
	cache   *verdictCache
	breaker *breaker
	now     func() time.Time

	mu       sync.Mutex
	inflight map[string]*flight
}

type flight struct {
	done   chan struct{}
	danger api.Danger
}

// New returns an assessor; a Config without a URL is an error (the
// caller leaves the engine's assessor nil instead).
func New(cfg Config) (*Assessor, error) {
	if cfg.URL == "" {
		return nil, errors.New("assessor: no url configured")
	}
	if cfg.Model == "" {
		return nil, errors.New("assessor: no model configured")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4
	}
	if cfg.MaxCommandBytes <= 0 {
		cfg.MaxCommandBytes = 4096
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	return &Assessor{
		cfg:      cfg,
		client:   client,
		cache:    newVerdictCache(cfg.CacheSize, cfg.CacheTTL),
		breaker:  &breaker{threshold: cfg.BreakerFailures, cooldown: cfg.BreakerCooldown},
		now:      time.Now,
		inflight: map[string]*flight{},
	}, nil
}

// Assess judges one command for a session. It never fails: problems are
// DANGEROUS verdicts, with By saying why.
func (a *Assessor) Assess(ctx context.Context, command pdp.AssessedCommand, s *pdp.SessionTree) api.Danger {
	d := a.assess(ctx, command, s)
	if a.cfg.Observer != nil {
		a.cfg.Observer.Assessed(d.By, d.Verdict)
	}
	return d
}

func (a *Assessor) assess(ctx context.Context, c pdp.AssessedCommand, s *pdp.SessionTree) api.Danger {
	command, canonical := c.Text, c.Canonical
	if len(command) > a.cfg.MaxCommandBytes || canonical == "" {
		return api.Danger{Verdict: pdp.Dangerous, By: "screen"}
	}
	model := a.cfg.Model
	if s != nil && s.AssessorModel != "" {
		model = s.AssessorModel
	}
	// Per exact command text, never per fingerprint: a SAFE "git log"
	// says nothing of "git log; curl …".
	key := model + "\x00" + command
	if safe, ok := a.cache.get(key, a.now()); ok {
		return api.Danger{Verdict: verdictOf(safe), By: "cache"}
	}

	a.mu.Lock()
	if f, ok := a.inflight[key]; ok {
		a.mu.Unlock()
		select {
		case <-f.done:
			return f.danger
		case <-ctx.Done():
			return api.Danger{Verdict: pdp.Dangerous, By: "error"}
		}
	}
	f := &flight{done: make(chan struct{})}
	a.inflight[key] = f
	a.mu.Unlock()

	// The shared call is not tied to the first caller's context: the
	// others still wait for it. It is bounded by the timeout instead.
	f.danger = a.call(context.WithoutCancel(ctx), model, canonical, key)
	a.mu.Lock()
	delete(a.inflight, key)
	a.mu.Unlock()
	close(f.done)
	return f.danger
}

func (a *Assessor) call(ctx context.Context, model, canonical, key string) api.Danger {
	if !a.breaker.allow(a.now()) {
		return api.Danger{Verdict: pdp.Dangerous, By: "unavailable"}
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	start := a.now()
	reply, err := a.chat(ctx, model, canonical)
	took := a.now().Sub(start)
	if err != nil {
		outcome := "error"
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
		a.observeCall(outcome, took)
		a.breaker.record(false, a.now())
		return api.Danger{Verdict: pdp.Dangerous, By: "error"}
	}
	a.breaker.record(true, a.now())
	safe := strings.EqualFold(strings.TrimSpace(reply), pdp.Safe)
	a.observeCall(strings.ToLower(verdictOf(safe)), took)
	a.cache.put(key, safe, a.now())
	return api.Danger{Verdict: verdictOf(safe), By: "llm"}
}

func (a *Assessor) observeCall(outcome string, took time.Duration) {
	if a.cfg.Observer != nil {
		a.cfg.Observer.Called(outcome, took)
	}
}

func verdictOf(safe bool) string {
	if safe {
		return pdp.Safe
	}
	return pdp.Dangerous
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
	} `json:"choices"`
}

// chat sends one classification request and returns the model's text.
// Anything but a well-formed answer with content is an error.
func (a *Assessor) chat(ctx context.Context, model, command string) (string, error) {
	body, err := json.Marshal(chatRequest{
		Model: model,
		Messages: []chatMessage{
			{Role: "system", Content: systemPrompt},
			{Role: "user", Content: userMessage(command)},
		},
		Temperature: 0,
		MaxTokens:   a.cfg.MaxTokens,
	})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(a.cfg.URL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+a.cfg.APIKey)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("chat completions: HTTP %d", resp.StatusCode)
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("chat completions: %w", err)
	}
	if len(out.Choices) == 0 {
		return "", errors.New("chat completions: no choices")
	}
	msg := out.Choices[0].Message
	if msg.Refusal != nil && *msg.Refusal != "" {
		return "REFUSED", nil // a refusal is an answer, and not SAFE
	}
	if msg.Content == nil {
		return "", errors.New("chat completions: no content")
	}
	return *msg.Content, nil
}
