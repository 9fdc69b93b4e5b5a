package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestShippedConfigIsTheDefault(t *testing.T) {
	cfg, err := Load("../../config.yaml", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("config.yaml differs from Default():\n%+v\n%+v", cfg, Default())
	}
}

// fromEnvironment is the configuration these environment variables give
// without a file.
func fromEnvironment(t *testing.T, env ...string) Config {
	t.Helper()
	cfg, err := Load("missing.yaml", false, env)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestEnvironmentOverridesEveryKind(t *testing.T) {
	cfg := fromEnvironment(t, "PDP_SERVER_ADDR=0.0.0.0:9000", "PDP_SERVER_MAX_BODY_BYTES=42", "PDP_SERVER_SHUTDOWN_TIMEOUT=3s",
		"PDP_DB_PATH=/tmp/x.db", "PDP_PATHS_FOLLOW_SYMLINKS=false", "HOME=/root")
	if cfg.Server.Addr != "0.0.0.0:9000" || cfg.Server.MaxBodyBytes != 42 || cfg.Server.ShutdownTimeout != 3*time.Second || cfg.DB.Path != "/tmp/x.db" || cfg.Paths.FollowSymlinks {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
}

func TestBadInputIsAnError(t *testing.T) {
	if _, err := Load("missing.yaml", false, []string{"PDP_SERVER_MAX_BODY_BYTES=lots"}); err == nil {
		t.Error("a non-number for an int key was accepted")
	}
	if _, err := Load("missing.yaml", true, nil); err == nil {
		t.Error("a missing required file was accepted")
	}
	bad := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(bad, []byte("server:\n  adress: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad, true, nil); err == nil {
		t.Error("an unknown key was accepted")
	}
}

func TestTrustedProxiesAndTimeoutsFromTheEnvironment(t *testing.T) {
	cfg := fromEnvironment(t, "PDP_SERVER_TRUSTED_PROXIES=10.0.0.0/8, 192.0.2.7", "PDP_SERVER_READ_TIMEOUT=5s",
		"PDP_SERVER_IDLE_TIMEOUT=1m", "PDP_POLICY_MEMO_BYTES=1048576")
	if !reflect.DeepEqual(cfg.Server.TrustedProxies, []string{"10.0.0.0/8", "192.0.2.7"}) || cfg.Server.ReadTimeout != 5*time.Second ||
		cfg.Server.IdleTimeout != time.Minute || cfg.Policy.MemoBytes != 1<<20 {
		t.Fatalf("overrides not applied: %+v %+v", cfg.Server, cfg.Policy)
	}
	def := Default()
	if def.Server.ReadTimeout != 30*time.Second || def.Policy.MemoBytes != 64<<20 || len(def.Server.TrustedProxies) != 0 {
		t.Fatalf("defaults: %+v %+v", def.Server, def.Policy)
	}
}
