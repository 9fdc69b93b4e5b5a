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

func TestEnvironmentOverridesEveryKind(t *testing.T) {
	cfg, err := Load("missing.yaml", false, []string{
		"PDP_SERVER_ADDR=0.0.0.0:9000",
		"PDP_SERVER_MAX_BODY_BYTES=42",
		"PDP_SERVER_SHUTDOWN_TIMEOUT=3s",
		"PDP_DB_PATH=/tmp/x.db",
		"PDP_PATHS_FOLLOW_SYMLINKS=false",
		"HOME=/root",
	})
	if err != nil {
		t.Fatal(err)
	}
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
