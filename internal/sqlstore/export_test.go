package sqlstore

import (
	"context"
	"net"
	"sync/atomic"
)

// RoundTrips counts a store's network round trips to PostgreSQL: one each
// time the client writes after having read (or first writes), so a
// pipelined batch of statements counts once.
type RoundTrips struct{ n atomic.Int64 }

// Load returns the round trips so far.
func (r *RoundTrips) Load() int64 { return r.n.Load() }

// OpenCounted opens a PostgreSQL store whose connections count their
// round trips in rt.
func OpenCounted(ctx context.Context, dsn string, rt *RoundTrips) (*Store, error) {
	return open(ctx, dsn, func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &countingConn{Conn: c, rt: rt}
		cc.read.Store(true)
		return cc, nil
	}, (*Store).migrate)
}

// countingConn counts the writes that follow a read.
type countingConn struct {
	net.Conn
	rt   *RoundTrips
	read atomic.Bool // the last I/O was a read
}

func (c *countingConn) Write(b []byte) (int, error) {
	if c.read.Swap(false) {
		c.rt.n.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.read.Store(true)
	}
	return n, err
}

// ClaimQuery is the query of ClaimWebhookDeliveries on each engine, for
// its plan.
func ClaimQuery(postgres bool) string { return claimQuery(postgres) }

// WaitingQuery is the query of TransactionsInStatus, for its plan.
const WaitingQuery = transactionsInStatusQuery

// The look-ups by invoice number and of a link's deciding payment, for
// their plans.
const (
	NewestByInvoiceQuery     = newestByInvoiceQuery
	RefundByInvoiceQuery     = refundByInvoiceQuery
	DecidingLinkPaymentQuery = decidingLinkPaymentQuery
)

// MerchantVariancesQuery is the dashboard's read of a merchant's
// variances, for its plan.
const MerchantVariancesQuery = merchantVariancesQuery

// WALSizeLimit is the size SQLite truncates its write-ahead log to.
const WALSizeLimit = walSizeLimit

// SearchQuery is SearchTransactions' query, for its plan.
var SearchQuery = searchQuery

// DeliveriesQuery is ListWebhookDeliveries' query, for its plan.
var DeliveriesQuery = deliveriesQuery

// The outbox's counts and the releases of held rows, for their plans.
const (
	CountDueQuery      = countDueQuery
	BacklogQuery       = backlogQuery
	ReleaseHeldQuery   = releaseHeldQuery
	ProbeHeldQuery     = probeHeldQuery
	HeldReceiversQuery = heldReceiversQuery
)

// FinishQuery is the update of n finished webhook deliveries.
func FinishQuery(n int) string { return finishQuery(n) }
