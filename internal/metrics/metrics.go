// Package metrics exports what the Service decides and what the store
// holds as Prometheus series: payments by method, step and outcome and
// refunds by outcome (the Service's Observer), the items needing review,
// the webhook outbox's depth and age, the database pool, and database
// outages. The HTTP, webhook and job series live with
// the code they measure (internal/httpx, internal/webhook, internal/jobs).
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// Payments counts committed payment and refund outcomes by payment type
// and status. Amounts are deliberately not labels: each distinct value
// would be a new series.
type Payments struct {
	outcomes, refunds *prometheus.CounterVec
}

// NewPayments registers the payment series in reg; pass it to the Service
// as its Observer.
func NewPayments(reg prometheus.Registerer) *Payments {
	p := &Payments{outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "paylink_payments_total",
		Help: "Payment outcomes by payment type (CreditCard, BankAccount, ApplePay, GooglePay, Zip), step " +
			"(authorisation, authentication, capture, release, clearing, resolution) and status (APPROVED, DECLINED, FAILED, ...).",
	}, []string{"method", "step", "status"}),
		refunds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paylink_refunds_total",
			Help: "Refund outcomes by the payment's type (CreditCard, BankAccount, ...) and status (APPROVED, FAILED, UNKNOWN).",
		}, []string{"method", "status"})}
	reg.MustRegister(p.outcomes, p.refunds)
	for _, st := range []paylink.Status{paylink.StatusApproved, paylink.StatusDeclined, paylink.StatusFailed} {
		p.outcomes.WithLabelValues(paylink.PaymentTypeCard, string(paylink.StepAuthorisation), string(st)) // zeros for the error-rate alert
	}
	for _, st := range []paylink.Status{paylink.StatusApproved, paylink.StatusFailed} {
		p.refunds.WithLabelValues(paylink.PaymentTypeCard, string(st))
	}
	return p
}

// RefundOutcome counts one committed refund outcome.
func (p *Payments) RefundOutcome(paymentType string, status paylink.Status) {
	p.refunds.WithLabelValues(paymentType, string(status)).Inc()
}

// PaymentOutcome counts one committed outcome.
func (p *Payments) PaymentOutcome(paymentType string, step paylink.Step, status paylink.Status) {
	p.outcomes.WithLabelValues(paymentType, string(step), string(status)).Inc()
}

// scrapeTimeout bounds the outbox query of one scrape, so that a slow
// database never hangs Prometheus.
const scrapeTimeout = 2 * time.Second

// RegisterStore registers the series read from the database: the webhook
// outbox (computed at scrape time, one indexed query), the connection
// pool (database/sql's statistics, on both engines: the PostgreSQL driver
// is pgx through database/sql) and the count of errors that were an
// unreachable database.
func RegisterStore(reg prometheus.Registerer, svc *paylink.Service, st *sqlstore.Store) {
	reg.MustRegister(
		&outbox{svc: svc,
			depth: prometheus.NewDesc("paylink_webhook_outbox_pending", "Webhook deliveries not yet delivered or given up.", nil, nil),
			age: prometheus.NewDesc("paylink_webhook_outbox_oldest_age_seconds",
				"Age of the oldest pending webhook delivery; 0 when none is pending.", nil, nil),
			overdue: prometheus.NewDesc("paylink_webhook_outbox_overdue_seconds",
				"How long the pending webhook delivery due first (not held for a hanging receiver) has been due without an attempt; 0 when none is due.", nil, nil),
			held: prometheus.NewDesc("paylink_webhook_outbox_held",
				"Pending webhook deliveries held for a receiver that hangs, until it answers a probe.", nil, nil),
			up: prometheus.NewDesc("paylink_webhook_outbox_scrape_ok", "1 if the outbox could be read at this scrape, else 0.", nil, nil),
		},
		collectors.NewDBStatsCollector(st.DB(), string(st.Engine())),
		&needsReview{svc: svc, desc: prometheus.NewDesc("paylink_needs_review_items",
			"Payments and refunds in UNKNOWN: the processor has not said what happened; someone must look (paylink review).", nil, nil)},
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "paylink_database_unavailable_total",
			Help: "Store errors that meant the database could not be reached or was restarting (answered 503).",
		}, func() float64 { return float64(st.UnavailableErrors()) }),
	)
}

// outbox reads the webhook backlog at scrape time.
type outbox struct {
	svc                           *paylink.Service
	depth, held, age, overdue, up *prometheus.Desc
}

func (o *outbox) Describe(ch chan<- *prometheus.Desc) {
	ch <- o.depth
	ch <- o.held
	ch <- o.age
	ch <- o.overdue
	ch <- o.up
}

func (o *outbox) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	b, err := o.svc.WebhookBacklog(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(o.up, prometheus.GaugeValue, 0)
		return
	}
	age, overdue := 0.0, 0.0
	if !b.Oldest.IsZero() {
		age = max(0, o.svc.Now().Sub(b.Oldest).Seconds())
	}
	if !b.FirstDue.IsZero() {
		overdue = max(0, o.svc.Now().Sub(b.FirstDue).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(o.up, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(o.depth, prometheus.GaugeValue, float64(b.Pending))
	ch <- prometheus.MustNewConstMetric(o.held, prometheus.GaugeValue, float64(b.Held))
	ch <- prometheus.MustNewConstMetric(o.age, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(o.overdue, prometheus.GaugeValue, overdue)
}

// needsReview counts the UNKNOWN items at scrape time; a failed read
// reports nothing rather than a misleading zero (the outbox's scrape_ok
// gauge shows the database is unreadable).
type needsReview struct {
	svc  *paylink.Service
	desc *prometheus.Desc
}

func (n *needsReview) Describe(ch chan<- *prometheus.Desc) { ch <- n.desc }

func (n *needsReview) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if c, err := n.svc.NeedsReview(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(n.desc, prometheus.GaugeValue, float64(c))
	}
}
