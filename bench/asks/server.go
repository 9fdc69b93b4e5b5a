package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// buildPDP builds ./cmd/pdp of the module at root into bin.
func buildPDP(ctx context.Context, root, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pdp")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/pdp: %v\n%s", err, out)
	}
	return nil
}

// exportRev writes the tree of rev into dir (git archive) and returns
// the commit's short name.
func exportRev(ctx context.Context, root, rev, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short=12", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("-rev %s: not a commit of %s", rev, root)
	}
	commit := strings.TrimSpace(string(out))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		return "", fmt.Errorf("git archive %s: %v", commit, err)
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("tar: %v", err)
	}
	return commit, nil
}

// gitCommit names the commit of the tree at root, "+dirty" when it has
// changes; empty outside a git work tree.
func gitCommit(root string) string {
	if root == "" {
		return ""
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "policies", "pdp", "adapters", "frontends", "store", "cmd", "internal", "api").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += "+dirty"
	}
	return c
}

type server struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startPDP starts `pdp serve` on a free loopback port with a fresh
// SQLite database in dir; assessorURL, when set, is its LLM assessor.
func startPDP(ctx context.Context, bin, dir, assessorURL string, verbose bool) (*server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--db", filepath.Join(dir, "pdp.db"))
	cmd.Dir = dir // no config.yaml there: the built-in defaults
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PDP_") {
			env = append(env, kv)
		}
	}
	env = append(env, "PDP_LOG_LEVEL=warn", "PDP_SERVER_DECISION_TIMEOUT=30s")
	if assessorURL != "" {
		env = append(env, "PDP_ASSESSOR_URL="+assessorURL, "PDP_ASSESSOR_MODEL=always-safe", "PDP_ASSESSOR_BREAKER_FAILURES=0")
	}
	cmd.Env = env
	if verbose {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	} else {
		logf, err := os.Create(filepath.Join(dir, "pdp.log"))
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{url: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "pdp.log"))
			return nil, fmt.Errorf("pdp serve exited at start:\n%s", log)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		default:
		}
		resp, err := http.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("pdp serve did not answer /health within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// safeModel is an OpenAI-compatible chat-completions endpoint that
// answers SAFE to every command: the worst model SMART can have.
type safeModel struct {
	srv   *http.Server
	url   string
	calls atomic.Int64
}

func startSafeModel() (*safeModel, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &safeModel{url: "http://" + l.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		m.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "asks", "object": "chat.completion", "model": "always-safe",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "SAFE"}}},
		})
	})
	m.srv = &http.Server{Handler: mux}
	go m.srv.Serve(l)
	return m, nil
}

func (m *safeModel) stop() { m.srv.Close() }
