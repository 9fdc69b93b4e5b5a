// Package shellbypass_test holds the acceptance tests for command rules
// against commands the shell analysis cannot read literally: each
// construct is first run in real bash with a fake git on PATH, to show it
// really runs `git push --force`, then decided through POST /v1/decide of
// the real service (the built-in policy, or a copy of it with a policy
// command rule, the real shell parser and path resolver, a SQLite file in
// the test's temporary directory, an HTTP server). A deny or ask command
// rule for `git push --force` must never let such a command be allowed.
package shellbypass_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolperm/pdp/adapters/paths"
	"github.com/toolperm/pdp/adapters/policysource"
	"github.com/toolperm/pdp/adapters/shell"
	"github.com/toolperm/pdp/frontends/httpapi"
	"github.com/toolperm/pdp/pdp"
	"github.com/toolperm/pdp/policies"
	"github.com/toolperm/pdp/store/sqlite"
)

// workspace is every session's workspace and every call's cwd.
const workspace = "/home/u/proj"

// deniedCommand is the command the rules name.
const deniedCommand = "git push --force"

// service is the real API over a real SQLite file behind an httptest
// server, built from the exported constructors as `pdp serve` builds it.
type service struct {
	tb     testing.TB
	url    string
	client *http.Client
}

// startService serves policy on a new SQLite file in tb's temporary
// directory; everything is closed when tb ends.
func startService(tb testing.TB, policy *pdp.Policy, opts sqlite.Options) *service {
	tb.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "pdp.db"), opts)
	if err != nil {
		tb.Fatal(err)
	}
	// A generous evaluation timeout: these tests judge what is decided,
	// not how fast, and a loaded machine must not turn an answer into the
	// fail-closed deny.
	engine := pdp.New(policy, pdp.Components{Audit: store, Shell: shell.Parser{}, Workspace: paths.Resolver{}, EvalTimeout: 30 * time.Second})
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Engine: engine, Store: store}))
	tb.Cleanup(func() {
		srv.Close()
		store.Close()
	})
	return &service{tb: tb, url: srv.URL, client: srv.Client()}
}

// builtinPolicy is the built-in policy, loaded as `pdp serve` loads it
// when no --policies is given.
func builtinPolicy(tb testing.TB) *pdp.Policy {
	tb.Helper()
	p, err := policysource.Load(context.Background(), policysource.Config{Builtin: policies.FS})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// policyWithCommands copies the built-in policy into a directory, sets
// its data.json's "commands" to commands, and loads that directory as
// `pdp serve --policies DIR` does.
func policyWithCommands(tb testing.TB, commands map[string]string) *pdp.Policy {
	tb.Helper()
	dir := tb.TempDir()
	err := fs.WalkDir(policies.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := fs.ReadFile(policies.FS, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), raw, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
	dataPath := filepath.Join(dir, "data.json")
	raw, err := os.ReadFile(dataPath)
	if err != nil {
		tb.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil {
		tb.Fatal(err)
	}
	data["commands"] = commands
	if raw, err = json.MarshalIndent(data, "", "  "); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dataPath, raw, 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := policysource.Load(context.Background(), policysource.Config{Path: dir, Builtin: policies.FS})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// call sends a JSON request and decodes the JSON answer.
func (s *service) call(method, path string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return resp.StatusCode, nil, fmt.Errorf("answer is not JSON: %s", raw)
		}
	}
	return resp.StatusCode, out, nil
}

// mustStatus sends a request and fails the test unless it gets want.
func (s *service) mustStatus(t testing.TB, want int, method, path string, body any) map[string]any {
	t.Helper()
	code, out, err := s.call(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

// createSession creates a session with these fields beside its id and
// the workspace.
func (s *service) createSession(t testing.TB, id string, fields map[string]any) {
	t.Helper()
	body := map[string]any{"id": id, "workspace": workspace}
	for k, v := range fields {
		body[k] = v
	}
	s.mustStatus(t, http.StatusCreated, "POST", "/v1/sessions", body)
}

// decide asks POST /v1/decide about the shell command cmd in a session.
func (s *service) decide(t testing.TB, session, cmd string) map[string]any {
	t.Helper()
	return s.mustStatus(t, http.StatusOK, "POST", "/v1/decide", map[string]any{
		"session_id": session, "tool": "shell", "args": map[string]any{"command": cmd}, "cwd": workspace,
	})
}

// expectDecision fails t unless d is decision from source.
func expectDecision(t testing.TB, d map[string]any, decision, source string) {
	t.Helper()
	if d["decision"] != decision || d["source"] != source {
		t.Fatalf("got %v/%v (%v, rule %v), want %s/%s", d["decision"], d["source"], d["reason"], d["rule"], decision, source)
	}
}

// sandbox runs shell text in real bash: a fake git first on PATH records
// each call's arguments in a file of its own under calls, the working
// directory and HOME are empty directories of the sandbox, stdin is
// /dev/null, and the environment holds PATH and HOME only.
type sandbox struct {
	root, bin, calls, work, home string
}

// newSandbox builds a sandbox in a new directory of tb's.
func newSandbox(tb testing.TB) *sandbox {
	tb.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		tb.Fatalf("these tests need bash: %v", err)
	}
	mktemp, err := exec.LookPath("mktemp")
	if err != nil {
		tb.Fatalf("the fake git needs mktemp: %v", err)
	}
	root := tb.TempDir()
	s := &sandbox{root: root, bin: filepath.Join(root, "bin"), calls: filepath.Join(root, "calls"), work: filepath.Join(root, "work"), home: filepath.Join(root, "home")}
	for _, d := range []string{s.bin, s.calls} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	// Absolute paths only: the command under test may clear the
	// environment (env -i) and still reach this git through its PATH.
	script := "#!/bin/sh\n" +
		"f=$(" + mktemp + " '" + s.calls + "/call.XXXXXXXX') || exit 1\n" +
		"for a in \"$@\"; do printf '%s\\000' \"$a\"; done > \"$f\"\n"
	if err := os.WriteFile(filepath.Join(s.bin, "git"), []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return s
}

// run runs text with bash -c in the sandbox, killing its process group
// after timeout, and returns the argument lists git was called with.
// extraEnv adds variables to the cleared environment.
func (s *sandbox) run(text string, timeout time.Duration, extraEnv ...string) ([][]string, error) {
	for _, d := range []string{s.calls, s.work, s.home} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", text)
	cmd.Dir = s.work
	cmd.Env = append([]string{"PATH=" + s.bin + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + s.home}, extraEnv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil // /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Start()
	if err != nil {
		return nil, err
	}
	_ = cmd.Wait() // the exit status does not matter, only what git was asked
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	entries, err := os.ReadDir(s.calls)
	if err != nil {
		return nil, err
	}
	var calls [][]string
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(s.calls, e.Name()))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		args := strings.Split(string(raw), "\x00")
		calls = append(calls, args[:len(args)-1]) // each argument ends in NUL
	}
	return calls, nil
}

// pushedForce reports whether one of the calls was git push --force
// (with any further arguments): what the prefix rule names.
func pushedForce(calls [][]string) bool {
	for _, c := range calls {
		if len(c) >= 2 && c[0] == "push" && c[1] == "--force" {
			return true
		}
	}
	return false
}
