package app_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolperm/pdp/internal/app"
	"github.com/toolperm/pdp/internal/config"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP trace collector in the test process: the gRPC
// trace service and the HTTP /v1/traces endpoint, keeping every span.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		r.services = append(r.services, attrOf(rs.GetResource().GetAttributes(), "service.name"))
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var in collectortrace.ExportTraceServiceRequest
	if err != nil || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &in) != nil {
		http.Error(w, "not an OTLP protobuf export", http.StatusBadRequest)
		return
	}
	out, _ := r.Export(req.Context(), &in)
	b, _ := proto.Marshal(out)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// startReceiver listens for protocol and returns the endpoint to give
// the exporter.
func startReceiver(t *testing.T, protocol string) (*receiver, string) {
	r := &receiver{}
	if protocol == "grpc" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		collectortrace.RegisterTraceServiceServer(srv, r)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
		return r, "http://" + ln.Addr().String()
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// trace is one trace's spans by name (each name once).
type trace map[string]*tracepb.Span

func (r *receiver) traces(t *testing.T) map[string]trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]trace{}
	for _, s := range r.spans {
		id := hex.EncodeToString(s.TraceId)
		if out[id] == nil {
			out[id] = trace{}
		}
		if out[id][s.Name] != nil {
			t.Fatalf("trace %s has two spans %q", id, s.Name)
		}
		out[id][s.Name] = s
	}
	return out
}

func attrOf(attrs []*commonpb.KeyValue, key string) string {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

func hasAttr(attrs []*commonpb.KeyValue, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// wantChild fails unless tr has a span name whose parent is the span
// parent.
func wantChild(t *testing.T, tr trace, parent, name string) *tracepb.Span {
	t.Helper()
	s, p := tr[name], tr[parent]
	if s == nil || p == nil {
		t.Fatalf("trace has no %q under %q: %v", name, parent, spanNames(tr))
	}
	if hex.EncodeToString(s.ParentSpanId) != hex.EncodeToString(p.SpanId) {
		t.Fatalf("span %q is not a child of %q", name, parent)
	}
	return s
}

func spanNames(tr trace) []string {
	var names []string
	for n := range tr {
		names = append(names, n)
	}
	return names
}

// tracedService is a service exporting to a receiver over protocol,
// serving its API on a test server; stop closes both, so every span is
// sent.
func tracedService(t *testing.T, protocol string, change func(*config.Config), opts app.Options) (*receiver, *httptest.Server, func()) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(v, "")
	}
	r, endpoint := startReceiver(t, protocol)
	cfg := testConfig(t)
	cfg.OTel.ExporterOTLPEndpoint, cfg.OTel.ExporterOTLPProtocol = endpoint, protocol
	if change != nil {
		change(&cfg)
	}
	if opts.Logger == nil {
		opts.Logger = quiet.Logger
	}
	s, err := app.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			srv.Close() // every request, and so every span, has ended
			s.Close()   // the exporter sends what it holds
		}
	}
	t.Cleanup(stop)
	return r, srv, stop
}

// post sends body to path with the headers and returns the JSON answer.
func post(t *testing.T, srv *httptest.Server, path, body string, headers map[string]string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %v", path, resp.StatusCode, err)
	}
	return out
}

const (
	agentTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	agentSpanID  = "00f067aa0ba902b7"
	traceparent  = "00-" + agentTraceID + "-" + agentSpanID + "-01"
)

// TestTracesOverOTLP: with an OTLP endpoint configured, over gRPC and
// over HTTP with protobuf, each decision is one trace — the request's
// span, under it validation, the session read and the decision, under
// that the evaluation and the audit commit — whose decision span says
// the decision, rule, source, level and capability, and never the
// command where the decision log masks it. A caller's traceparent is
// continued: its trace id, its span the request's parent.
func TestTracesOverOTLP(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			r, srv, stop := tracedService(t, protocol, func(c *config.Config) { c.DecisionLog.Mask = []string{"Command"} }, app.Options{})
			first := post(t, srv, "/v1/decide", `{"session_id":"s1","tool":"shell","args":{"command":"make build HUNTER=hunter2"},"cwd":"/w"}`,
				map[string]string{"traceparent": traceparent})
			second := post(t, srv, "/v1/decide", `{"session_id":"s1","tool":"read_file","args":{"path":"/w/a"},"cwd":"/w"}`, nil)
			stop()

			traces := r.traces(t)
			if len(traces) != 2 {
				t.Fatalf("%d traces for two decisions", len(traces))
			}
			continued := traces[agentTraceID]
			if continued == nil {
				t.Fatalf("no trace continues the caller's traceparent: %v", traces)
			}
			root := continued["POST /v1/decide"]
			if root == nil || hex.EncodeToString(root.ParentSpanId) != agentSpanID || root.Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Fatalf("the request's span does not continue the caller's span: %v", root)
			}
			for id, tr := range traces {
				for _, name := range []string{"pdp.validate", "pdp.session.read", "pdp.decide"} {
					wantChild(t, tr, "POST /v1/decide", name)
				}
				wantChild(t, tr, "pdp.decide", "pdp.evaluate")
				wantChild(t, tr, "pdp.decide", "pdp.audit.commit")
				want := second
				if id == agentTraceID {
					want = first
				}
				attrs := tr["pdp.decide"].Attributes
				for key, v := range map[string]string{"pdp.decision": want["decision"].(string), "pdp.rule": want["rule"].(string),
					"pdp.source": want["source"].(string), "pdp.capability": want["capability"].(string),
					"pdp.decision_id": want["decision_id"].(string), "pdp.level": "READ_ONLY"} {
					if got := attrOf(attrs, key); got != v || v == "" {
						t.Errorf("%s = %q, want %q", key, got, v)
					}
				}
				if attrOf(tr["POST /v1/decide"].Attributes, "pdp.decision_id") != want["decision_id"] {
					t.Errorf("the request's span does not name decision %s", want["decision_id"])
				}
				for _, s := range tr {
					for _, a := range s.Attributes {
						if strings.Contains(a.Value.GetStringValue(), "hunter2") {
							t.Errorf("span %q carries the masked command in %s", s.Name, a.Key)
						}
					}
				}
			}
			if first["decision"] != "ask" {
				t.Fatalf("the shell call answered %v; the test wants an ask", first["decision"])
			}
			for _, name := range r.services {
				if name != "pdp" {
					t.Errorf("service.name = %q", name)
				}
			}
		})
	}
}

// TestTraceCarriesTheCommandOnlyWhereTheDecisionLogDoes: a decision's
// span carries the command where the decision log exports it unmasked,
// and nowhere else.
func TestTraceCarriesTheCommandOnlyWhereTheDecisionLogDoes(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*config.Config)
		want   bool
	}{
		"no decision log":        {func(c *config.Config) { c.DecisionLog.Path = "" }, false},
		"decision log, masked":   {func(c *config.Config) { c.DecisionLog.Mask = []string{"command"} }, false},
		"decision log, unmasked": {nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			r, srv, stop := tracedService(t, "http/protobuf", tc.change, app.Options{})
			post(t, srv, "/v1/decide", `{"session_id":"s1","tool":"shell","args":{"command":"git log -n 1"},"cwd":"/w"}`, nil)
			stop()
			for _, tr := range r.traces(t) {
				if got := attrOf(tr["pdp.decide"].Attributes, "pdp.command"); (got == "git log -n 1") != tc.want || (!tc.want && hasAttr(tr["pdp.decide"].Attributes, "pdp.command")) {
					t.Fatalf("pdp.command = %q, want it: %v", got, tc.want)
				}
			}
		})
	}
}

// TestTraceOfAHookHoldingAnAsk: a hook that holds an ask for a person
// (?wait=) has the wait in its trace, continued from the agent's
// traceparent, ending as the person answered.
func TestTraceOfAHookHoldingAnAsk(t *testing.T) {
	parked := make(chan string, 1)
	logger := slog.New(onMessage{"holding an ask for an answer", parked})
	r, srv, stop := tracedService(t, "grpc", nil, app.Options{Logger: logger})
	answered := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/hooks/codex?wait=1h", strings.NewReader(
			`{"session_id":"cx","turn_id":"1","cwd":"/w","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"make build"},"tool_use_id":"call_1"}`))
		req.Header.Set("traceparent", traceparent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(b)
	}()
	var id string
	select {
	case id = <-parked:
	case out := <-answered:
		t.Fatalf("the hook answered %s without holding the ask", out)
	}
	post(t, srv, "/v1/decisions/"+id+"/answer", `{"answer":"allow_once"}`, nil)
	if out := <-answered; strings.Contains(out, "deny") {
		t.Fatalf("the hook answered %s after allow_once", out)
	}
	stop()
	tr := r.traces(t)[agentTraceID]
	if tr == nil {
		t.Fatal("the hook's trace does not continue the agent's traceparent")
	}
	wantChild(t, tr, "POST /v1/hooks/:agent", "pdp.decide")
	wait := wantChild(t, tr, "POST /v1/hooks/:agent", "pdp.ask.wait")
	if attrOf(wait.Attributes, "pdp.decision_id") != id || attrOf(wait.Attributes, "pdp.wait.result") != "answered" {
		t.Fatalf("the wait's span = %v", wait.Attributes)
	}
}

// onMessage is a log handler that sends the decision_id of each record
// with message msg.
type onMessage struct {
	msg string
	ch  chan<- string
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "decision_id" {
				h.ch <- a.Value.String()
			}
			return true
		})
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
