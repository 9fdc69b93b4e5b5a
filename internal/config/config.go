// Package config reads config.yaml and lets environment variables
// PDP_<KEY PATH> (upper case, "." → "_") override any key of it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration; config.yaml holds the defaults.
type Config struct {
	Server   Server   `yaml:"server"`
	DB       DB       `yaml:"db"`
	Policy   Policy   `yaml:"policy"`
	Paths    Paths    `yaml:"paths"`
	Sessions Sessions `yaml:"sessions"`
	Assessor Assessor `yaml:"assessor"`
	Auth     Auth     `yaml:"auth"`
	Metrics  Metrics  `yaml:"metrics"`
	Log      Log      `yaml:"log"`
	// DecisionLog exports every decision in OPA's decision-log format.
	DecisionLog DecisionLog `yaml:"decision_log"`
	// Audit bounds the audit trail in the database.
	Audit Audit `yaml:"audit"`
	// Asks bounds how long an ask waits for a person.
	Asks Asks `yaml:"asks"`
	// Notify tells people of asks where they are.
	Notify Notify `yaml:"notify"`
	// OTel exports a trace of each decision over OTLP.
	OTel OTel `yaml:"otel"`
}

// OTel is where traces go (docs/operations.md, "OpenTelemetry"): the
// keys of OpenTelemetry's OTEL_EXPORTER_OTLP_* variables, each used
// only where its variable is unset. Off without an endpoint.
type OTel struct {
	// ExporterOTLPEndpoint is the collector's base URL
	// (OTEL_EXPORTER_OTLP_ENDPOINT); http/protobuf adds /v1/traces.
	ExporterOTLPEndpoint string `yaml:"exporter_otlp_endpoint"`
	// ExporterOTLPTracesEndpoint is the URL traces are sent to as it is
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
	ExporterOTLPTracesEndpoint string `yaml:"exporter_otlp_traces_endpoint"`
	// ExporterOTLPProtocol is grpc or http/protobuf (the default)
	// (OTEL_EXPORTER_OTLP_PROTOCOL).
	ExporterOTLPProtocol string `yaml:"exporter_otlp_protocol"`
}

// Notify sends the live feed's events to webhooks, Slack and programs
// (docs/operations.md, "Notifications").
type Notify struct {
	// ConsoleURL is the console's address as people reach it, which the
	// events link to; empty: http:// and server.addr.
	ConsoleURL string       `yaml:"console_url"`
	Sinks      []NotifySink `yaml:"sinks"`
}

// NotifySink is one destination of notifications.
type NotifySink struct {
	Name string `yaml:"name"`
	// Kind is webhook, slack or command.
	Kind string `yaml:"kind"`
	URL  string `yaml:"url"`
	// SecretEnv names the environment variable holding a webhook's
	// signing secret.
	SecretEnv string `yaml:"secret_env"`
	// Command is the program and its arguments a command sink runs.
	Command []string `yaml:"command"`
	// Events: ask, answer, expired, level.
	Events      []string      `yaml:"events"`
	Filter      NotifyFilter  `yaml:"filter"`
	Timeout     time.Duration `yaml:"timeout"`
	MaxAttempts int           `yaml:"max_attempts"`
	Backoff     time.Duration `yaml:"backoff"`
	Queue       int           `yaml:"queue"`
	// QueueBytes bounds the bytes of the events waiting (default 8 MiB).
	QueueBytes int `yaml:"queue_bytes"`
	// AnswerLinks puts one-time answer links (allow_once, deny) in each
	// ask; AllowGrants adds allow_session and allow_project.
	AnswerLinks bool `yaml:"answer_links"`
	AllowGrants bool `yaml:"allow_grants"`
}

// NotifyFilter selects a sink's events; empty fields select everything.
type NotifyFilter struct {
	SessionPrefix    string `yaml:"session_prefix"`
	CapabilityPrefix string `yaml:"capability_prefix"`
	Source           string `yaml:"source"`
}

// Asks is the life of an unanswered ask.
type Asks struct {
	// ExpireAfter is how long an ask waits for a person's answer before
	// the PDP answers it expired (a deny); 0 never.
	ExpireAfter time.Duration `yaml:"expire_after"`
}

// Audit is the retention of the audit trail.
type Audit struct {
	// Retention is how long a decision event is kept; 0 keeps every one.
	Retention time.Duration `yaml:"retention"`
	// SweepInterval is how often expired events are deleted.
	SweepInterval time.Duration `yaml:"sweep_interval"`
}

// DecisionLog exports every decision as a JSON line in OPA's
// decision-log event format; off without a path.
type DecisionLog struct {
	// Path is the file lines are appended to, or "-" for standard output.
	Path string `yaml:"path"`
	// Mask lists argument keys whose values are written as "***", at any
	// depth, whatever their case.
	Mask []string `yaml:"mask"`
	// ReplicaID is the events' labels.id; empty: the host name.
	ReplicaID string `yaml:"replica_id"`
}

// Auth holds the bearer tokens and the sign-in of people; neither means
// no access control, which the server allows on loopback only.
type Auth struct {
	Tokens []Token `yaml:"tokens"`
	// OIDC signs people in with the organisation's OpenID Connect
	// provider; off without an issuer.
	OIDC OIDC `yaml:"oidc"`
}

// OIDC is the organisation's OpenID Connect provider (docs/operations.md,
// "Signing in with OpenID Connect").
type OIDC struct {
	// Issuer is the provider's issuer URL (https, or http on loopback).
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecretEnv names the variable holding the client's secret;
	// empty: a public client (PKCE alone).
	ClientSecretEnv string `yaml:"client_secret_env"`
	// RedirectURL is /auth/callback as browsers reach it; empty:
	// notify.console_url (else http://server.addr) + /auth/callback.
	RedirectURL string   `yaml:"redirect_url"`
	Scopes      []string `yaml:"scopes"`
	// RolesClaim names the claim whose values are mapped (default groups).
	RolesClaim string `yaml:"roles_claim"`
	// Roles maps each value of the roles claim to roles: user, auditor,
	// admin (never dispatcher).
	Roles map[string][]string `yaml:"roles"`
	// Audience is the aud a presented token must carry (default client_id).
	Audience string     `yaml:"audience"`
	Cookie   OIDCCookie `yaml:"cookie"`
	// DiscoveryTimeout bounds reading the provider's discovery document
	// at start; serve refuses to start without it.
	DiscoveryTimeout time.Duration `yaml:"discovery_timeout"`
}

// OIDCCookie is the session cookie of a signed-in person.
type OIDCCookie struct {
	// Lifetime is how long a sign-in lasts (default 8h).
	Lifetime time.Duration `yaml:"lifetime"`
	// KeyEnv names the variable holding the key the cookies are signed
	// with (32 bytes or more); empty: a random key per process, so a
	// restart signs everyone out and replicas do not share sign-ins.
	KeyEnv string `yaml:"key_env"`
}

// Token is one bearer token: its name, roles, and exactly one of its
// SHA-256 (hex), an environment variable or a file holding it.
type Token struct {
	Name   string   `yaml:"name"`
	Roles  []string `yaml:"roles"`
	SHA256 string   `yaml:"sha256"`
	Env    string   `yaml:"env"`
	File   string   `yaml:"file"`
}

// Metrics says where /metrics is served.
type Metrics struct {
	// Addr is a separate listen address for /metrics; empty serves it on
	// the API's address.
	Addr string `yaml:"addr"`
}

// Assessor is the LLM danger assessor of the SMART level; off without a URL.
type Assessor struct {
	URL             string        `yaml:"url"`
	Model           string        `yaml:"model"`
	APIKeyEnv       string        `yaml:"api_key_env"`
	Timeout         time.Duration `yaml:"timeout"`
	MaxTokens       int           `yaml:"max_tokens"`
	CacheSize       int           `yaml:"cache_size"`
	CacheTTL        time.Duration `yaml:"cache_ttl"`
	MaxCommandBytes int           `yaml:"max_command_bytes"`
	BreakerFailures int           `yaml:"breaker_failures"`
	BreakerCooldown time.Duration `yaml:"breaker_cooldown"`
}

// Server is the HTTP listener.
type Server struct {
	Addr            string        `yaml:"addr"`
	MaxBodyBytes    int64         `yaml:"max_body_bytes"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	MaxWait         time.Duration `yaml:"max_wait"`
	// ReadTimeout bounds reading one request, headers and body; a client
	// trickling its body is cut when it ends. It does not cover the
	// answer, so a ?wait= long poll still runs to max_wait.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// IdleTimeout closes a kept-alive connection with no request for this long.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// TrustedProxies are the peers (CIDRs or addresses) whose
	// X-Forwarded-For names the real remote; none: the socket's peer.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// DecisionTimeout bounds each decision's store work: reading (or
	// creating) its session tree, and committing its audit event. Past it
	// the answer is a 503 and nothing of the decision is written.
	DecisionTimeout time.Duration `yaml:"decision_timeout"`
	// TLSCertFile (a PEM certificate, its chain after it) and TLSKeyFile
	// (its PEM key) serve the API over TLS 1.2 or later, reread on SIGHUP
	// and when the files change; empty: plain HTTP.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
	// AllowPlaintext lets a server with tokens listen off loopback
	// without TLS: for a proxy in front that terminates TLS.
	AllowPlaintext bool `yaml:"allow_plaintext"`
}

// DB is the database of sessions, grants and the audit trail.
type DB struct {
	// Path is a SQLite file, or a postgres:// (postgresql://) URL of the
	// PostgreSQL database replicas share.
	Path string `yaml:"path"`
	// MaxConns bounds this process's PostgreSQL connections (default 10);
	// SQLite ignores it.
	MaxConns int `yaml:"max_conns"`
}

// Policy says which policy to serve and how to trust it.
type Policy struct {
	// Path is a directory, a bundle .tar.gz, an http(s) URL of a bundle,
	// or empty for the built-in policy.
	Path string `yaml:"path"`
	// PollInterval is how often the source is checked for a new version.
	PollInterval time.Duration `yaml:"poll_interval"`
	// EvalTimeout bounds one evaluation; past it the decision is deny.
	EvalTimeout    time.Duration `yaml:"eval_timeout"`
	MaxBundleBytes int64         `yaml:"max_bundle_bytes"`
	// MemoBytes bounds the memory of the memo of policy answers.
	MemoBytes int64 `yaml:"memo_bytes"`
	// SubmemoBytes bounds the memory of the results of functions kept
	// across evaluations.
	SubmemoBytes int64        `yaml:"submemo_bytes"`
	Verification Verification `yaml:"verification"`
}

// Verification configures bundle signature verification; off without a key.
type Verification struct {
	// KeyFile is the PEM public key (or HMAC secret) bundles are signed for.
	KeyFile   string `yaml:"key_file"`
	KeyID     string `yaml:"key_id"`
	Algorithm string `yaml:"algorithm"`
	Scope     string `yaml:"scope"`
}

// Paths configures the workspace check.
type Paths struct {
	FollowSymlinks bool `yaml:"follow_symlinks"`
	// MaxElements bounds the elements of one path argument (400 past it).
	MaxElements int `yaml:"max_elements"`
	// MaxLookups bounds the file-system lookups of one call (400 past it).
	MaxLookups int `yaml:"max_lookups"`
	// CaseInsensitive makes path rules match without regard to case, as a
	// file system that ignores case opens ".ENV" for ".env". Default: on
	// for macOS and Windows, off elsewhere.
	CaseInsensitive bool `yaml:"case_insensitive"`
	// ProjectPolicy says where a session's project layer
	// (.toolperm/policy.json) comes from: auto (the workspace's file where
	// the workspace is a directory on this host, else the copy the hook
	// sends), workspace, hook or off.
	ProjectPolicy string `yaml:"project_policy"`
}

// caseInsensitiveHost says whether this system's file systems ignore
// case by default.
func caseInsensitiveHost() bool { return runtime.GOOS == "darwin" || runtime.GOOS == "windows" }

// Sessions holds the defaults of sessions created without them.
type Sessions struct {
	PermissionLevel string `yaml:"permission_level"`
	Mode            string `yaml:"mode"`
}

// Log configures the service's log.
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// DefaultRetention keeps 30 days of decision events: an incident found
// weeks later can still be traced and a monthly review has its month,
// and the file stays bounded (about 600 bytes an event: a developer's
// few thousand calls a day are tens of MB; a hundred agents calling once
// a second, about 5 GB a day, should set a shorter one). Longer records
// belong in the decision log export.
const DefaultRetention = 30 * 24 * time.Hour

// Default is the configuration when no file is given; config.yaml as
// shipped says the same.
func Default() Config {
	return Config{
		Server: Server{Addr: "127.0.0.1:8181", MaxBodyBytes: 1 << 20, ShutdownTimeout: 10 * time.Second, MaxWait: 60 * time.Second,
			ReadTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, TrustedProxies: []string{}, DecisionTimeout: 2 * time.Second},
		DB: DB{Path: "pdp.db", MaxConns: 10},
		Policy: Policy{PollInterval: 5 * time.Second, EvalTimeout: time.Second, MaxBundleBytes: 16 << 20, MemoBytes: 64 << 20, SubmemoBytes: 32 << 20,
			Verification: Verification{KeyID: "default", Algorithm: "RS256"}},
		Paths: Paths{FollowSymlinks: true, MaxElements: 256, MaxLookups: 8192, CaseInsensitive: caseInsensitiveHost(), ProjectPolicy: "auto"},
		Sessions: Sessions{
			PermissionLevel: "READ_ONLY",
			Mode:            "on-demand",
		},
		Assessor: Assessor{
			Timeout: 6 * time.Second, MaxTokens: 4, CacheSize: 10000, CacheTTL: time.Hour,
			MaxCommandBytes: 4096, BreakerFailures: 5, BreakerCooldown: 30 * time.Second,
		},
		Auth: Auth{Tokens: []Token{}, OIDC: OIDC{Scopes: []string{"openid", "email", "profile"}, RolesClaim: "groups", Roles: map[string][]string{},
			Cookie: OIDCCookie{Lifetime: 8 * time.Hour}, DiscoveryTimeout: 10 * time.Second}},
		Log:         Log{Level: "info", Format: "text"},
		DecisionLog: DecisionLog{Mask: []string{}},
		Audit:       Audit{Retention: DefaultRetention, SweepInterval: time.Minute},
		Asks:        Asks{ExpireAfter: 24 * time.Hour},
		Notify:      Notify{Sinks: []NotifySink{}},
	}
}

// Load reads path over the defaults (a missing file is an error only when
// required), then applies PDP_* environment overrides from environ.
func Load(path string, required bool, environ []string) (Config, error) {
	cfg, _, _, err := LoadChecked(path, required, environ)
	return cfg, err
}

// LoadChecked reads the configuration as Load does, and says where each
// key was set (Origin) and which PDP_ variables look like settings but
// name none (warnings). Every problem of the file's keys and of the
// variables' values is in the one *Error it returns.
func LoadChecked(path string, required bool, environ []string) (Config, Origin, []string, error) {
	cfg := Default()
	c := configCheck{Origin: Origin{File: path, lines: map[string]int{}, fromEnv: map[string]bool{}}}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		c.yaml(b)
	case errors.Is(err, fs.ErrNotExist) && !required:
		b = nil
	default:
		return cfg, c.Origin, nil, fmt.Errorf("config: %w", err)
	}
	c.environment(environ)
	if len(c.problems) > 0 {
		return cfg, c.Origin, nil, &Error{Problems: c.problems}
	}
	if b != nil {
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) { // an empty file is the defaults
			return cfg, c.Origin, nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := applyEnv(&cfg, environ); err != nil {
		return cfg, c.Origin, nil, err
	}
	return cfg, c.Origin, unknownVariables(cfg, environ), nil
}

// applyEnv sets every key that has a PDP_<PATH> variable.
func applyEnv(cfg *Config, environ []string) error {
	env := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "PDP_") {
			env[k] = v
		}
	}
	if len(env) == 0 {
		return nil
	}
	return walk(reflect.ValueOf(cfg).Elem(), "PDP", env)
}

func walk(v reflect.Value, prefix string, env map[string]string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + "_" + strings.ToUpper(strings.ReplaceAll(tag, ".", "_"))
		field := v.Field(i)
		if field.Kind() == reflect.Struct {
			if err := walk(field, key, env); err != nil {
				return err
			}
			continue
		}
		raw, ok := env[key]
		if !ok {
			continue
		}
		if err := set(field, raw); err != nil {
			return fmt.Errorf("environment %s=%q: %w", key, raw, err)
		}
	}
	return nil
}

func set(field reflect.Value, raw string) error {
	switch field.Interface().(type) {
	case time.Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		field.SetInt(int64(d))
		return nil
	}
	switch field.Kind() {
	case reflect.String:
		field.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		field.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return err
		}
		field.SetInt(n)
	case reflect.Slice:
		if field.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported list type %s", field.Type())
		}
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		field.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported type %s", field.Type())
	}
	return nil
}
