package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolperm/pdp/adapters/notify"
	"github.com/toolperm/pdp/adapters/otlp"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/tlsserve"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/store/postgres"
)

// Problem is a value of the configuration New refuses: its key (the
// YAML path, as config.Origin spells it) and what is wrong.
type Problem struct{ Key, Msg string }

// Check lists every value of cfg that New refuses, without opening,
// starting or binding anything: the sessions' level and mode, the log,
// addresses and proxies, timeouts and bounds, tokens, TLS and its files,
// the policy source, the assessor and the notification sinks (a
// webhook's secret read through getenv). New calls it before it builds
// anything, and `pdp config check` prints it, so the two refuse the
// same configurations.
func Check(cfg config.Config, getenv func(string) string) []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if err := pdp.ValidateSession(&pdp.SessionTree{PermissionLevel: api.Level(cfg.Sessions.PermissionLevel), Mode: api.Mode(config.Default().Sessions.Mode)}); err != nil {
		add("sessions.permission_level", "%q: want READ_ONLY, READ_WRITE, SMART or FULL", cfg.Sessions.PermissionLevel)
	}
	if err := pdp.ValidateSession(&pdp.SessionTree{PermissionLevel: api.Level(config.Default().Sessions.PermissionLevel), Mode: api.Mode(cfg.Sessions.Mode)}); err != nil {
		add("sessions.mode", "%q: want always-ask, on-demand or allow-all", cfg.Sessions.Mode)
	}
	if _, err := NewLogger(config.Log{Level: cfg.Log.Level}); err != nil {
		add("log.level", "%q: want debug, info, warn or error", cfg.Log.Level)
	}
	if _, err := NewLogger(config.Log{Level: "info", Format: cfg.Log.Format}); err != nil {
		add("log.format", "%q: want text or json", cfg.Log.Format)
	}
	for _, a := range []struct {
		key, addr string
		optional  bool
	}{{"server.addr", cfg.Server.Addr, false}, {"metrics.addr", cfg.Metrics.Addr, true}} {
		if a.addr == "" && a.optional {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			add(a.key, "%q: want HOST:PORT, such as 127.0.0.1:8181", a.addr)
		}
	}
	if _, err := httpapi.ParseTrustedProxies(cfg.Server.TrustedProxies); err != nil {
		add("server.trusted_proxies", "%v", err)
	}
	if cfg.Server.DecisionTimeout <= 0 {
		add("server.decision_timeout", "%v: want a positive duration", cfg.Server.DecisionTimeout)
	}
	if p := pdp.ProjectSource(cfg.Paths.ProjectPolicy); p != "" && !slices.Contains(pdp.ProjectSources, p) {
		add("paths.project_policy", "%q: want auto, workspace, hook or off", cfg.Paths.ProjectPolicy)
	}
	negatives(reflect.ValueOf(cfg), "", add)
	for i, t := range cfg.Auth.Tokens {
		if _, err := Tokens([]config.Token{t}); err != nil {
			add(fmt.Sprintf("auth.tokens[%d]", i), "%s", strings.TrimPrefix(err.Error(), "auth: "))
		}
	}
	checkOIDC(cfg, getenv, add)
	controlled := len(cfg.Auth.Tokens) > 0 || cfg.Auth.OIDC.Issuer != ""
	if !controlled && !httpapi.IsLoopback(cfg.Server.Addr) {
		add("server.addr", "%s is not a loopback address and neither auth.tokens nor auth.oidc is set: serve refuses to listen without access control", cfg.Server.Addr)
	}
	s := tlsserve.SettingsOf(cfg.Server)
	if err := s.Check(cfg.Server.Addr, controlled, httpapi.IsLoopback(cfg.Server.Addr)); err != nil {
		add("server", "%v", err)
	} else if s.CertFile != "" {
		if _, err := tlsserve.Load(s.CertFile, s.KeyFile); err != nil {
			add("server.tls_cert_file", "%v", err)
		}
	}
	if _, err := PolicySource(cfg.Policy); err != nil {
		add("policy", "%v", err)
	}
	if kind := policysource.KindOf(cfg.Policy.Path); kind == policysource.Directory || kind == policysource.Tarball {
		if _, err := os.Stat(cfg.Policy.Path); err != nil {
			add("policy.path", "%v", err)
		}
	}
	if _, err := NewAssessor(cfg.Assessor, nil); err != nil {
		add("assessor", "%v", err)
	}
	if cfg.Audit.Retention < 0 {
		add("audit.retention", "%s: want 0 (keep everything) or a positive duration", cfg.Audit.Retention)
	}
	if cfg.Audit.SweepInterval <= 0 {
		add("audit.sweep_interval", "%s: want a positive duration", cfg.Audit.SweepInterval)
	}
	if cfg.Asks.ExpireAfter < 0 {
		add("asks.expire_after", "%s: want 0 (never) or a positive duration", cfg.Asks.ExpireAfter)
	}
	if postgres.IsURL(cfg.DB.Path) && (cfg.DB.MaxConns < 0 || cfg.DB.MaxConns > 1<<16) {
		add("db.max_conns", "%d: want 1 to 65536 (0: 10)", cfg.DB.MaxConns)
	}
	if _, err := otlp.Resolve(otelSettings(cfg.OTel), getenv); err != nil {
		add("otel", "%v", err)
	}
	if p := cfg.DecisionLog.Path; p != "" {
		if info, err := os.Stat(filepath.Dir(p)); err != nil || !info.IsDir() {
			add("decision_log.path", "%s: its directory %s does not exist", p, filepath.Dir(p))
		}
	}
	names := map[string]int{}
	for i, c := range cfg.Notify.Sinks {
		key := fmt.Sprintf("notify.sinks[%d]", i)
		sink, err := sinkOf(c, getenv)
		if err == nil {
			err = sink.Check()
		}
		if err != nil {
			add(key, "%v", err)
			continue
		}
		if j, taken := names[sink.Name]; taken {
			add(key, "name %q is taken by notify.sinks[%d]", sink.Name, j)
		}
		names[sink.Name] = i
	}
	return ps
}

// negatives flags every negative duration, size or count.
func negatives(v reflect.Value, key string, add func(key, format string, args ...any)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		child := name
		if key != "" {
			child = key + "." + name
		}
		f := v.Field(i)
		switch {
		case f.Kind() == reflect.Struct:
			negatives(f, child, add)
		case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
			if f.Int() < 0 {
				shown := strconv.FormatInt(f.Int(), 10)
				if d, ok := f.Interface().(time.Duration); ok {
					shown = d.String()
				}
				add(child, "%s is negative", shown)
			}
		}
	}
}

// sinkOf is the notification sink a configured one describes, its
// webhook secret read through getenv.
func sinkOf(c config.NotifySink, getenv func(string) string) (notify.Sink, error) {
	s := notify.Sink{Name: c.Name, Kind: c.Kind, URL: c.URL, Command: c.Command, Events: c.Events,
		Filter:  notify.Filter{SessionPrefix: c.Filter.SessionPrefix, CapabilityPrefix: c.Filter.CapabilityPrefix, Source: c.Filter.Source},
		Timeout: c.Timeout, MaxAttempts: c.MaxAttempts, Backoff: c.Backoff, Queue: c.Queue, QueueBytes: c.QueueBytes,
		AnswerLinks: c.AnswerLinks, AllowGrants: c.AllowGrants}
	if c.Kind == notify.Webhook || c.SecretEnv != "" {
		secret, err := notify.SecretFrom(c.SecretEnv, getenv)
		if err != nil {
			return s, fmt.Errorf("sink %s: %w", c.Name, err)
		}
		s.Secret = secret
	}
	return s, nil
}

// CheckError is Check's problems as one error, spelled by origin.
func CheckError(origin config.Origin, ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	e := &config.Error{}
	for _, p := range ps {
		e.Problems = append(e.Problems, origin.Problem(p.Key, p.Msg))
	}
	return e
}
