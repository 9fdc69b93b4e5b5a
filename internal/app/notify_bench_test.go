package app_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
)

// BenchmarkDecideWhileSinksFail measures POST /v1/decide of asks through
// a running service, without notifications and with three sinks that
// fail (one down, one that holds each request 30 s, one that answers
// 500): the p50 and p99 of a decision should not move, since the sinks
// only read the live feed.
//
//	go test ./internal/app -run '^$' -bench DecideWhileSinksFail -benchtime 2000x
func BenchmarkDecideWhileSinksFail(b *testing.B) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}))
	defer slow.Close()
	five := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }))
	defer five.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String()
	ln.Close()
	b.Setenv("PDP_BENCH_NOTIFY_SECRET", "bench-secret-0123456789")
	failing := []config.NotifySink{
		{Name: "down", Kind: "webhook", URL: down, SecretEnv: "PDP_BENCH_NOTIFY_SECRET", Events: []string{"ask"}},
		{Name: "slow", Kind: "webhook", URL: slow.URL, SecretEnv: "PDP_BENCH_NOTIFY_SECRET", Events: []string{"ask"}},
		{Name: "five", Kind: "webhook", URL: five.URL, SecretEnv: "PDP_BENCH_NOTIFY_SECRET", Events: []string{"ask"}},
	}
	for _, c := range []struct {
		name  string
		sinks []config.NotifySink
	}{{"no-sinks", nil}, {"failing-sinks", failing}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := config.Default()
			cfg.DB.Path = filepath.Join(b.TempDir(), "pdp.db")
			cfg.Server.Addr = "127.0.0.1:0"
			cfg.Notify.Sinks = c.sinks
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := app.New(ctx, cfg, quiet)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ready := make(chan string, 1)
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx, ready) }()
			url := "http://" + <-ready + "/v1/decide"
			client := &http.Client{}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				body := fmt.Sprintf(`{"session_id":"bench","tool":"shell","args":{"command":"make t%d"},"cwd":"/w"}`, i)
				start := time.Now()
				resp, err := client.Post(url, "application/json", strings.NewReader(body))
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatalf("decide: %v %v", resp, err)
				}
				resp.Body.Close()
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			cancel()
			<-done
		})
	}
}
