// Package metrics holds the PDP's Prometheus collectors, registered once
// on their own registry with the Go and process collectors. It implements
// the observer interfaces of the engine, the audit writer, the assessor
// and the HTTP API, so those packages never import Prometheus. Labels stay
// low-cardinality: never a session id, command or fingerprint.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/toolperm/pdp/api"
	"github.com/toolperm/pdp/internal/buildinfo"
	"github.com/toolperm/pdp/pdp"
)

// fastBuckets resolve 10 µs … 100 ms (and a little beyond).
var fastBuckets = prometheus.ExponentialBucketsRange(10e-6, 0.25, 16)

// Metrics are the PDP's collectors.
type Metrics struct {
	Registry *prometheus.Registry

	decisions        *prometheus.CounterVec
	decideDuration   prometheus.Histogram
	evalDuration     prometheus.Histogram
	memoHits         prometheus.Counter
	assessorVerdicts *prometheus.CounterVec
	assessorCalls    *prometheus.CounterVec
	assessorDuration prometheus.Histogram
	activations      *prometheus.CounterVec
	revision         *prometheus.GaugeVec
	auditBatch       prometheus.Histogram
	auditDuration    prometheus.Histogram
	auditErrors      prometheus.Counter
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	accessDenied     *prometheus.CounterVec
	swept            prometheus.Counter
	sweepDuration    prometheus.Histogram
	sweepErrors      prometheus.Counter
	trailEvents      prometheus.Gauge
	trailBytes       prometheus.Gauge
	notify           notifyCounters
	tlsRefused       *prometheus.CounterVec
	ops              *operations
}

// New registers every collector on a new registry.
func New() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.Registry.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_decisions_total", Help: "Decisions answered, by decision and source.",
	}, []string{"decision", "source"})
	m.decideDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_decide_duration_seconds", Help: "Time to answer one decision, audit write included.", Buckets: fastBuckets,
	})
	m.evalDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_policy_eval_duration_seconds", Help: "Time of one Rego evaluation of the policy (memo hits excluded).", Buckets: fastBuckets,
	})
	m.memoHits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdp_policy_memo_hits_total", Help: "Policy evaluations answered from the per-policy memo.",
	})
	m.assessorVerdicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_assessor_verdicts_total", Help: "Danger verdicts, by how they were reached (llm, cache, screen, error, unavailable) and verdict.",
	}, []string{"by", "verdict"})
	m.assessorCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_assessor_calls_total", Help: "Calls to the LLM endpoint, by outcome (safe, dangerous, error, timeout).",
	}, []string{"outcome"})
	m.assessorDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_assessor_call_duration_seconds", Help: "Time of one call to the LLM endpoint.", Buckets: prometheus.ExponentialBucketsRange(0.01, 30, 12),
	})
	m.activations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_bundle_activations_total", Help: "Policy activations, by result (success, failure).",
	}, []string{"result"})
	m.revision = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pdp_policy_revision_info", Help: "The active policy revision (value 1).",
	}, []string{"revision", "source"})
	m.auditBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_audit_batch_size", Help: "Decision events per audit transaction.", Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	})
	m.auditDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_audit_write_duration_seconds", Help: "Time of one audit transaction, commit included.", Buckets: prometheus.ExponentialBucketsRange(50e-6, 1, 14),
	})
	m.auditErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdp_audit_write_errors_total", Help: "Audit transactions that failed (their decisions were denied).",
	})
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_http_requests_total", Help: "HTTP requests, by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pdp_http_request_duration_seconds", Help: "HTTP request time, by route pattern.", Buckets: fastBuckets,
	}, []string{"route"})
	m.accessDenied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_access_denied_total", Help: "Requests refused by access control, by status (401, 403).",
	}, []string{"code"})
	m.swept = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdp_audit_swept_events_total", Help: "Audit events deleted by the retention sweeper.",
	})
	m.sweepDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "pdp_audit_sweep_duration_seconds", Help: "Time of one sweep of the audit trail, pauses and space reclaim included.",
		Buckets: prometheus.ExponentialBucketsRange(1e-3, 600, 14),
	})
	m.sweepErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "pdp_audit_sweep_errors_total", Help: "Sweeps of the audit trail that failed (retried at the next interval).",
	})
	m.trailEvents = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdp_audit_trail_events", Help: "Events in the audit trail (from the span of row ids), measured after each sweep.",
	})
	m.trailBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdp_audit_trail_bytes", Help: "Size of the database file, measured after each sweep.",
	})
	for _, c := range []prometheus.Collector{m.swept, m.sweepDuration, m.sweepErrors, m.trailEvents, m.trailBytes} {
		f(c)
	}
	for _, c := range []prometheus.Collector{m.decisions, m.decideDuration, m.evalDuration, m.memoHits, m.assessorVerdicts,
		m.assessorCalls, m.assessorDuration, m.activations, m.revision, m.auditBatch, m.auditDuration, m.auditErrors,
		m.httpRequests, m.httpDuration, m.accessDenied} {
		f(c)
	}
	m.notify = newNotifyCounters(f)
	m.tlsRefused = newTLSRefused(f)
	m.ops = newOperations(f)
	f(buildInfo(buildinfo.Read()))
	return m
}

// buildInfo is pdp_build_info: value 1, the build in its labels.
func buildInfo(b buildinfo.Info) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "pdp_build_info", Help: "The running build (value 1): version, VCS revision, Go and OPA versions, cgo.",
	}, []string{"version", "revision", "goversion", "opa_version", "cgo"})
	g.WithLabelValues(b.Version, b.Revision, b.GoVersion, b.OPAVersion, strconv.FormatBool(b.CGO)).Set(1)
	return g
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Decided implements pdp.Observer.
func (m *Metrics) Decided(d api.Decision, took time.Duration) {
	m.decisions.WithLabelValues(d.Decision, d.Source).Inc()
	m.ops.decidedBy(d.Decision, d.Rule)
	m.decideDuration.Observe(took.Seconds())
}

// Evaluated implements pdp.Observer.
func (m *Metrics) Evaluated(took time.Duration, memoHit bool) {
	if memoHit {
		m.memoHits.Inc()
		return
	}
	m.evalDuration.Observe(took.Seconds())
}

// Assessed implements assessor.Observer.
func (m *Metrics) Assessed(by, verdict string) { m.assessorVerdicts.WithLabelValues(by, verdict).Inc() }

// Called implements assessor.Observer.
func (m *Metrics) Called(outcome string, took time.Duration) {
	m.assessorCalls.WithLabelValues(outcome).Inc()
	m.assessorDuration.Observe(took.Seconds())
}

// AuditBatch implements sqlite.AuditObserver.
func (m *Metrics) AuditBatch(events int, took time.Duration, err error) {
	if err != nil {
		m.auditErrors.Inc()
		return
	}
	m.auditBatch.Observe(float64(events))
	m.auditDuration.Observe(took.Seconds())
}

// PolicyActivated records an activation attempt; on success the revision
// gauge names the new policy alone.
func (m *Metrics) PolicyActivated(p *pdp.Policy, err error) {
	if err != nil {
		m.activations.WithLabelValues("failure").Inc()
		return
	}
	m.activations.WithLabelValues("success").Inc()
	m.revision.Reset()
	m.revision.WithLabelValues(p.Revision, p.Source).Set(1)
}

// Request implements the HTTP API's observer: route is the route
// pattern (never the raw path), so ids stay out of the labels.
func (m *Metrics) Request(route, method string, code int, took time.Duration) {
	switch method {
	case "GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS":
	default:
		method = "other" // a client chooses the method: keep the label set small
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(took.Seconds())
}

// AccessDenied counts a request refused by access control.
func (m *Metrics) AccessDenied(code int) { m.accessDenied.WithLabelValues(strconv.Itoa(code)).Inc() }

// Swept implements pdp.SweepObserver.
func (m *Metrics) Swept(deleted int, took time.Duration, err error) {
	m.swept.Add(float64(deleted))
	m.sweepDuration.Observe(took.Seconds())
	if err != nil {
		m.sweepErrors.Inc()
	}
}

// TrailMeasured implements pdp.SweepObserver.
func (m *Metrics) TrailMeasured(size pdp.TrailSize) {
	m.trailEvents.Set(float64(size.Events))
	m.trailBytes.Set(float64(size.Bytes))
}
