package metrics

import "github.com/prometheus/client_golang/prometheus"

// notifyCounters count the notifications (adapters/notify), by sink.
type notifyCounters struct {
	sent, failed *prometheus.CounterVec
	dropped      *prometheus.CounterVec
}

func newNotifyCounters(register func(prometheus.Collector)) notifyCounters {
	c := notifyCounters{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdp_notify_sent_total", Help: "Notifications a sink took, by sink.",
		}, []string{"sink"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdp_notify_failed_total", Help: "Failed attempts to notify a sink (each may be tried again), by sink.",
		}, []string{"sink"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pdp_notify_dropped_total", Help: "Notifications given up, by sink and reason (queue_full, gave_up).",
		}, []string{"sink", "reason"}),
	}
	register(c.sent)
	register(c.failed)
	register(c.dropped)
	return c
}

// NotifySent counts a notification a sink took.
func (m *Metrics) NotifySent(sink string) { m.notify.sent.WithLabelValues(sink).Inc() }

// NotifyFailed counts a failed attempt.
func (m *Metrics) NotifyFailed(sink string) { m.notify.failed.WithLabelValues(sink).Inc() }

// NotifyDropped counts a notification given up.
func (m *Metrics) NotifyDropped(sink, reason string) {
	m.notify.dropped.WithLabelValues(sink, reason).Inc()
}
