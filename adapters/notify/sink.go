package notify

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The events a sink may ask for.
const (
	EventAsk     = "ask"
	EventAnswer  = "answer"
	EventExpired = "expired"
	EventLevel   = "level"
	// EventPolicy: a policy revision was activated (at start and on each
	// reload that changes it).
	EventPolicy = "policy"
)

// Events are the events a sink may ask for, in the order the docs list
// them.
var Events = []string{EventAsk, EventAnswer, EventExpired, EventLevel, EventPolicy}

// The kinds of sink.
const (
	Webhook = "webhook"
	Slack   = "slack"
	Command = "command"
)

// Defaults of a sink's delivery.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 5
	DefaultBackoff     = time.Second
	DefaultQueue       = 256
	DefaultQueueBytes  = 8 << 20
	// maxBackoff caps the wait between two attempts.
	maxBackoff = time.Minute
)

// Filter selects the events of a sink; empty fields select everything.
// The capability and the source are a decision's: a filter with either
// passes no level change.
type Filter struct {
	SessionPrefix    string
	CapabilityPrefix string
	Source           string
}

// Sink is one destination of notifications, as configured.
type Sink struct {
	// Name names the sink in logs and metrics.
	Name string
	// Kind is Webhook, Slack or Command.
	Kind string
	// URL is where a webhook or Slack sink posts.
	URL string
	// Secret signs a webhook's body (HMAC-SHA256); required for a webhook.
	Secret []byte
	// Command is the program and its arguments a command sink runs.
	Command []string
	// Events are the events it wants (Events).
	Events []string
	Filter Filter
	// Timeout bounds one attempt (default DefaultTimeout).
	Timeout time.Duration
	// MaxAttempts is how often an event is tried before it is dropped
	// (default DefaultMaxAttempts).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each next one up to a minute (default DefaultBackoff).
	Backoff time.Duration
	// Queue and QueueBytes bound the events waiting for the sink
	// (defaults DefaultQueue and DefaultQueueBytes).
	Queue      int
	QueueBytes int
	// AnswerLinks puts one-time answer links for allow_once and deny in
	// each ask (Options.Tickets); AllowGrants adds allow_session and
	// allow_project for a grantable call.
	AnswerLinks bool
	AllowGrants bool
}

var sinkName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// SecretFrom reads a webhook's secret from the environment variable
// named env.
func SecretFrom(env string, getenv func(string) string) ([]byte, error) {
	if env == "" {
		return nil, fmt.Errorf("secret_env is required: the name of the environment variable holding the signing secret")
	}
	secret := getenv(env)
	if len(secret) < 16 {
		return nil, fmt.Errorf("the environment variable %s holds no secret of at least 16 bytes", env)
	}
	return []byte(secret), nil
}

// Check says what is wrong with a sink, and fills in the defaults.
func (s *Sink) Check() error {
	if !sinkName.MatchString(s.Name) {
		return fmt.Errorf("name %q: want 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", s.Name)
	}
	switch s.Kind {
	case Webhook, Slack:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("sink %s: url %q: want an http(s) URL", s.Name, s.URL)
		}
		if s.Kind == Webhook && len(s.Secret) == 0 {
			return fmt.Errorf("sink %s: a webhook needs a secret (secret_env)", s.Name)
		}
		if len(s.Command) > 0 {
			return fmt.Errorf("sink %s: a %s sink takes no command", s.Name, s.Kind)
		}
	case Command:
		if len(s.Command) == 0 || s.Command[0] == "" {
			return fmt.Errorf("sink %s: command: want the program and its arguments, e.g. [notify-send, PDP]", s.Name)
		}
		if s.URL != "" {
			return fmt.Errorf("sink %s: a command sink takes no url", s.Name)
		}
	default:
		return fmt.Errorf("sink %s: kind %q: want webhook, slack or command", s.Name, s.Kind)
	}
	if len(s.Events) == 0 {
		return fmt.Errorf("sink %s: events: want at least one of %s", s.Name, strings.Join(Events, ", "))
	}
	for _, ev := range s.Events {
		if !slices.Contains(Events, ev) {
			return fmt.Errorf("sink %s: event %q: want %s", s.Name, ev, strings.Join(Events, ", "))
		}
	}
	if s.AllowGrants && !s.AnswerLinks {
		return fmt.Errorf("sink %s: allow_grants needs answer_links", s.Name)
	}
	if s.Timeout < 0 || s.MaxAttempts < 0 || s.Backoff < 0 || s.Queue < 0 || s.QueueBytes < 0 {
		return fmt.Errorf("sink %s: timeout, max_attempts, backoff and the queue bounds must not be negative", s.Name)
	}
	s.Timeout = or(s.Timeout, DefaultTimeout)
	s.MaxAttempts = or(s.MaxAttempts, DefaultMaxAttempts)
	s.Backoff = or(s.Backoff, DefaultBackoff)
	s.Queue = or(s.Queue, DefaultQueue)
	s.QueueBytes = or(s.QueueBytes, DefaultQueueBytes)
	return nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// wants says whether the sink takes the event.
func (s *Sink) wants(ev *Event) bool {
	if !slices.Contains(s.Events, ev.Event) {
		return false
	}
	f := s.Filter
	if ev.Event == EventPolicy {
		return true // a policy belongs to no session, capability or source
	}
	if !strings.HasPrefix(ev.SessionID, f.SessionPrefix) {
		return false
	}
	if f.CapabilityPrefix == "" && f.Source == "" {
		return true
	}
	d := ev.decision
	if d == nil {
		return false
	}
	capability := d.Tool
	if d.Capability != nil {
		capability = *d.Capability
	}
	return strings.HasPrefix(capability, f.CapabilityPrefix) && (f.Source == "" || d.Source == f.Source)
}
