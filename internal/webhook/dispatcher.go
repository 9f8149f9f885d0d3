package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paylink/paylink"
)

// DefaultTimeout bounds one delivery attempt unless Options.Timeout says
// otherwise: the spec's 30 seconds.
const DefaultTimeout = 30 * time.Second

// Options tune a Dispatcher; zero values take the defaults.
type Options struct {
	// Timeout bounds one delivery attempt (default DefaultTimeout).
	Timeout time.Duration
	// Concurrency bounds the attempts in flight (default 32): a receiver
	// that hangs holds one slot until Timeout, never the others.
	Concurrency int
	// Sweep is how often due rows are looked for without a wake-up: rows
	// left leased by a crashed instance and scheduled retries (default 5s).
	Sweep  time.Duration
	Logger *slog.Logger
	// Metrics, when set, records every attempt.
	Metrics *Metrics
}

// Dispatcher drains the webhook outbox. Several dispatchers (one per
// instance) may share a database: rows are leased with compare-and-set,
// so each attempt is made by one of them. Run it with Run; it stops when
// the context is cancelled.
type Dispatcher struct {
	svc      *paylink.Service
	opts     Options
	client   *http.Client
	inflight atomic.Int64
	freed    chan struct{}
	wg       sync.WaitGroup
}

// New returns a dispatcher for svc's outbox.
func New(svc *paylink.Service, opts Options) *Dispatcher {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 32
	}
	if opts.Sweep <= 0 {
		opts.Sweep = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{svc: svc, opts: opts, client: newClient(opts.Timeout), freed: make(chan struct{}, 1)}
}

// lease is how long a claimed row stays with this dispatcher: the
// attempt's timeout plus time to record it. A dispatcher that dies
// holding rows (kill -9) releases them when their lease runs out.
func (d *Dispatcher) lease() time.Duration {
	return d.opts.Timeout + max(d.opts.Timeout, 5*time.Second)
}

// Run delivers until ctx is cancelled, then waits for the attempts in
// flight: they are not cancelled (each is bounded by the timeout), so an
// answer already received is always recorded and a graceful restart
// never sends a webhook twice.
func (d *Dispatcher) Run(ctx context.Context) {
	ticker := time.NewTicker(d.opts.Sweep)
	defer ticker.Stop()
	for {
		d.dispatch(ctx)
		select {
		case <-ctx.Done():
			d.wg.Wait()
			return
		case <-d.svc.WebhookWake():
		case <-d.freed:
		case <-ticker.C:
		}
	}
}

// dispatch claims as many due rows as there are free slots and starts
// one goroutine per row.
func (d *Dispatcher) dispatch(ctx context.Context) {
	free := d.opts.Concurrency - int(d.inflight.Load())
	if free <= 0 || ctx.Err() != nil {
		return
	}
	jobs, err := d.svc.ClaimWebhooks(ctx, free, d.lease())
	if err != nil {
		if ctx.Err() == nil {
			d.opts.Logger.Error("claim webhooks", "err", err)
		}
		return
	}
	for _, job := range jobs {
		d.inflight.Add(1)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.deliver(context.WithoutCancel(ctx), job)
			d.inflight.Add(-1)
			select {
			case d.freed <- struct{}{}:
			default:
			}
		}()
	}
}

// deliver makes one attempt and records it.
func (d *Dispatcher) deliver(ctx context.Context, job *paylink.WebhookJob) {
	a := paylink.WebhookAttempt{StartedAt: d.svc.Now()}
	start := time.Now()
	status, excerpt, err := d.send(ctx, job)
	a.Latency, a.StatusCode, a.ResponseExcerpt = time.Since(start), status, excerpt
	d.opts.Metrics.observe(status, err, a.Latency)
	switch {
	case err != nil:
		a.Error = err.Error()
	case status != http.StatusOK:
		a.Error = fmt.Sprintf("receiver answered HTTP %d, want 200", status)
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := d.svc.FinishWebhook(rctx, job, a); err != nil {
		d.opts.Logger.Error("record webhook attempt", "delivery", job.Delivery.ID, "err", err)
		return
	}
	d.opts.Logger.Info("webhook attempt", "delivery", job.Delivery.ID, "reference", job.Delivery.Reference,
		"target", job.Delivery.Target, "status_code", status, "state", job.Delivery.State,
		"attempt", job.Delivery.Attempts, "latency_ms", a.Latency.Milliseconds(), "error", a.Error)
}

// send POSTs the payload with its signature headers and returns the
// receiver's status code and the start of its response body (the
// Service bounds and cleans it: paylink.ResponseExcerpt). It refuses
// hosts outside the whitelist before any connection is made.
func (d *Dispatcher) send(ctx context.Context, job *paylink.WebhookJob) (int, string, error) {
	w := job.Delivery
	u, err := paylink.CheckWebhookURL(w.URL, job.Domains)
	if err != nil {
		return 0, "", fmt.Errorf("webhook URL: %w", err)
	}
	req, err := http.NewRequestWithContext(withLiteral(ctx, u), http.MethodPost, u.String(), bytes.NewReader(w.Payload))
	if err != nil {
		return 0, "", fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paylink-webhooks/1")
	setHeaders(req.Header, job.Keys, w.ID, d.svc.Now(), w.Payload)
	res, err := d.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	// Only the status counts; the start of the body is kept for the
	// delivery log, and a bounded rest is read so that the connection
	// can be reused.
	head, _ := io.ReadAll(io.LimitReader(res.Body, paylink.ResponseExcerptBytes))
	io.Copy(io.Discard, io.LimitReader(res.Body, MaxResponseBytes))
	return res.StatusCode, string(head), nil
}
