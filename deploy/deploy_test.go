// Package deploy_test checks the files of deploy/ and the Containerfile:
// the systemd unit with systemd-analyze (where it is installed), the
// compose file and the image's runtime stage by parsing them.
package deploy_test

import (
	"bufio"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/tlsserve"
	"gopkg.in/yaml.v3"
)

// directives reads a systemd unit or a Containerfile into its directives,
// each key with every value it is given, in order.
func directives(t *testing.T, path, sep string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		if k, v, ok := strings.Cut(line, sep); ok {
			out[k] = append(out[k], strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSystemdUnitIsHardened(t *testing.T) {
	unit := directives(t, "pdp.service", "=")
	for key, want := range map[string]string{
		"DynamicUser":           "yes",
		"ProtectSystem":         "strict",
		"StateDirectory":        "pdp",
		"NoNewPrivileges":       "yes",
		"CapabilityBoundingSet": "",
	} {
		if got := unit[key]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%q, want %q", key, got, want)
		}
	}
	if got := unit["ExecStart"]; len(got) != 1 || !strings.HasPrefix(got[0], "/usr/local/bin/pdp serve") {
		t.Errorf("ExecStart %q", got)
	}
	if !strings.Contains(strings.Join(unit["Environment"], " "), "PDP_DB_PATH=/var/lib/pdp/") {
		t.Errorf("the SQLite file is not in the state directory: %q", unit["Environment"])
	}
}

// TestSystemdUnitVerifies runs systemd-analyze verify on the unit, with
// ExecStart pointed at an executable that exists here; any complaint,
// an unknown directive included, fails.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit is only parsed (TestSystemdUnitIsHardened)")
	}
	text, err := os.ReadFile("pdp.service")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pdp.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(text), "/usr/local/bin/pdp", exe)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

type compose struct {
	Services map[string]struct {
		Image string
		Build struct {
			Context    string
			Dockerfile string
		}
		ReadOnly    bool `yaml:"read_only"`
		Environment map[string]string
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
		Volumes     []string
		Ports       []string
		Healthcheck struct{ Test []string }
	}
}

func TestComposeRunsTwoReplicasOnPostgreSQL(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var db string
	var replicas []string
	for name, s := range c.Services {
		switch {
		case strings.Contains(s.Image, "postgres"):
			if db != "" {
				t.Fatalf("two databases: %s and %s", db, name)
			}
			db = name
		case s.Build.Dockerfile == "Containerfile":
			replicas = append(replicas, name)
		}
	}
	if db == "" || len(c.Services[db].Healthcheck.Test) == 0 {
		t.Fatalf("no PostgreSQL service with a health check: %v", c.Services)
	}
	if len(replicas) != 2 {
		t.Fatalf("replicas %v, want two", replicas)
	}
	ids, ports := map[string]bool{}, map[string]bool{}
	for _, name := range replicas {
		s := c.Services[name]
		dsn, err := url.Parse(s.Environment["PDP_DB_PATH"])
		if err != nil || dsn.Scheme != "postgres" || dsn.Hostname() != db {
			t.Errorf("%s: PDP_DB_PATH %q is not the %s service", name, s.Environment["PDP_DB_PATH"], db)
		}
		if s.DependsOn[db].Condition != "service_healthy" {
			t.Errorf("%s starts before %s is healthy (a replica does not start while PostgreSQL is unreachable)", name, db)
		}
		if !s.ReadOnly {
			t.Errorf("%s: the root file system is writable", name)
		}
		if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		ids[s.Environment["PDP_DECISION_LOG_REPLICA_ID"]] = true
		for _, p := range s.Ports {
			ports[p] = true
		}
	}
	if len(ids) != 2 || len(ports) != 2 {
		t.Errorf("the replicas share a replica id or a port: %v %v", ids, ports)
	}
	t.Run("their configuration loads", func(t *testing.T) {
		s := c.Services[replicas[0]]
		var mounted string
		for _, v := range s.Volumes {
			if src, dst, _ := strings.Cut(v, ":"); strings.HasPrefix(dst, "/etc/pdp/config.yaml") {
				mounted = src
			}
		}
		if mounted == "" {
			t.Fatalf("no config.yaml mounted: %v", s.Volumes)
		}
		environ := []string{"PDP_SERVER_ADDR=0.0.0.0:8181"}
		for k, v := range s.Environment {
			if strings.HasPrefix(k, "PDP_") && !strings.HasPrefix(v, "${") {
				environ = append(environ, k+"="+v)
			}
		}
		cfg, err := config.Load(mounted, true, environ)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range cfg.Auth.Tokens {
			if _, set := s.Environment[tok.Env]; tok.Env == "" || !set {
				t.Errorf("token %q: its variable %q is not passed to the replica", tok.Name, tok.Env)
			}
		}
		if len(cfg.Auth.Tokens) == 0 {
			t.Error("no tokens: a replica on 0.0.0.0 refuses to start")
		}
		tls := tlsserve.Settings{CertFile: cfg.Server.TLSCertFile, KeyFile: cfg.Server.TLSKeyFile, AllowPlaintext: cfg.Server.AllowPlaintext}
		if err := tls.Check(cfg.Server.Addr, len(cfg.Auth.Tokens) > 0, false); err != nil {
			t.Errorf("a replica refuses to start: %v", err)
		}
	})
}

// TestContainerfileRuntimeStage checks the stage the image runs: no base
// image, a user other than root, the SQLite file on the volume, pdp serve
// on all addresses. (The build stage pulls a Go image: it is built, not
// checked, here.)
func TestContainerfileRuntimeStage(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(text), "\nFROM ")
	runtime := stages[len(stages)-1]
	path := filepath.Join(t.TempDir(), "runtime")
	if err := os.WriteFile(path, []byte("FROM "+strings.ReplaceAll(runtime, "\\\n", " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	d := directives(t, path, " ")
	check := func(key, want string) {
		t.Helper()
		if got := strings.Join(d[key], "\n"); !strings.Contains(got, want) {
			t.Errorf("%s %q lacks %q", key, got, want)
		}
	}
	check("FROM", "scratch")
	check("USER", "65532:65532")
	check("VOLUME", `"/var/lib/pdp"`)
	check("ENV", "PDP_DB_PATH=/var/lib/pdp/pdp.db")
	check("ENV", "PDP_SERVER_ADDR=0.0.0.0:8181")
	check("ENTRYPOINT", "pdp")
	check("CMD", `"serve"`)
}
