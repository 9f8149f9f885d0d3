package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery attempt outcomes, the label of the attempt series.
const (
	outcomeDelivered = "delivered"   // the receiver answered 200
	outcomeRejected  = "rejected"    // the receiver answered another status
	outcomeError     = "unreachable" // no answer: refused host, connection or timeout
)

// Metrics are the dispatcher's Prometheus series: attempts by outcome
// and their latency, so that on-call sees failing receivers before
// merchants do.
type Metrics struct {
	attempts *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	deferred prometheus.Counter
}

// NewMetrics registers the webhook series in reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paylink_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome (delivered, rejected, unreachable).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paylink_webhook_delivery_duration_seconds",
			Help:    "Latency of webhook delivery attempts by outcome.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"outcome"}),
		deferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "paylink_webhook_deferred_total",
			Help: "Webhook deliveries handed back to the outbox untried because their receiver hangs or is slow (docs/webhooks.md).",
		}),
	}
	reg.MustRegister(m.attempts, m.latency, m.deferred)
	for _, o := range []string{outcomeDelivered, outcomeRejected, outcomeError} {
		m.attempts.WithLabelValues(o) // every outcome is a series from the start, so rates and alerts see zeros
		m.latency.WithLabelValues(o)
	}
	return m
}

// observe records one attempt; a nil receiver records nothing.
func (m *Metrics) observe(status int, err error, d time.Duration) {
	if m == nil {
		return
	}
	outcome := outcomeDelivered
	switch {
	case err != nil:
		outcome = outcomeError
	case status != http.StatusOK:
		outcome = outcomeRejected
	}
	m.attempts.WithLabelValues(outcome).Inc()
	m.latency.WithLabelValues(outcome).Observe(d.Seconds())
}

// deferredOne counts a delivery handed back untried; a nil receiver
// records nothing.
func (m *Metrics) deferredOne() {
	if m != nil {
		m.deferred.Inc()
	}
}
