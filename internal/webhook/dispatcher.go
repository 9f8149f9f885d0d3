package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/paylink/paylink"
)

// DefaultTimeout bounds one delivery attempt unless Options.Timeout says
// otherwise: the spec's 30 seconds.
const DefaultTimeout = 30 * time.Second

// DefaultConcurrency is how many attempts a dispatcher has in flight
// unless Options.Concurrency says otherwise; MaxConcurrency is the most
// serve accepts.
const (
	DefaultConcurrency = 128
	MaxConcurrency     = 4096
)

// Options tune a Dispatcher; zero values take the defaults.
type Options struct {
	// Timeout bounds one delivery attempt (default DefaultTimeout).
	Timeout time.Duration
	// Concurrency bounds the attempts in flight (DefaultConcurrency): a receiver
	// that hangs holds one slot until Timeout, never the others. Under
	// load a slot waits for its turn's commit as well as for its
	// receiver, so the outbox keeps pace with about Concurrency / (commit
	// wait + receiver's answer) deliveries a second.
	Concurrency int
	// Sweep is how often due rows are looked for without a wake-up: rows
	// left leased by a crashed instance and scheduled retries (default 5s).
	Sweep time.Duration
	// HeldRefresh is how often the receivers rows are held for are read
	// again (default DefaultHeldRefresh).
	HeldRefresh time.Duration
	Logger      *slog.Logger
	// Metrics, when set, records every attempt.
	Metrics *Metrics
}

// Dispatcher drains the webhook outbox. Several dispatchers (one per
// instance) may share a database: rows are leased with compare-and-set,
// so each attempt is made by one of them. Run it with Run; it stops when
// the context is cancelled.
//
// Run takes turns: each turn records the attempts finished since the
// last and leases due rows for the free slots, in one database
// transaction (Service.ExchangeWebhooks), then starts one goroutine per
// leased row. A slot is free again once its attempt has an answer, so
// under load a turn settles and starts many attempts for one commit.
//
// A receiver is one merchant's host for its company webhook, or for
// its payment links' dynamic ones (receiverOf): merchants whose
// endpoints share a host never hold back, nor release, each other's
// rows, nor do a merchant's company and dynamic webhooks. A receiver
// whose last attempt timed out has one attempt at a time (its probe)
// until it answers again. The slots are shared out by
// host (scheme, host and port), as they are the host's resources: a
// host whose last answer took at least half the timeout has an eighth of
// the slots until it answers faster, and one that has not answered for
// a second (a new one included) three quarters of them; the other rows
// leased for it go back to the outbox with no attempt counted, due again
// later (deferral). So a merchant whose endpoint hangs or crawls,
// however long its backlog, holds few slots, and the other merchants'
// webhooks go out. (A refused connection fails at once and holds no
// slot: such a receiver is tried as usual.)
//
// The rows of a receiver that hangs are held for it rather than deferred
// for a while: they are not leased again until it answers, so an outage
// costs one write per row, not one per row per deferral interval. When a
// probe times out, or is refused, with no other attempt to the receiver
// in flight, one held row is made due as the next probe, later each time
// (deferral); it stays marked held, so that whichever dispatcher claims
// it knows it probes a receiver that hung. Once such an attempt is
// answered (any HTTP status), the receiver's held rows are made due,
// releaseBatch at a time. A dispatcher starting makes one held row of
// each receiver due as a probe, since the instance that held them may be
// gone; a row still held after maxHold comes due by itself. A row
// marked held, or one of a receiver rows were held for at the last read,
// is tried as a probe (one attempt at a time, the others held again) by
// whichever dispatcher claims it, and a dispatcher reads which receivers
// rows are held for before its first claim. So that an
// answer releases them even when neither this dispatcher nor the row it
// tried knew the receiver hung (its holder died with unheld attempts in
// flight), the receivers rows are held for are read again every
// Options.HeldRefresh, and an answer from one of them releases its rows
// too; as does an answer received before the read that first lists it,
// since the previous one (rows held by another dispatcher meanwhile).
type Dispatcher struct {
	svc           *paylink.Service
	opts          Options
	client        *http.Client
	inflight      int                  // attempts started and not yet returned (Run's alone)
	receivers     map[string]*receiver // by receiverOf's key; Run's alone
	hosts         map[string]*host     // by the receivers' scheme, host and port; Run's alone
	releases      map[string]release   // held rows to make due, by the held_for they carry; Run's alone
	heldReceivers map[string]bool      // receivers rows were held for at the last read; Run's alone
	answered      map[string]bool      // receivers that answered since that read; Run's alone
	heldRead      time.Time            // when heldReceivers was read (zero before the first read, which asks for probes)
	results       chan outcome         // capacity Concurrency: an attempt never waits to hand in its result
	wg            sync.WaitGroup
	// storeDown is set once an unavailable database is logged, and
	// cleared, with a line saying so, at the first turn it answers; Run's
	// alone.
	storeDown bool
}

// receiver is what the dispatcher knows of one receiver: a merchant's
// webhook host, whose rows it holds while it hangs.
type receiver struct {
	inflight int
	hangs    int       // timeouts in a row (a first wave of them counts once); 0 once it answers
	probeAt  time.Time // when its next probe is due (Service clock); zero when the next row is to be it
}

// host is what the dispatcher knows of one receiving host (scheme, host
// and port), which the endpoints of several merchants may share: the
// slots are shared out by host, since a slow or silent host ties up its
// connections whichever endpoint on it is called.
type host struct {
	inflight   int
	slow       bool      // its last answer took at least half the timeout
	lastAnswer time.Time // when an attempt to it last ended other than by timing out
}

// A host that has not answered for quietAfter, one not seen before
// included, may hold at most a share of the slots (Dispatcher.share):
// until an attempt to it times out nothing else tells that it hangs, and
// without the share a backlog for one silent host would take every slot
// for a whole timeout. Its rows over the share go back to the outbox for
// quietDeferral. A host that answers holds as many slots as it has rows.
const (
	quietAfter    = time.Second
	quietDeferral = 5 * time.Second
)

// release is what to make due of the rows held for a receiver: all of
// them (it answers again), or one, due at at, as its next probe.
type release struct {
	all bool
	at  time.Time
}

// maxHold is how long a row held for a hanging receiver waits if nothing
// releases it; probes release its rows as soon as the receiver answers.
const maxHold = 24 * time.Hour

// DefaultHeldRefresh is how often a dispatcher reads which receivers
// rows are held for (one scan of the held rows' index) unless
// Options.HeldRefresh says otherwise.
const DefaultHeldRefresh = time.Minute

// releaseBatch bounds the held rows made due in one statement, so that
// releasing a long outage's backlog does not hold the database's writer.
const releaseBatch = 500

// outcome is an attempt's result, its receiver and host, whether it
// timed out, whether it was made while its receiver was known to hang,
// and the receiver its row was held for, if it was (it probes a receiver
// that hung, as this dispatcher may not know; rows held before receivers
// were per merchant name a host alone).
type outcome struct {
	paylink.WebhookResult
	receiver, host, heldFor string
	timedOut, probe         bool
}

// New returns a dispatcher for svc's outbox.
func New(svc *paylink.Service, opts Options) *Dispatcher {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Sweep <= 0 {
		opts.Sweep = 5 * time.Second
	}
	if opts.HeldRefresh <= 0 {
		opts.HeldRefresh = DefaultHeldRefresh
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatcher{svc: svc, opts: opts, client: newClient(opts.Timeout, opts.Concurrency),
		receivers: map[string]*receiver{}, hosts: map[string]*host{}, results: make(chan outcome, opts.Concurrency),
		releases: map[string]release{}, answered: map[string]bool{}}
}

// minLeaseSlack is the least a lease lasts beyond its attempt's
// timeout. Leases are stamped and compared by each instance's own clock,
// so the slack must cover the skew between two instances
// (paylink.ClockSkewTolerance, 4 s, what serve's clock check warns past)
// as well as the claim's commit before the attempt and the result's after
// it: another instance ahead by the skew sees the lease run out that much
// sooner and would send the row again while this attempt is in flight.
// 5 s left only 1 s for those commits; 10 s leaves 6 s.
const minLeaseSlack = 10 * time.Second

// lease is how long a claimed row stays with this dispatcher: the
// attempt's timeout plus time to record it and clock skew between
// instances (at least minLeaseSlack). A dispatcher that dies holding rows
// (kill -9) releases them when their lease runs out.
func (d *Dispatcher) lease() time.Duration {
	return d.opts.Timeout + max(d.opts.Timeout, minLeaseSlack)
}

// Run delivers until ctx is cancelled, then waits for the attempts in
// flight and records them: they are not cancelled (each is bounded by
// the timeout), so an answer already received is always recorded and a
// graceful restart never sends a webhook twice.
func (d *Dispatcher) Run(ctx context.Context) {
	ticker := time.NewTicker(d.opts.Sweep)
	defer ticker.Stop()
	var done []paylink.WebhookResult
	for {
		var again bool
		if done, again = d.turn(ctx, d.collect(done)); again {
			continue // hand those rows back (or release more) and lease others at once
		}
		select {
		case <-ctx.Done():
			d.opts.Logger.Info("webhook dispatcher stopping", "in_flight", d.inflight)
			d.wg.Wait()
			for more := true; more; {
				// Records, and releases held rows a batch at a time; leases nothing now.
				done, more = d.turn(ctx, d.collect(done))
			}
			return
		case r := <-d.results:
			done = append(done, d.returned(r))
		case <-d.svc.WebhookWake():
		case <-ticker.C:
		}
	}
}

// collect adds the results already handed in to done.
func (d *Dispatcher) collect(done []paylink.WebhookResult) []paylink.WebhookResult {
	for {
		select {
		case r := <-d.results:
			done = append(done, d.returned(r))
		default:
			return done
		}
	}
}

// returned notes that an attempt is over: its slot is free, and its
// receiver is hanging if it timed out, and no longer if it answered (its
// held rows are then made due; its host slow if it took half the timeout
// or more). A timed-out or refused probe, with no other attempt to the
// receiver in flight, makes one held row due as the next probe.
func (d *Dispatcher) returned(o outcome) paylink.WebhookResult {
	d.inflight--
	rc, hs := d.receivers[o.receiver], d.hosts[o.host]
	rc.inflight--
	hs.inflight--
	hung := rc.hangs > 0 || o.heldFor != "" || d.heldReceivers[o.receiver]
	switch {
	case o.timedOut:
		if rc.hangs == 0 || o.probe {
			rc.hangs++
		}
		delete(d.answered, o.receiver)
		if rc.inflight == 0 {
			d.probeLater(o, rc)
		}
	case o.Attempt.StatusCode != 0:
		if hung {
			d.releaseAll(o)
		}
		d.answered[o.receiver] = true
		rc.hangs, rc.probeAt, hs.slow = 0, time.Time{}, o.Attempt.Latency >= d.opts.Timeout/2
	case hung && rc.inflight == 0:
		// Refused: not answering either. Its held rows wait for an answer
		// rather than each failing at once, and the next probe waits
		// longer, as after a timeout.
		rc.hangs++
		d.probeLater(o, rc)
	}
	if !o.timedOut {
		hs.lastAnswer = time.Now()
	}
	if rc.inflight == 0 && rc.hangs == 0 {
		delete(d.receivers, o.receiver)
	}
	if hs.inflight == 0 && !hs.slow {
		delete(d.hosts, o.host)
	}
	return o.WebhookResult
}

// releaseAll asks for every row held for o's receiver to be made due (it
// answers), and for those held under the key o's row carried, when that
// is another: a row held before receivers were per merchant
// names its host alone.
func (d *Dispatcher) releaseAll(o outcome) {
	for _, key := range heldKeys(o) {
		d.releases[key] = release{all: true}
		delete(d.heldReceivers, key)
	}
}

// probeLater makes one row held for o's receiver rc due as its next
// probe, a deferral after rc.hangs timeouts from now, unless all of them
// are to be made due already; and one held under the key o's row
// carried, when that is another. Until then new rows for rc are held.
//
// When all of them are to be made due already (it answered a moment
// before), probeAt stays zero: the first row released is the probe, and
// the others are held again behind it rather than until maxHold.
func (d *Dispatcher) probeLater(o outcome, rc *receiver) {
	at := d.svc.Now().Add(deferral(d.opts.Timeout, rc.hangs))
	rc.probeAt = at
	for _, key := range heldKeys(o) {
		if d.releases[key].all {
			rc.probeAt = time.Time{}
			continue
		}
		d.releases[key] = release{at: at}
	}
}

// heldKeys lists the keys rows for o's receiver may be held under: its
// own, and the one o's row carried when that is another (a row held
// before receivers were per merchant names its host alone).
func heldKeys(o outcome) []string {
	if o.heldFor != "" && o.heldFor != o.receiver {
		return []string{o.receiver, o.heldFor}
	}
	return []string{o.receiver}
}

// receiverOf names a delivery's receiver, the key its rows are held
// under: its merchant, its target when that is the dynamic webhook (a
// payment link's webhook_url), and its host (scheme, lower-case host or
// canonical IP address, explicit port). So merchants whose endpoints
// share a host never hold back or release each other's rows, and a
// merchant's company webhook and its payment links' webhook URLs on one
// host are two receivers: a failure at one does not delay the other
// (spec 6.2.4). One merchant's dynamic endpoints on a host (a path per
// order) hang together, as a host does. It also returns the host,
// whose slots the merchants on it share. The key is short (a stored
// index entry): a merchant id, a word and a host name; the company
// webhook's key has no word, as before dynamic rows had keys of their
// own, so rows held by earlier versions keep their receiver.
func receiverOf(job *paylink.WebhookJob) (receiver, host string) {
	w := job.Delivery
	host = originOf(w.URL)
	if w.Target == paylink.TargetDynamic {
		return w.MerchantID + " " + paylink.TargetDynamic + " " + host, host
	}
	return w.MerchantID + " " + host, host
}

// originOf names the host a webhook URL is sent to: its scheme, lower-case
// host or canonical IP address, and port (explicit); "invalid" for a URL
// send refuses before any connection.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || len(u.Host) > maxHostLength {
		return "invalid"
	}
	scheme := strings.ToLower(u.Scheme)
	port, _ := paylink.URLPort(scheme, u.Port()) // ":0443" is "443"; none is the scheme's
	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if ip, err := netip.ParseAddr(name); err == nil {
		name = ip.Unmap().String() // one spelling of an IPv6 address
	}
	return scheme + "://" + net.JoinHostPort(name, port)
}

// maxHostLength bounds the host part of a webhook URL a key is made of
// (DNS names have at most 253 characters; the rest is port and brackets).
const maxHostLength = 300

// start makes job's attempt in a goroutine of its own; or, when its
// receiver hangs and has an attempt in flight or its next probe
// scheduled, or its host is slow or silent and has as many attempts in
// flight as it may, it returns how long the job is to wait in the
// outbox instead, and the receiver to hold it for when that hangs.
func (d *Dispatcher) start(ctx context.Context, job *paylink.WebhookJob) (deferFor time.Duration, holdFor string) {
	key, origin := receiverOf(job)
	rc, hs := entry(d.receivers, key), entry(d.hosts, origin)
	defer func() {
		if rc.inflight == 0 && rc.hangs == 0 {
			delete(d.receivers, key) // deferred for its host's share: nothing to remember
		}
	}()
	if job.Delivery.HeldFor != "" || d.heldReceivers[key] {
		// It hung when its rows were held, for this dispatcher or
		// another: one attempt at a time until it answers, also for rows
		// that came due by maxHold and on a dispatcher that never saw it.
		rc.hangs = max(rc.hangs, 1)
	}
	switch {
	case rc.hangs > 0 && rc.inflight > 0: // its return schedules the next probe
		return maxHold, key
	case rc.hangs > 0 && d.svc.Now().Before(rc.probeAt):
		if _, asked := d.releases[key]; !asked {
			// The probe is to be a held row, due at probeAt: this one, when
			// none was held when it was asked for (a merchant whose
			// webhooks come less often than one per timeout).
			d.releases[key] = release{at: rc.probeAt}
		}
		return maxHold, key
	case hs.slow && hs.inflight >= max(1, d.opts.Concurrency/8):
		return d.opts.Timeout, ""
	case hs.inflight >= d.share() && time.Since(hs.lastAnswer) > quietAfter:
		return quietDeferral, ""
	}
	probe, heldFor := rc.hangs > 0, job.Delivery.HeldFor
	d.inflight++
	rc.inflight++
	hs.inflight++
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		o := d.attempt(context.WithoutCancel(ctx), job)
		o.receiver, o.host, o.probe, o.heldFor = key, origin, probe, heldFor
		d.results <- o
	}()
	return 0, ""
}

// entry returns m's entry for key, a new zero one when it has none.
func entry[T any](m map[string]*T, key string) *T {
	v := m[key]
	if v == nil {
		v = new(T)
		m[key] = v
	}
	return v
}

// share is how many slots a host that is not answering may hold: all
// but a quarter of them, which stay for the other hosts. With
// fewer than eight slots there is no quarter to keep (a quarter of one
// slot would leave a new receiver one attempt at a time), and a receiver
// may hold them all until it is known to hang.
func (d *Dispatcher) share() int {
	if d.opts.Concurrency < 8 {
		return d.opts.Concurrency
	}
	return d.opts.Concurrency - d.opts.Concurrency/4
}

// maxDeferral bounds the wait between two probes of a hanging receiver.
const maxDeferral = 10 * time.Minute

// deferral is how long the next probe of a receiver that timed out hangs
// times in a row waits: the timeout, doubling with each further timeout,
// at most maxDeferral. A long outage then costs few attempts.
func deferral(timeout time.Duration, hangs int) time.Duration {
	d := timeout
	for i := 1; i < hangs && d < maxDeferral; i++ {
		d *= 2
	}
	return min(d, maxDeferral)
}

// turn records the finished attempts in done, makes held rows due as
// returned asked, and, unless ctx is cancelled, leases rows for the free
// slots and starts them. It returns the results it could not record, or
// the rows it deferred, to be given again at the next turn (their leases
// keep them from other dispatchers meanwhile); again is true when there
// are deferred rows to give or held rows still to release.
func (d *Dispatcher) turn(ctx context.Context, done []paylink.WebhookResult) (_ []paylink.WebhookResult, again bool) {
	free := d.opts.Concurrency - d.inflight
	if ctx.Err() != nil {
		free = 0
	}
	if free <= 0 && len(done) == 0 && len(d.releases) == 0 && !d.heldRead.IsZero() {
		return done, false
	}
	d.unhold(done)
	// Recording is not cancelled with ctx: an answer received is kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if !d.readHeld(rctx) {
		free = 0 // start (its rule for receivers held for) needs the first read
	}
	jobs, err := d.svc.ExchangeWebhooks(rctx, done, free, d.lease())
	if err != nil && len(done) > 0 && free > 0 {
		// Recording must not wait on leasing: try the results alone.
		d.logStoreError("exchange webhooks", err)
		jobs, err = d.svc.ExchangeWebhooks(rctx, done, 0, 0)
	}
	if err != nil {
		d.logStoreError("record webhook attempts", err, "attempts", len(done))
		if errors.Is(err, paylink.ErrUnavailable) {
			return done, false
		}
		return d.recordEach(rctx, done), false
	}
	if d.storeDown {
		d.storeDown = false
		d.opts.Logger.Info("webhook outbox: the database answers again; deliveries and their records go on")
	}
	d.logAttempts(done)
	more := d.releaseHeld(rctx)
	done = done[:0]
	for _, job := range jobs {
		if wait, holdFor := d.start(ctx, job); wait > 0 {
			// Released at the next turn.
			done = append(done, paylink.WebhookResult{Job: job, DeferUntil: d.svc.Now().Add(wait), HoldFor: holdFor})
			d.opts.Metrics.deferredOne()
		}
	}
	return done, len(done) > 0 || more
}

// logStoreError logs a failed read or write of the outbox: at ERROR
// when it is a bug; when the database is unavailable (an outage, retried
// at every turn), at WARN once, until a turn finds it answering again.
func (d *Dispatcher) logStoreError(msg string, err error, args ...any) {
	if !errors.Is(err, paylink.ErrUnavailable) {
		d.opts.Logger.Error(msg, append(args, "err", err)...)
		return
	}
	if d.storeDown {
		return
	}
	d.storeDown = true
	d.opts.Logger.Warn(msg+": the database is unavailable; retried at every turn, logged again once it answers", append(args, "err", err)...)
}

// unhold makes due at once the rows in done that were to be held for a
// receiver that has answered since.
func (d *Dispatcher) unhold(done []paylink.WebhookResult) {
	for i, r := range done {
		if r.HoldFor == "" {
			continue
		}
		if rc := d.receivers[r.HoldFor]; rc == nil || rc.hangs == 0 {
			done[i].HoldFor, done[i].DeferUntil = "", d.svc.Now()
			r.Job.Delivery.HeldFor = "" // no longer held: its receiver answers
		}
	}
}

// readHeld reads the receivers rows are held for, every HeldRefresh.
// The first read, at start-up, also asks for a probe of each: the
// dispatcher that held their rows may be gone. Each read makes due the
// rows of the receivers that answered since the one before: another
// dispatcher may have held them after that read. It reports whether the
// receivers have been read: false until a first read succeeds.
func (d *Dispatcher) readHeld(ctx context.Context) bool {
	if !d.heldRead.IsZero() && time.Since(d.heldRead) < d.opts.HeldRefresh {
		return true
	}
	keys, err := d.svc.HeldWebhookReceivers(ctx)
	if err != nil {
		d.logStoreError("webhook receivers held for", err)
		return !d.heldRead.IsZero()
	}
	first := d.heldRead.IsZero()
	d.heldReceivers, d.heldRead = make(map[string]bool, len(keys)), time.Now()
	for _, key := range keys {
		if d.answered[key] {
			d.releases[key] = release{all: true}
			continue
		}
		d.heldReceivers[key] = true
		if _, asked := d.releases[key]; first && !asked {
			d.releases[key] = release{at: d.svc.Now()}
		}
	}
	clear(d.answered)
	return true
}

// releaseHeld makes due the held rows that returned asked for, and
// reports whether a receiver has more rows held than one batch released.
// On an error the releases are left for the next turn.
func (d *Dispatcher) releaseHeld(ctx context.Context) (more bool) {
	for key, r := range d.releases {
		if !r.all {
			// None held is fine: a new row before r.at is held and made
			// due as the probe then (start).
			if _, err := d.svc.ProbeHeldWebhook(ctx, key, r.at); err != nil {
				d.logStoreError("probe held webhook", err)
				return false
			}
			delete(d.releases, key)
			continue
		}
		n, err := d.svc.ReleaseHeldWebhooks(ctx, key, releaseBatch, d.svc.Now())
		if err != nil {
			d.logStoreError("release held webhooks", err)
			return false
		}
		if n > 0 {
			d.opts.Logger.Info("webhooks held for a hanging receiver made due: it answers again", "deliveries", n)
		}
		if n == releaseBatch {
			more = true
			continue
		}
		delete(d.releases, key)
	}
	return more
}

// attempt makes one attempt of a leased delivery.
func (d *Dispatcher) attempt(ctx context.Context, job *paylink.WebhookJob) outcome {
	a := paylink.WebhookAttempt{StartedAt: d.svc.Now()}
	start := time.Now()
	status, excerpt, err := d.send(ctx, job)
	a.Latency, a.StatusCode, a.ResponseExcerpt = time.Since(start), status, excerpt
	d.opts.Metrics.observe(status, err, a.Latency)
	switch {
	case err != nil:
		a.Error = attemptError(err)
	case status != http.StatusOK:
		a.Error = fmt.Sprintf("receiver answered HTTP %d, want 200", status)
	}
	return outcome{WebhookResult: paylink.WebhookResult{Job: job, Attempt: a}, timedOut: timedOut(err)}
}

// attemptError is how a failed attempt is told in the delivery log and
// the server's log. Go's HTTP client names the whole URL in its errors;
// a merchant's URL may carry their own secret in its path or query, so
// only its scheme and host are kept.
func attemptError(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err.Error()
	}
	return ue.Op + " " + paylink.WebhookOrigin(ue.URL) + ": " + causeOf(ue.Err)
}

// causeOf is a failed attempt's cause without what it would tell a
// merchant, who reads the delivery log, of paylink's own network: the DNS
// server that was asked (a lookup's own error may name it too, so only
// its kind is told), and the address a name resolved to that is not
// public (with both, a webhook host naming an internal name maps the
// network behind paylink's resolver).
func causeOf(err error) string {
	if errors.Is(err, ErrForbiddenAddress) {
		return "the host resolves to an address that is not public: not connected"
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		switch {
		case de.IsNotFound:
			return "lookup " + de.Name + ": no such host"
		case de.IsTimeout:
			return "lookup " + de.Name + ": timed out"
		}
		return "lookup " + de.Name + ": the name could not be resolved"
	}
	return err.Error()
}

// recordEach records the results in done one at a time, once recording
// them together failed for a reason other than an unreachable database:
// a result the database refuses on its own (a row it cannot take) is
// logged and dropped, so that it does not stop every other merchant's
// results and leases behind it for good; its row's lease runs out and it
// is tried again (at least once, as after a crash). It returns the
// results to give again.
func (d *Dispatcher) recordEach(ctx context.Context, done []paylink.WebhookResult) []paylink.WebhookResult {
	var again []paylink.WebhookResult
	for _, r := range done {
		one := []paylink.WebhookResult{r}
		_, err := d.svc.ExchangeWebhooks(ctx, one, 0, 0)
		switch {
		case err == nil:
			d.logAttempts(one)
		case errors.Is(err, paylink.ErrUnavailable):
			again = append(again, r)
		default:
			d.opts.Logger.Error("webhook attempt not recorded, and dropped: its row is tried again once its lease runs out",
				"delivery", r.Job.Delivery.ID, "err", err)
		}
	}
	return again
}

// logAttempts logs recorded attempts, one line each, and deferrals at
// debug level.
func (d *Dispatcher) logAttempts(done []paylink.WebhookResult) {
	for _, r := range done {
		w, a := r.Job.Delivery, r.Attempt
		if !r.DeferUntil.IsZero() {
			d.opts.Logger.Debug("webhook deferred: its receiver hangs or is slow", "delivery", w.ID, "until", r.DeferUntil)
			continue
		}
		d.opts.Logger.Info("webhook attempt", "delivery", w.ID, "reference", w.Reference, "target", w.Target,
			"status_code", a.StatusCode, "state", w.State, "attempt", w.Attempts, "latency_ms", a.Latency.Milliseconds(),
			"error", a.Error)
	}
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
	// delivery log (read past its bound, so that a card number across
	// the cut is masked whole), and a bounded rest is read so that the
	// connection can be reused.
	head, _ := io.ReadAll(io.LimitReader(res.Body, paylink.ResponseExcerptRead))
	io.Copy(io.Discard, io.LimitReader(res.Body, MaxResponseBytes))
	return res.StatusCode, string(head), nil
}

// timedOut tells an attempt that ran out of time from one that failed
// at once (a refused connection, a refused host).
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
