package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/testserver"
)

// BenchmarkEventsFanOut asks through a real `pdp serve` while none, 1,
// 100 or 1,000 readers follow GET /v1/events: each ask is one POST
// /v1/decide, waited for until every reader has its event. It reports
// the server process's CPU time per ask (server-cpu-ns/op: user and
// system, every thread, read from /proc), which the readers, in this
// process, do not add to; ns/op is the wall time of one ask and its
// fan-out. calls=distinct sends a command never sent before in every
// ask (the policy's memo never answers: the realistic case);
// calls=repeated sends the same one (the memo answers: the ask itself is
// cheapest, so the fan-out's share is largest).
func BenchmarkEventsFanOut(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("reads the server's CPU time from /proc")
	}
	for _, calls := range []string{"distinct", "repeated"} {
		for _, n := range []int{0, 1, 100, 1000} {
			var f *fanOut
			parent := b
			b.Run(fmt.Sprintf("calls=%s/subscribers=%d", calls, n), func(b *testing.B) {
				if f == nil {
					// One server and its readers for every b.N of this
					// case: what is cleaned up after the first b.N belongs
					// to the parent.
					f = startFanOut(parent, b, n)
				}
				f.run(b, calls == "distinct")
			})
			if f != nil {
				f.stop()
			}
		}
	}
}

// BenchmarkEventsFanOutConcurrent is BenchmarkEventsFanOut with the asks
// sent by 16 clients at once, as agents send them, each a command never
// sent before: server-cpu-ns/op is the server's CPU time per ask with
// none or 1,000 readers following GET /v1/events; the run ends when
// every reader has every ask.
func BenchmarkEventsFanOutConcurrent(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("reads the server's CPU time from /proc")
	}
	for _, n := range []int{0, 1000} {
		var f *fanOut
		parent := b
		b.Run(fmt.Sprintf("clients=16/subscribers=%d", n), func(b *testing.B) {
			if f == nil {
				f = startFanOut(parent, b, n)
			}
			f.runConcurrent(b, 16)
		})
		if f != nil {
			f.stop()
		}
	}
}

// fanOut is a `pdp serve` with n readers of its event stream.
type fanOut struct {
	cmd    *exec.Cmd
	url    string
	n      int
	asks   int // asks sent so far, so every distinct command is new
	got    chan struct{}
	cancel context.CancelFunc
	client *http.Client
}

func startFanOut(parent, b *testing.B, n int) *fanOut {
	b.Helper()
	dir := parent.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("log:\n  level: info\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := serveProcess(filepath.Join(dir, "pdp.db"), cfg)
	url, _ := testserver.Process(parent, cmd, 60*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fanOut{cmd: cmd, url: url, n: n, got: make(chan struct{}, n), cancel: cancel,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	streams := &http.Transport{MaxIdleConnsPerHost: -1}
	ready := make(chan error, n)
	for range n {
		go f.read(ctx, streams, ready)
	}
	for range n {
		if err := <-ready; err != nil {
			cancel()
			b.Fatalf("opening an event stream: %v", err)
		}
	}
	return f
}

// read follows the event stream, telling f.got of every ask.
func (f *fanOut) read(ctx context.Context, tr *http.Transport, ready chan<- error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url+"/v1/events", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		ready <- err
		return
	}
	defer resp.Body.Close()
	lines := bufio.NewReader(resp.Body)
	opened := false
	for {
		line, err := lines.ReadSlice('\n')
		if err != nil {
			if !opened {
				ready <- err
			}
			return
		}
		switch {
		case !opened && bytes.Equal(line, []byte("event: ready\n")):
			opened = true
			ready <- nil
		case bytes.Equal(line, []byte("event: ask\n")):
			f.got <- struct{}{}
		}
	}
}

func (f *fanOut) run(b *testing.B, distinct bool) {
	cpu0 := f.serverCPU(b)
	b.ResetTimer()
	for range b.N {
		command := "make check"
		if distinct {
			command = "make docs -j " + strconv.Itoa(f.asks)
		}
		f.asks++
		body := `{"session_id":"fan","tool":"shell","args":{"command":"` + command + `"},"cwd":"/w"}`
		resp, err := f.client.Post(f.url+"/v1/decide", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"decision":"ask"`)) {
			b.Fatalf("decide: %d %s", resp.StatusCode, raw)
		}
		for range f.n {
			<-f.got
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(f.serverCPU(b)-cpu0)/float64(b.N), "server-cpu-ns/op")
}

// runConcurrent sends b.N asks of distinct commands from clients
// goroutines at once, then waits until every reader has every ask.
func (f *fanOut) runConcurrent(b *testing.B, clients int) {
	first := f.asks
	f.asks += b.N
	var next atomic.Int64
	received := make(chan struct{})
	go func() {
		for range b.N * f.n {
			<-f.got
		}
		close(received)
	}()
	cpu0 := f.serverCPU(b)
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				body := `{"session_id":"fan","tool":"shell","args":{"command":"make docs -j ` + strconv.Itoa(first+i) + `"},"cwd":"/w"}`
				resp, err := f.client.Post(f.url+"/v1/decide", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"decision":"ask"`)) {
					errs <- fmt.Errorf("decide: %d %s", resp.StatusCode, raw)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	<-received
	b.StopTimer()
	b.ReportMetric(float64(f.serverCPU(b)-cpu0)/float64(b.N), "server-cpu-ns/op")
}

// serverCPU is the CPU time the server process has used (user and
// system, all its threads), from /proc/<pid>/stat in clock ticks of
// 10 ms (USER_HZ is 100 on Linux).
func (f *fanOut) serverCPU(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", f.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which ends with the last ')':
	// utime and stime are the 14th and 15th of the whole line.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func (f *fanOut) stop() {
	f.cancel()
	_ = f.cmd.Process.Kill()
}
