package hookflow

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolperm/pdp/api"
)

// TestRemotePassesTraceparentOn: with TRACEPARENT (and TRACESTATE) in
// the hook's environment, its requests to the server carry them as the
// traceparent and tracestate headers; without, none is sent.
func TestRemotePassesTraceparentOn(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for name, env := range map[string]map[string]string{
		"set":   {"TRACEPARENT": parent, "TRACESTATE": "vendor=x"},
		"unset": {"TRACEPARENT": "", "TRACESTATE": ""},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range env {
				t.Setenv(k, v)
			}
			got := make(chan http.Header, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got <- r.Header.Clone()
				http.Error(w, `{"error":"x","message":"x"}`, http.StatusServiceUnavailable)
			}))
			defer srv.Close()
			_, _ = NewRemote(srv.URL, "tok", nil).Decide(context.Background(), api.DecideRequest{SessionID: "s", Tool: "shell"})
			h := <-got
			if h.Get("traceparent") != env["TRACEPARENT"] || h.Get("tracestate") != env["TRACESTATE"] {
				t.Fatalf("traceparent %q, tracestate %q; want %q, %q", h.Get("traceparent"), h.Get("tracestate"), env["TRACEPARENT"], env["TRACESTATE"])
			}
		})
	}
}
