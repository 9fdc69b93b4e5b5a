package metrics

import "github.com/prometheus/client_golang/prometheus"

func newTLSRefused(register func(prometheus.Collector)) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pdp_tls_reload_refused_total",
		Help: "TLS certificate reloads refused, the certificate before serving on, by reason (invalid, expired, not_yet_valid).",
	}, []string{"reason"})
	register(c)
	return c
}

// TLSReloadRefused counts a certificate reload refused
// (tlsserve.Observer).
func (m *Metrics) TLSReloadRefused(reason string) { m.tlsRefused.WithLabelValues(reason).Inc() }
