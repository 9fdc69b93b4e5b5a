package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxRuleLabels bounds the rule label of pdp_decision_rules_total: a
// rule is a policy's name (FALLBACK, SESSION_GRANT) or a pattern a
// policy or a session configures, so the first maxRuleLabels distinct
// ones are kept and any later one is counted as "other".
const maxRuleLabels = 200

// WaitResults are how a wait for a person's answer ends
// (httpapi.WaitObserver).
var WaitResults = []string{"answered", "timeout", "stopping", "gone", "error"}

// operations are the collectors of the dashboard's operational panels:
// decisions by rule, the waits for a person, the store's health.
type operations struct {
	rules     *prometheus.CounterVec
	ruleNames sync.Map // rule → struct{}, the label values in use
	ruleCount atomic.Int64

	waiting   prometheus.Gauge
	waitTook  *prometheus.HistogramVec
	waitMu    sync.Mutex
	waitStart map[uint64]time.Time
	waitSeq   uint64

	health atomic.Pointer[func() error]
}

func newOperations(register func(prometheus.Collector)) *operations {
	o := &operations{waitStart: map[uint64]time.Time{}}
	o.rules = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_decision_rules_total", Help: "Decisions answered, by decision and the rule that decided (at most " + strconv.Itoa(maxRuleLabels) + " rules; later ones as \"other\").",
	}, []string{"decision", "rule"})
	o.waiting = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pdp_asks_waiting", Help: "Requests waiting now for a person's answer to an ask (GET /v1/decisions/{id}?wait=, a hook holding an ask).",
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pdp_asks_waiting_oldest_seconds", Help: "How long the longest wait for a person's answer going on now has lasted (0: none).",
	}, o.oldestWait)
	o.waitTook = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "pdp_ask_wait_duration_seconds", Help: "How long a wait for a person's answer lasted, by how it ended (answered, timeout, stopping, gone, error).",
		Buckets: prometheus.ExponentialBucketsRange(0.5, 3600, 14),
	}, []string{"result"})
	for _, r := range WaitResults {
		o.waitTook.WithLabelValues(r)
	}
	healthy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pdp_store_healthy", Help: "Whether the store can write the audit trail now, as its last commits and probes say (1 yes, 0 no; 1 where the store does not report).",
	}, o.healthy)
	for _, c := range []prometheus.Collector{o.rules, o.waiting, oldest, o.waitTook, healthy} {
		register(c)
	}
	return o
}

func (o *operations) decidedBy(decision, rule string) {
	if rule == "" {
		rule = "none"
	}
	if _, ok := o.ruleNames.Load(rule); !ok {
		if o.ruleCount.Load() >= maxRuleLabels {
			rule = "other"
		} else if _, loaded := o.ruleNames.LoadOrStore(rule, struct{}{}); !loaded {
			o.ruleCount.Add(1)
		}
	}
	o.rules.WithLabelValues(decision, rule).Inc()
}

func (o *operations) oldestWait() float64 {
	o.waitMu.Lock()
	defer o.waitMu.Unlock()
	var oldest time.Time
	for _, t := range o.waitStart {
		if oldest.IsZero() || t.Before(oldest) {
			oldest = t
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return time.Since(oldest).Seconds()
}

func (o *operations) healthy() float64 {
	if f := o.health.Load(); f != nil && (*f)() != nil {
		return 0
	}
	return 1
}

// Waiting implements httpapi.WaitObserver: pdp_asks_waiting, the age of
// the oldest wait and, when it ends, pdp_ask_wait_duration_seconds.
func (m *Metrics) Waiting() (ended func(result string)) {
	o := m.ops
	start := time.Now()
	o.waitMu.Lock()
	o.waitSeq++
	id := o.waitSeq
	o.waitStart[id] = start
	o.waitMu.Unlock()
	o.waiting.Inc()
	return func(result string) {
		o.waitMu.Lock()
		delete(o.waitStart, id)
		o.waitMu.Unlock()
		o.waiting.Dec()
		o.waitTook.WithLabelValues(result).Observe(time.Since(start).Seconds())
	}
}

// StoreHealth makes pdp_store_healthy read health (a store's
// httpapi.HealthReporter.Health: its recent commits and probes, never a
// query of its own).
func (m *Metrics) StoreHealth(health func() error) { m.ops.health.Store(&health) }

// NotifySinks starts the notification counters of each sink at zero, so
// a sink's rate is there before its first failure.
func (m *Metrics) NotifySinks(names []string) {
	for _, n := range names {
		m.notify.sent.WithLabelValues(n)
		m.notify.failed.WithLabelValues(n)
		for _, reason := range []string{"queue_full", "gave_up"} {
			m.notify.dropped.WithLabelValues(n, reason)
		}
	}
}
