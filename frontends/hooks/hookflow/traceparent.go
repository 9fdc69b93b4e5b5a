package hookflow

import "net/http"

// withTraceparent passes the agent's trace on: when the hook's
// environment has TRACEPARENT (and TRACESTATE), as OpenTelemetry's
// environment carriers name them, every request to the server carries
// them as W3C trace-context headers, so the server's spans of the
// decision (and of the wait for a person) join the agent's trace.
// Without TRACEPARENT, base is returned as it is.
func withTraceparent(base http.RoundTripper, getenv func(string) string) http.RoundTripper {
	parent := getenv("TRACEPARENT")
	if parent == "" {
		return base
	}
	return traceHeaders{base: base, parent: parent, state: getenv("TRACESTATE")}
}

type traceHeaders struct {
	base          http.RoundTripper
	parent, state string
}

func (t traceHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("traceparent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("traceparent", t.parent)
		if t.state != "" {
			r.Header.Set("tracestate", t.state)
		}
	}
	return t.base.RoundTrip(r)
}
