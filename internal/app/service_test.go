package app_test

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
	"time"

	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	"github.com/toolperm/pdp/internal/policytest"
)

func testConfig(t *testing.T) config.Config {
	cfg := config.Default()
	dir := t.TempDir()
	cfg.DB.Path = filepath.Join(dir, "pdp.db")
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.DecisionLog.Path = filepath.Join(dir, "decisions.log")
	return cfg
}

var quiet = app.Options{Logger: slog.New(slog.DiscardHandler)}

// A configuration that fails after the store is open closes what was
// built: the SQLite file's lock is released, so the next start succeeds.
func TestAFailedStartClosesWhatItOpened(t *testing.T) {
	cfg := testConfig(t)
	bad := cfg
	bad.DecisionLog.Path = filepath.Join(t.TempDir(), "missing", "dir", "decisions.log")
	if s, err := app.New(context.Background(), bad, quiet); err == nil {
		s.Close()
		t.Fatal("a decision log in a missing directory started")
	}
	s, err := app.New(context.Background(), cfg, quiet)
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
	s, err := app.New(ctx, cfg, quiet)
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
	again, err := app.New(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.Store.Decision(context.Background(), d.DecisionID); err != nil {
		t.Fatalf("decision %s not in the trail after a restart: %v", d.DecisionID, err)
	}
}

// GET /v1/policy of a server watching a policy directory: a version that
// does not compile is refused and shown as last_error while it stands;
// once a good version follows, or the source holds the active policy
// again after a failed read, last_error is null, as an operator checking
// that a fix took reads it.
func TestPolicyStatusShowsAnErrorOnlyWhileItStands(t *testing.T) {
	dir := policytest.Dir(t, func(map[string]any) {})
	cfg := testConfig(t)
	cfg.Policy.Path, cfg.Policy.PollInterval = dir, 50*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	s, err := app.New(ctx, cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ready) }()
	defer func() {
		cancel()
		<-done
		s.Close()
	}()
	addr := <-ready
	type status struct {
		Revision  string `json:"revision"`
		Kind      string `json:"kind"`
		LastError *struct {
			Message string `json:"message"`
		} `json:"last_error"`
	}
	get := func() status {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/v1/policy")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/policy: %d %v", resp.StatusCode, err)
		}
		return st
	}
	waitFor := func(what string, cond func(status) bool) status {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st := get()
			if cond(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: GET /v1/policy still shows %+v", what, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := get()
	if first.Kind != "directory" || first.Revision == "" || first.LastError != nil {
		t.Fatalf("at start: %+v", first)
	}

	// A broken version is refused and shown; the old revision serves.
	write("broken.rego", "package toolperm\n\nbroken := {\n")
	refused := waitFor("refusing the broken version", func(st status) bool { return st.LastError != nil })
	if refused.Revision != first.Revision {
		t.Fatalf("a refused version changed the revision: %+v", refused)
	}

	// A good version after it: activated, and the error is gone.
	if err := os.Remove(filepath.Join(dir, "broken.rego")); err != nil {
		t.Fatal(err)
	}
	write("extra.rego", "package toolperm\n\nextra_rule_for_a_new_revision := true\n")
	fixed := waitFor("activating the good version", func(st status) bool { return st.Revision != first.Revision })
	if fixed.LastError != nil {
		t.Fatalf("after a good version was activated, last_error still shows %q", fixed.LastError.Message)
	}

	// A read that fails on the way (the directory moved away and back,
	// as a deploy replacing it does) shows while it stands, and is gone
	// once the source holds the active policy again.
	away := dir + ".away"
	if err := os.Rename(dir, away); err != nil {
		t.Fatal(err)
	}
	waitFor("seeing the directory gone", func(st status) bool { return st.LastError != nil })
	if err := os.Rename(away, dir); err != nil {
		t.Fatal(err)
	}
	back := waitFor("seeing the directory back", func(st status) bool { return st.LastError == nil })
	if back.Revision != fixed.Revision {
		t.Fatalf("the same content changed the revision: %+v, was %+v", back, fixed)
	}
}
