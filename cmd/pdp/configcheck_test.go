package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigCheckAcceptsTheShippedConfig(t *testing.T) {
	if r := runPDPProcess(t, "", "config", "check", repoConfig); r.status != 0 || !strings.Contains(r.stdout, "ok") {
		t.Fatalf("config check of config.yaml:\n%s", r)
	}
}

func TestConfigCheckNamesEachProblemByPathAndVariable(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  []string
		want []string
	}{
		{"an unknown key", "server:\n  adress: 127.0.0.1:1\n", nil,
			[]string{"config.yaml:2: server.adress (PDP_SERVER_ADRESS): unknown key; server has addr, max_body_bytes"}},
		{"an unknown section", "servr:\n  addr: x\n", nil,
			[]string{"config.yaml:1: servr (PDP_SERVR): unknown key; the file has server, db, policy"}},
		{"a number that is not", "server:\n  max_body_bytes: lots\n", nil,
			[]string{`config.yaml:2: server.max_body_bytes (PDP_SERVER_MAX_BODY_BYTES): "lots" is not a whole number`}},
		{"a duration that is not", "policy:\n  eval_timeout: 5\n", nil,
			[]string{`config.yaml:2: policy.eval_timeout (PDP_POLICY_EVAL_TIMEOUT): "5" is not a duration such as 500ms, 30s, 5m or 2h`}},
		{"a mapping where a value goes", "log:\n  level: {a: b}\n", nil,
			[]string{"config.yaml:2: log.level (PDP_LOG_LEVEL): a mapping is not a string"}},
		{"an unknown level", "sessions:\n  permission_level: SUPER\n", nil,
			[]string{`config.yaml:2: sessions.permission_level (PDP_SESSIONS_PERMISSION_LEVEL): "SUPER": want READ_ONLY, READ_WRITE, SMART or FULL`}},
		{"a bad log format", "log:\n  format: xml\n", nil,
			[]string{`config.yaml:2: log.format (PDP_LOG_FORMAT): "xml": want text or json`}},
		{"a token without a source", "auth:\n  tokens:\n    - name: ci\n      roles: [admin]\n", nil,
			[]string{"auth.tokens[0]: ci: give exactly one of sha256, env, file"}},
		{"an unknown token key", "auth:\n  tokens:\n    - name: ci\n      role: [admin]\n", nil,
			[]string{"config.yaml:4: auth.tokens[0].role: unknown key; auth.tokens[0] has name, roles, sha256, env, file"}},
		{"a bad environment value", "", []string{"PDP_SERVER_READ_TIMEOUT=soon"},
			[]string{`environment: PDP_SERVER_READ_TIMEOUT (server.read_timeout): "soon" is not a duration`}},
		{"a bad value from the environment", "", []string{"PDP_SESSIONS_MODE=sometimes"},
			[]string{`environment: sessions.mode (PDP_SESSIONS_MODE): "sometimes": want always-ask, on-demand or allow-all`}},
		{"an open API off loopback", "server:\n  addr: 0.0.0.0:8181\n", nil,
			[]string{"config.yaml:2: server.addr (PDP_SERVER_ADDR): 0.0.0.0:8181 is not a loopback address and neither auth.tokens nor auth.oidc is set"}},
		{"sign-in with an unknown role", "auth:\n  oidc:\n    issuer: https://login.example.com\n    client_id: toolperm\n    roles:\n      staff: [user, approver]\n      robots: [dispatcher]\n", nil,
			[]string{`config.yaml:5: auth.oidc.roles: staff: unknown role "approver" (a person may be user, auditor or admin`,
				`config.yaml:5: auth.oidc.roles: robots: unknown role "dispatcher"`}},
		{"sign-in without an issuer", "auth:\n  oidc:\n    client_id: toolperm\n", nil,
			[]string{"config.yaml: auth.oidc.issuer (PDP_AUTH_OIDC_ISSUER): empty, but auth.oidc is set otherwise"}},
		{"a plain-http issuer off loopback", "", []string{"PDP_AUTH_OIDC_ISSUER=http://login.example.com", "PDP_AUTH_OIDC_CLIENT_ID=toolperm"},
			[]string{`environment: auth.oidc.issuer (PDP_AUTH_OIDC_ISSUER): "http://login.example.com": plain http is taken only on loopback`,
				"auth.oidc.roles: empty: nobody could sign in"}},
		{"sign-in without a client", "auth:\n  oidc:\n    issuer: https://login.example.com\n    roles: {staff: [user]}\n", nil,
			[]string{"auth.oidc.client_id (PDP_AUTH_OIDC_CLIENT_ID): empty: give the client id registered with the provider"}},
		{"a short cookie key", "", []string{"PDP_AUTH_OIDC_ISSUER=https://login.example.com", "PDP_AUTH_OIDC_CLIENT_ID=toolperm", "PDP_AUTH_OIDC_COOKIE_KEY_ENV=PDP_COOKIE_KEY", "PDP_COOKIE_KEY=short"},
			[]string{"auth.oidc.cookie.key_env (PDP_AUTH_OIDC_COOKIE_KEY_ENV): environment variable PDP_COOKIE_KEY holds fewer than 32 bytes"}},
		{"tokens in plaintext off loopback", "server:\n  addr: 0.0.0.0:8181\nauth:\n  tokens:\n    - name: ci\n      roles: [admin]\n      sha256: " + strings.Repeat("ab", 32) + "\n", nil,
			[]string{"server: refusing to take bearer tokens in plaintext on 0.0.0.0:8181", "PDP_SERVER_ALLOW_PLAINTEXT=true"}},
		{"a TLS key without its certificate", "server:\n  tls_key_file: k.pem\n", nil,
			[]string{"server: server.tls_key_file (PDP_SERVER_TLS_KEY_FILE) is set but server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE) is missing"}},
		{"TLS files that are not there", "", []string{"PDP_SERVER_TLS_CERT_FILE=missing.crt", "PDP_SERVER_TLS_KEY_FILE=missing.key"},
			[]string{"environment: server.tls_cert_file (PDP_SERVER_TLS_CERT_FILE): TLS certificate: open missing.crt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeConfig(t, dir, c.yaml)
			cmd := pdpProcess([]string{"config", "check", cfg}, c.env...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			text := strings.ReplaceAll(string(out), cfg, "config.yaml")
			if err == nil {
				t.Fatalf("config check accepted it:\n%s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("want %q in:\n%s", w, text)
				}
			}
			for _, goWord := range []string{"int64", "time.Duration", "config.Config", "unmarshal", "strconv", "!!", "reflect"} {
				if strings.Contains(text, goWord) {
					t.Errorf("the message names Go's %q:\n%s", goWord, text)
				}
			}
		})
	}
}

func TestConfigCheckWithoutAFileIsTheDefaults(t *testing.T) {
	dir := t.TempDir()
	if r := runPDPProcess(t, dir, "config", "check"); r.status != 0 {
		t.Fatalf("config check with no config.yaml (the defaults):\n%s", r)
	}
	if r := runPDPProcess(t, dir, "config", "check", filepath.Join(dir, "missing.yaml")); r.status != 1 {
		t.Fatalf("config check of a named missing file should fail:\n%s", r)
	}
}

// TestConfigCheckAndServeAgree: the files a newcomer wrote get the same
// answer from pdp config check and pdp serve — every problem, in one
// pass, in the same words — and the same warnings.
func TestConfigCheckAndServeAgree(t *testing.T) {
	webhook := "notify:\n  sinks:\n    - name: hook\n      kind: webhook\n      url: https://hooks.example/pdp\n      secret_env: PDP_NOTIFY_SECRET\n      events: [ask]\n"
	cases := []struct {
		name     string
		yaml     string
		env      []string
		problems []string
		warnings []string
	}{
		{"a sink kind misspelt", "notify:\n  sinks:\n    - name: desk\n      kind: webhok\n      url: https://hooks.example/pdp\n      events: [ask]\n", nil,
			[]string{`config.yaml:3: notify.sinks[0]: sink desk: kind "webhok": want webhook, slack or command`}, nil},
		{"a webhook whose secret is unset", webhook, nil,
			[]string{"config.yaml:3: notify.sinks[0]: sink hook:", "PDP_NOTIFY_SECRET"}, nil},
		{"a sweep that never runs", "audit:\n  sweep_interval: 0s\n", nil,
			[]string{"config.yaml:2: audit.sweep_interval (PDP_AUDIT_SWEEP_INTERVAL): 0s: want a positive duration"}, nil},
		{"an OpenTelemetry exporter misspelt", "", []string{"OTEL_TRACES_EXPORTER=otpl"},
			[]string{`otel: OTEL_TRACES_EXPORTER="otpl": want otlp or none`}, nil},
		{"a decision log in no directory", "decision_log:\n  path: /nonexistent-dir/decisions.log\n", nil,
			[]string{"decision_log.path (PDP_DECISION_LOG_PATH): /nonexistent-dir/decisions.log: its directory /nonexistent-dir does not exist"}, nil},
		{"a YAML key misspelt", "server:\n  adr: 127.0.0.1:1\n", nil,
			[]string{"config.yaml:2: server.adr (PDP_SERVER_ADR): unknown key; server has addr"}, nil},
		{"every problem at once, and a variable misspelt", "sessions:\n  permission_level: SUPER\nnotify:\n  sinks:\n    - name: x\n      kind: command\n      events: [ask]\n",
			[]string{"PDP_SERVER_ADR=127.0.0.1:9", "PDP_LOG_FORMAT=xml"},
			[]string{"sessions.permission_level (PDP_SESSIONS_PERMISSION_LEVEL)", "environment: log.format (PDP_LOG_FORMAT)", "notify.sinks[0]: sink x: command"},
			[]string{"environment: PDP_SERVER_ADR is not a setting (server has addr,"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeConfig(t, dir, c.yaml)
			outputs := map[string]string{}
			for _, args := range [][]string{{"config", "check", cfg}, {"serve", "--config", cfg, "--db", filepath.Join(dir, "pdp.db"), "--addr", "127.0.0.1:0"}} {
				cmd := pdpProcess(args, c.env...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				text := strings.ReplaceAll(string(out), cfg, "config.yaml")
				if err == nil {
					t.Fatalf("pdp %s accepted it:\n%s", args[0], text)
				}
				outputs[args[0]] = text
				for _, w := range append(c.problems, c.warnings...) {
					if !strings.Contains(text, w) {
						t.Errorf("pdp %s should say %q:\n%s", args[0], w, text)
					}
				}
			}
			// Each problem line of the check is in serve's refusal.
			for _, line := range strings.Split(outputs["config"], "\n") {
				if strings.Contains(line, ": ") && !strings.HasPrefix(line, "Error") && !strings.HasPrefix(line, "pdp: ") && !strings.HasPrefix(line, "warning: ") &&
					!strings.Contains(outputs["serve"], strings.TrimSpace(line)) {
					t.Errorf("config check says %q; serve does not:\n%s", line, outputs["serve"])
				}
			}
		})
	}

	// The variable a webhook's secret_env names is no unknown setting.
	dir := t.TempDir()
	cfg := writeConfig(t, dir, webhook)
	cmd := pdpProcess([]string{"config", "check", cfg}, "PDP_NOTIFY_SECRET=s3cret-of-32-bytes-or-so-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "warning") {
		t.Fatalf("a webhook with its secret set should check without a warning:\n%s", out)
	}
}
