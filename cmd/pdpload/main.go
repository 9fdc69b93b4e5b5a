// Command pdpload drives POST /v1/decide of a running PDP from many
// clients and reports throughput and latency percentiles.
//
//	go run ./cmd/pdpload -url http://127.0.0.1:8181 -c 32 -d 20s
//	go run ./cmd/pdpload -stream shell    # shell commands never sent before
//	go run ./cmd/pdpload -stream mixed    # a mix in which no input document repeats
//
// Streams: repeated (the default: eight calls over and over, each client
// starting at its own offset), shell (a distinct shell command in every
// request), mixed (reads, writes, greps, MCP calls and distinct shell
// commands, a new session every 16 calls, so no input document repeats),
// large (a distinct ~48 KiB shell command in every request, for memory).
//
// With -bodies FILE (one JSON body per line) and -path it drives any JSON
// endpoint with the stream's positions taken from the file, e.g. an OPA
// server's /v1/data/toolperm/answer with the documents -print-inputs
// gives, for comparison.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8181", "base URL of the PDP")
	clients := flag.Int("c", 32, "concurrent clients")
	duration := flag.Duration("d", 10*time.Second, "how long to send")
	path := flag.String("path", "/v1/decide", "the endpoint to POST to")
	streamName := flag.String("stream", "repeated", "the bodies to send: repeated, shell, mixed or large")
	bodiesFile := flag.String("bodies", "", "a file of JSON bodies, one per line, standing for the stream's bodies 0, 1, 2, …")
	printMix := flag.Bool("print-mix", false, "print the repeated stream's calls, one body per line, and exit")
	printInputs := flag.Int("print-inputs", 0, "print the input documents pdp's built-in policy judges for the stream's first N bodies, as OPA request bodies, and exit")
	flag.Parse()
	s, ok := streams[*streamName]
	if !ok {
		fail(fmt.Errorf("unknown stream %q (repeated, shell, mixed, large)", *streamName))
	}
	switch {
	case *printMix:
		for _, body := range mix {
			fmt.Println(strings.ReplaceAll(body, "{client}", "0"))
		}
		return
	case *printInputs > 0:
		n := *printInputs
		if s.repeats {
			n = min(n, len(mix))
		}
		if err := writeInputs(context.Background(), os.Stdout, s, n, *clients); err != nil {
			fail(err)
		}
		return
	}

	body := func(i int) string { return s.body(i, *clients) }
	var fileBodies []string
	if *bodiesFile != "" {
		var err error
		if fileBodies, err = readBodies(*bodiesFile); err != nil {
			fail(err)
		}
		body = func(i int) string { return fileBodies[i%len(fileBodies)] }
	}
	r := run(*url+*path, *clients, *duration, func(c, k int) (string, bool) {
		i := walk(s, c, k, *clients)
		wrapped := !s.repeats && fileBodies != nil && i >= len(fileBodies)
		return body(i), wrapped
	})
	r.print(s.name, *clients)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pdpload:", err)
	os.Exit(1)
}

func readBodies(file string) ([]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var bodies []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			bodies = append(bodies, line)
		}
	}
	if len(bodies) == 0 {
		return nil, fmt.Errorf("no bodies in %s", file)
	}
	return bodies, nil
}

// result is what a run measured.
type result struct {
	latencies []time.Duration
	statuses  map[int]int
	errors    int
	wrapped   int // requests past the end of a -bodies file (sent again from its start)
	elapsed   time.Duration
}

// run sends from clients goroutines until the duration is over; next
// gives client c's k-th body and whether it repeats an earlier one.
func run(url string, clients int, duration time.Duration, next func(c, k int) (string, bool)) result {
	transport := &http.Transport{MaxIdleConnsPerHost: clients}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	deadline := time.Now().Add(duration)
	var mu sync.Mutex
	r := result{statuses: map[int]int{}}
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var mine []time.Duration
			myStatus := map[int]int{}
			myErrors, myWrapped := 0, 0
			for k := 0; time.Now().Before(deadline); k++ {
				body, wrapped := next(c, k)
				if wrapped {
					myWrapped++
				}
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewBufferString(body))
				if err != nil {
					myErrors++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
				myStatus[resp.StatusCode]++
			}
			mu.Lock()
			r.latencies = append(r.latencies, mine...)
			for k, v := range myStatus {
				r.statuses[k] += v
			}
			r.errors += myErrors
			r.wrapped += myWrapped
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r
}

func (r result) print(stream string, clients int) {
	if len(r.latencies) == 0 {
		fail(fmt.Errorf("no request succeeded; is the server running?"))
	}
	slices.Sort(r.latencies)
	pct := func(p float64) time.Duration { return r.latencies[int(p*float64(len(r.latencies)-1))] }
	rps := float64(len(r.latencies)) / r.elapsed.Seconds()
	fmt.Printf("stream     %s\n", stream)
	fmt.Printf("requests   %d in %s with %d clients (%d connection errors)\n", len(r.latencies), r.elapsed.Round(time.Millisecond), clients, r.errors)
	fmt.Printf("throughput %.0f decisions/s\n", rps)
	fmt.Printf("latency    p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), r.latencies[len(r.latencies)-1])
	fmt.Printf("statuses   %v\n", r.statuses)
	if r.wrapped > 0 {
		fmt.Printf("wrapped    %d requests past the end of the bodies file were sent again from its start\n", r.wrapped)
	}
	fmt.Printf("summary    rps=%.0f p50_us=%d p99_us=%d requests=%d wrapped=%d\n", rps, pct(0.50).Microseconds(), pct(0.99).Microseconds(), len(r.latencies), r.wrapped)
}
