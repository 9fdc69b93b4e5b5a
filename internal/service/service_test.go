package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/service"
)

func testConfig(t *testing.T) config.Config {
	cfg := config.Default()
	dir := t.TempDir()
	cfg.DB.Path = filepath.Join(dir, "pdp.db")
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.DecisionLog.Path = filepath.Join(dir, "decisions.log")
	return cfg
}

var quiet = service.Options{Logger: slog.New(slog.DiscardHandler)}

// A configuration that fails after the store is open closes what was
// built: the SQLite file's lock is released, so the next start succeeds.
func TestAFailedStartClosesWhatItOpened(t *testing.T) {
	cfg := testConfig(t)
	bad := cfg
	bad.DecisionLog.Path = filepath.Join(t.TempDir(), "missing", "dir", "decisions.log")
	if s, err := service.New(context.Background(), bad, quiet); err == nil {
		s.Close()
		t.Fatal("a decision log in a missing directory started")
	}
	s, err := service.New(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatalf("after a failed start the database stays locked: %v", err)
	}
	s.Close()
}

// Run serves until its context ends; Close then closes the decision log
// before the store it tees, so every answered decision is in both.
func TestRunServesAndCloseWritesEverything(t *testing.T) {
	cfg := testConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := service.New(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ready) }()
	addr := <-ready
	body := `{"session_id":"s1","tool":"read_file","args":{"path":"/w/a"},"cwd":"/w"}`
	resp, err := http.Post("http://"+addr+"/v1/decide", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		DecisionID string `json:"decision_id"`
		Decision   string `json:"decision"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("decide: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Close()
	log, err := os.ReadFile(cfg.DecisionLog.Path)
	if err != nil || !bytes.Contains(log, []byte(d.DecisionID)) {
		t.Fatalf("the decision log lacks %s after Close: %v\n%s", d.DecisionID, err, log)
	}
	// The store was closed (its lock released) and holds the decision.
	again, err := service.New(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Store.Decision(context.Background(), d.DecisionID); err != nil {
		t.Fatalf("decision %s not in the trail after a restart: %v", d.DecisionID, err)
	}
}
