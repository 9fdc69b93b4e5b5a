package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/config"
)

// serveInProcess runs serve on a free loopback port with short timeouts
// and returns its address.
func serveInProcess(t *testing.T, configure func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.DB.Path = filepath.Join(t.TempDir(), "pdp.db")
	cfg.Log.Level = "error"
	configure(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ready) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case addr := <-ready:
		return addr
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start within 30s")
	}
	return ""
}

// cutWithin reports whether the server closes conn within limit while
// trickle keeps sending a byte every interval.
func cutWithin(t *testing.T, conn net.Conn, limit, interval time.Duration) bool {
	t.Helper()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, conn) // returns at EOF or a reset: the server hung up
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

func TestSlowRequestsAreCut(t *testing.T) {
	addr := serveInProcess(t, func(c *config.Config) {
		c.Server.ReadTimeout = time.Second
		c.Server.IdleTimeout = time.Second
	})
	cases := map[string]string{
		// The reproduction: the headers arrive at once, the body a byte at a time.
		"a trickled body": "POST /v1/decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{",
		// The headers themselves, a byte at a time.
		"trickled headers": "POST /v1/decide HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
		// A chunked body that never ends.
		"a trickled chunked body": "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n100\r\n",
	}
	for name, start := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, start); err != nil {
				t.Fatal(err)
			}
			// A byte every 300ms would take two minutes to finish; a 1s
			// read timeout must cut it long before the 10s we wait.
			if !cutWithin(t, conn, 10*time.Second, 300*time.Millisecond) {
				t.Fatal("the connection was still open after 10s with a 1s read timeout")
			}
		})
	}
	t.Run("an idle kept-alive connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		rd := bufio.NewReader(conn)
		resp, err := http.ReadResponse(rd, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("health: %v %v", resp, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := rd.ReadByte(); err == nil || isTimeout(err) {
			t.Fatalf("an idle connection was not closed after a 1s idle timeout: %v", err)
		}
	})
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestLongPollsOutliveTheReadTimeout: the read timeout covers reading a
// request, not the answer, so ?wait= still runs to its end.
func TestLongPollsOutliveTheReadTimeout(t *testing.T) {
	addr := serveInProcess(t, func(c *config.Config) {
		c.Server.ReadTimeout = 500 * time.Millisecond
		c.Server.MaxWait = 10 * time.Second
	})
	base := "http://" + addr
	resp, err := http.Post(base+"/v1/decide", "application/json",
		strings.NewReader(`{"session_id":"lp","tool":"shell","args":{"command":"make check"},"cwd":"/w"}`))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		DecisionID string `json:"decision_id"`
		Decision   string `json:"decision"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if d.Decision != "ask" {
		t.Fatalf("decision %+v", d)
	}
	start := time.Now()
	resp, err = http.Get(base + "/v1/decisions/" + d.DecisionID + "?wait=2s")
	if err != nil {
		t.Fatalf("a 2s long poll with a 0.5s read timeout: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || time.Since(start) < 2*time.Second {
		t.Fatalf("long poll: %d after %v", resp.StatusCode, time.Since(start))
	}
}
