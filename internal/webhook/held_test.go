package webhook_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/webhook"
)

// hangingReceiver is an endpoint that takes requests and never answers
// them, until answering is set: then it answers 200 at once. It can stop
// listening (connections are refused) and listen again at its address.
// Its path /answers is another merchant's endpoint on the same host: it
// answers 200 at once, and its requests are counted apart.
type hangingReceiver struct {
	URL       string
	srv       *http.Server
	ln        net.Listener
	answering atomic.Bool
	requests  atomic.Int64
	answered  atomic.Int64 // requests to /answers
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	t.Helper()
	r := &hangingReceiver{}
	release := make(chan struct{})
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/answers" {
			r.answered.Add(1)
			return
		}
		r.requests.Add(1)
		if r.answering.Load() {
			return
		}
		select {
		case <-req.Context().Done(): // the dispatcher gave up
		case <-release:
		}
	})}
	r.listen(t, "127.0.0.1:0")
	r.URL = "http://" + r.ln.Addr().String()
	t.Cleanup(func() {
		close(release)
		r.srv.Close()
	})
	return r
}

// listen serves at addr.
func (r *hangingReceiver) listen(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.ln = ln
	go r.srv.Serve(ln)
}

// refuse stops listening: new connections are refused.
func (r *hangingReceiver) refuse() { r.ln.Close() }

// holdBacklog makes backlog payments for a merchant whose endpoint hangs
// and waits until its first attempts and a probe have timed out and its
// other rows are held for it, but one or two made due later as the next
// probe. It returns the merchant.
func holdBacklog(t *testing.T, env *apitest.Env, rc *hangingReceiver, backlog int) *apitest.Merchant {
	t.Helper()
	m := onboard(env, rc.URL+"/hook", nil)
	for range backlog {
		purchase(t, env, m, "4111111111111111", "10.00")
	}
	env.WaitWebhooks()
	held, probes := waitNextProbe(t, env, m)
	if tried := int(rc.requests.Load()); held+probes+tried != backlog || tried < 2 || probes > 2 {
		t.Fatalf("%d rows held and %d due later after %d attempts, want every row of %d not tried held but one or two, after a probe",
			held, probes, tried, backlog)
	}
	return m
}

// waitNextProbe waits until no attempt to m's receiver is in flight and
// a delivery of m held for it is due within the day (made due later, as
// the next probe), and returns how many held rows wait for an answer and
// how many are such probes.
func waitNextProbe(t *testing.T, env *apitest.Env, m *apitest.Merchant) (held, probes int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		held, probes, leased := 0, 0, 0
		for _, d := range deliveries(t, env, m) {
			switch {
			case d.State != paylink.DeliveryPending || d.HeldFor == "":
			case d.LeaseToken != "":
				leased++
			case d.NextAttemptAt.Before(env.Clock.Now().Add(12 * time.Hour)):
				probes++
			default:
				held++
			}
		}
		if probes > 0 && leased == 0 {
			return held, probes
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d held rows leased, %d held and %d probes, want none leased and one probe", leased, held, probes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pending counts the pending deliveries of ds.
func pending(ds []*paylink.WebhookDelivery) int {
	n := 0
	for _, d := range ds {
		if d.State == paylink.DeliveryPending {
			n++
		}
	}
	return n
}

// waitSettled waits until none of m's deliveries is pending.
func waitSettled(t *testing.T, env *apitest.Env, m *apitest.Merchant) []*paylink.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := deliveries(t, env, m)
		pending := pending(ds)
		if pending == 0 {
			return ds
		}
		if time.Now().After(deadline) {
			for _, d := range ds {
				t.Logf("%s %s attempts %d held for %q leased %q next in %s", d.ID, d.State, d.Attempts, d.HeldFor, d.LeaseToken,
					d.NextAttemptAt.Sub(env.Clock.Now()))
			}
			t.Fatalf("%d of %d deliveries still pending after 30s", pending, len(ds))
		}
		env.Service.WakeWebhooks()
		time.Sleep(10 * time.Millisecond)
	}
}

// checkSettled checks that each of ds was tried once: failed if its
// attempt timed out, delivered otherwise, and that the receiver got one
// request per delivery.
func checkSettled(t *testing.T, ds []*paylink.WebhookDelivery, rc *hangingReceiver) {
	t.Helper()
	for _, d := range ds {
		if d.Attempts != 1 || d.HeldFor != "" || (d.State == paylink.DeliveryFailed) != (d.LastStatusCode == 0) {
			t.Errorf("delivery %s: %s after %d attempts (last status %d), held for %q; want tried once, not held",
				d.ID, d.State, d.Attempts, d.LastStatusCode, d.HeldFor)
		}
	}
	if got := rc.requests.Load(); got != int64(len(ds)) {
		t.Errorf("the receiver got %d requests for %d deliveries, want one each", got, len(ds))
	}
}

// TestHangingReceiversRowsAreHeld: the rows of a receiver that hangs are
// held for it, not put back for a while: as the hours pass, each probe
// (one row, tried alone) is the only row leased, so an outage costs no
// write per held row and per interval. Once the receiver answers a probe,
// its held rows go out at once.
func TestHangingReceiversRowsAreHeld(t *testing.T) {
	reg := prometheus.NewRegistry()
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second, Registry: reg})
	rc := newHangingReceiver(t)
	m := holdBacklog(t, env, rc, 16)
	// The first hour may find two rows made due as probes (one after the
	// first wave of attempts timed out, one after the first probe did):
	// one is tried and the other held again. After that, one a probe.
	for hour := range 4 {
		deferred, tried := sample(t, reg, "paylink_webhook_deferred_total"), rc.requests.Load()
		env.Clock.Advance(time.Hour)
		env.WaitWebhooks() // the probe made due after the last timeout is tried, and times out
		held, probes := waitNextProbe(t, env, m)
		if hour == 0 {
			continue
		}
		if probes != 1 {
			t.Errorf("hour %d: %d rows made due as the next probe, want one", hour, probes)
		}
		if got := rc.requests.Load() - tried; got != 1 {
			t.Errorf("hour %d: %d attempts, want one probe", hour, got)
		}
		if got := sample(t, reg, "paylink_webhook_deferred_total") - deferred; got != 0 {
			t.Errorf("hour %d: %v rows put back, want none: the %d held rows stay held", hour, got, held)
		}
		if got := sample(t, reg, "paylink_webhook_outbox_held"); got != float64(held+probes) {
			t.Errorf("paylink_webhook_outbox_held: got %v, want %d (the probe is still held)", got, held+probes)
		}
	}
	rc.answering.Store(true)
	env.Clock.Advance(time.Hour)
	checkSettled(t, waitSettled(t, env, m), rc)
	if got := sample(t, reg, "paylink_webhook_outbox_held"); got != 0 {
		t.Errorf("paylink_webhook_outbox_held once the receiver answers: got %v, want 0", got)
	}
}

// TestHeldRowsAreReleasedAtStartUp: a dispatcher starting probes each
// receiver rows are held for (the instance that held them may never come
// back), and once the receiver answers its held rows are delivered.
func TestHeldRowsAreReleasedAtStartUp(t *testing.T) {
	dsn, clock := filepath.Join(t.TempDir(), "paylink.db"), apitest.NewClock(time.Now().UTC())
	rc := newHangingReceiver(t)
	var m *apitest.Merchant
	t.Run("held", func(t *testing.T) {
		env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: clock, WebhookConcurrency: 4, WebhookTimeout: time.Second})
		m = holdBacklog(t, env, rc, 12)
	})
	rc.answering.Store(true)
	env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: clock}) // the clock has not moved: nothing held is due

	checkSettled(t, waitSettled(t, env, m), rc)
}

// insertDeliveries stores n deliveries of m to url, as another
// instance's API or dispatcher left them: due at next(i), and held for
// heldFor when that is set.
func insertDeliveries(t *testing.T, env *apitest.Env, m *apitest.Merchant, url, prefix string, n int, heldFor string, next func(int) time.Time) {
	t.Helper()
	now := env.Clock.Now()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		for i := range n {
			err := tx.CreateWebhookDelivery(&paylink.WebhookDelivery{ID: fmt.Sprintf("msg_%s%d", prefix, i), MerchantID: m.ID,
				Reference: "pr_" + prefix, EventStatus: paylink.StatusApproved, Target: paylink.TargetCompany, URL: url,
				Payload: []byte(`{}`), State: paylink.DeliveryPending, NextAttemptAt: next(i), CreatedAt: now, UpdatedAt: now,
				HeldFor: heldFor})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// probeFirst makes the first of the held rows due now, the others in a day.
func probeFirst(now time.Time) func(int) time.Time {
	return func(i int) time.Time {
		if i == 0 {
			return now
		}
		return now.Add(24 * time.Hour)
	}
}

// checkDelivered checks that every delivery of m was delivered once.
func checkDelivered(t *testing.T, env *apitest.Env, m *apitest.Merchant) {
	t.Helper()
	for _, d := range waitSettled(t, env, m) {
		if d.State != paylink.DeliveryDelivered || d.Attempts != 1 || d.HeldFor != "" {
			t.Errorf("delivery %s: %s after %d attempts, held for %q; want delivered once", d.ID, d.State, d.Attempts, d.HeldFor)
		}
	}
}

// TestAnswerToAHeldRowReleasesTheRest: a dispatcher that never saw a
// receiver hang (another instance held its rows, and may be gone) claims
// a held row made due as a probe; the receiver answers, so every row held
// for it is made due and delivered, not left for a day. Rows held before
// receivers were merchants' endpoints name their host alone: the answer
// releases those by the name the probe carried.
func TestAnswerToAHeldRowReleasesTheRest(t *testing.T) {
	for _, c := range []struct {
		name string
		key  func(m *apitest.Merchant, url string) string
	}{
		{"merchant's endpoint", func(m *apitest.Merchant, url string) string { return webhook.ReceiverKey(m.ID, url) }},
		{"host alone", func(_ *apitest.Merchant, url string) string { return hostOf(url) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{})
			rc := newReceiver(t, http.StatusOK)
			m := onboard(env, rc.URL+"/hook", nil)
			insertDeliveries(t, env, m, rc.URL+"/hook", "held", 6, c.key(m, rc.URL+"/hook"), probeFirst(env.Clock.Now()))
			env.Service.WakeWebhooks()
			checkDelivered(t, env, m)
		})
	}
}

// hostOf is the host and port of url: the name rows were held under
// before receivers were merchants' endpoints.
func hostOf(url string) string {
	return strings.TrimPrefix(url[:strings.LastIndex(url, "/")], "http://")
}

// TestRowsHeldForAHostAreProbedAtStartUp: rows held before receivers
// were merchants' endpoints, under their host's name alone, none of them
// due: a dispatcher starting probes them by that name, and once the
// receiver answers they are all delivered.
func TestRowsHeldForAHostAreProbedAtStartUp(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	dsn, m, clock := leftBehind(t, rc.URL+"/hook", func(t *testing.T, env *apitest.Env, m *apitest.Merchant, now time.Time) {
		insertDeliveries(t, env, m, rc.URL+"/hook", "held", 6, hostOf(rc.URL+"/hook"),
			func(int) time.Time { return now.Add(24 * time.Hour) })
	})
	env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: clock})
	checkDelivered(t, env, m)
}

// leftBehind starts an instance on a new SQLite database, onboards a
// merchant whose endpoint is url and, once the instance's start-up read
// of the receivers rows are held for is over (so that it leaves them),
// writes rows with write; then the instance stops. It returns the
// database, the merchant and the clock.
func leftBehind(t *testing.T, url string, write func(*testing.T, *apitest.Env, *apitest.Merchant, time.Time)) (
	string, *apitest.Merchant, *apitest.Clock) {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "paylink.db")
	var m *apitest.Merchant
	var clock *apitest.Clock
	t.Run("left behind", func(t *testing.T) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, clock = onboard(env, url, nil), env.Clock
		time.Sleep(300 * time.Millisecond)
		write(t, env, m, env.Clock.Now())
	})
	return dsn, m, clock
}

// TestAHangingEndpointHoldsNoOtherMerchant: merchants X and Y have their
// endpoints on one host, each its own path. X's hangs and Y's answers:
// Y's webhook, claimed while a probe of X is in flight, is delivered at
// once, not held for the host until a probe happens to pick it.
func TestAHangingEndpointHoldsNoOtherMerchant(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second})
	rc := newHangingReceiver(t)
	holdBacklog(t, env, rc, 8)
	y := onboard(env, rc.URL+"/answers", nil)
	tried := rc.requests.Load()
	env.Clock.Advance(time.Hour)
	env.Service.WakeWebhooks()
	for deadline := time.Now().Add(30 * time.Second); rc.requests.Load() == tried; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no probe of X within 30s")
		}
	}
	purchase(t, env, y, "4111111111111111", "10.00") // X's probe is in flight for a second
	checkDelivered(t, env, y)
}

// TestAnAnswerReleasesNoOtherMerchantsRows: the mirror image: Y's
// endpoint, on the host of X's hanging one, answers; X's held rows stay
// held, rather than being tried at once against X's hanging endpoint and
// each spending its attempt.
func TestAnAnswerReleasesNoOtherMerchantsRows(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second})
	rc := newHangingReceiver(t)
	x := holdBacklog(t, env, rc, 8)
	held, tried := heldRows(deliveries(t, env, x)), rc.requests.Load()
	y := onboard(env, rc.URL+"/answers", nil)
	purchase(t, env, y, "4111111111111111", "10.00")
	checkDelivered(t, env, y)
	// Y's second webhook is claimed after the turn that saw the first
	// answered, so whatever that answer released is due by then, and
	// WaitWebhooks waits for its attempts.
	purchase(t, env, y, "4111111111111111", "10.00")
	env.WaitWebhooks()
	if got := heldRows(deliveries(t, env, x)); got != held {
		t.Errorf("X's held rows after Y's answers: got %d, want the %d held before", got, held)
	}
	if got := rc.requests.Load() - tried; got != 0 {
		t.Errorf("X's endpoint got %d requests after Y's answers, want none", got)
	}
}

// heldRows counts the pending deliveries of ds held for their receiver.
func heldRows(ds []*paylink.WebhookDelivery) int {
	n := 0
	for _, d := range ds {
		if d.State == paylink.DeliveryPending && d.HeldFor != "" {
			n++
		}
	}
	return n
}

// TestProbePutBackStaysAProbe: a held row made due as a probe, claimed
// by a dispatcher that puts it back for another reason (here, its host
// has not answered yet and holds three quarters of the slots with
// another merchant's rows), keeps its mark, so that its answer still
// releases the other held rows.
func TestProbePutBackStaysAProbe(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 8, WebhookTimeout: 5 * time.Second})
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		time.Sleep(300 * time.Millisecond) // in flight together: the quiet share fills
	}))
	t.Cleanup(rc.Close)
	m := onboard(env, rc.URL+"/hook", nil)
	other := onboard(env, rc.URL+"/other", nil) // another merchant's endpoint on the same host
	time.Sleep(300 * time.Millisecond)          // the start-up read is over: only the probe's mark tells
	now := env.Clock.Now()
	insertDeliveries(t, env, other, rc.URL+"/other", "new", 8, "", func(int) time.Time { return now.Add(-time.Minute) })
	insertDeliveries(t, env, m, rc.URL+"/hook", "held", 5, webhook.ReceiverKey(m.ID, rc.URL+"/hook"), probeFirst(now))
	env.Service.WakeWebhooks()
	env.WaitWebhooks() // six rows tried; the other two and the probe put back for 5 s
	// Move the clock past those 5 s until nothing is pending: on a busy
	// machine the quiet share can put rows back again (no answer in the
	// last second). Each step is shorter than a lease (15 s), and
	// WaitWebhooks waits for the attempts in flight, so no lease runs out.
	for i := 0; i < 20 && pending(deliveries(t, env, m))+pending(deliveries(t, env, other)) > 0; i++ {
		env.Clock.Advance(6 * time.Second)
		env.WaitWebhooks()
	}
	checkDelivered(t, env, m)
	checkDelivered(t, env, other)
}

// TestAnswerFromAHeldReceiverReleasesItsRows: rows are held for a
// receiver, with no probe due (their holder died with unheld attempts in
// flight); another dispatcher, which never saw the receiver hang, tries
// one of those unheld rows and it is answered. Having read which
// receivers rows are held for, it releases them.
func TestAnswerFromAHeldReceiverReleasesItsRows(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookHeldRefresh: 100 * time.Millisecond})
	rc := newReceiver(t, http.StatusOK)
	m := onboard(env, rc.URL+"/hook", nil)
	now := env.Clock.Now()
	insertDeliveries(t, env, m, rc.URL+"/hook", "held", 5, webhook.ReceiverKey(m.ID, rc.URL+"/hook"),
		func(int) time.Time { return now.Add(24 * time.Hour) })
	time.Sleep(300 * time.Millisecond) // a turn reads them: the sweep's, or the wake-up's below
	insertDeliveries(t, env, m, rc.URL+"/hook", "inflight", 1, "", func(int) time.Time { return now })
	env.Service.WakeWebhooks()
	checkDelivered(t, env, m)
}

// TestRefusedProbesKeepTheRowsHeld: an endpoint that hangs, then refuses
// connections for a while (a restart), then answers. Each refused probe
// spends its own row, and the other held rows wait for the answer rather
// than each being tried, refused and failed at once.
func TestRefusedProbesKeepTheRowsHeld(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second})
	rc := newHangingReceiver(t)
	m := holdBacklog(t, env, rc, 12)
	addr := rc.ln.Addr().String()
	rc.refuse()
	for range 2 {
		env.Clock.Advance(time.Hour)
		env.WaitWebhooks() // a probe is refused
		waitNextProbe(t, env, m)
	}
	tried := int(rc.requests.Load())
	rc.answering.Store(true)
	rc.listen(t, addr)
	env.Clock.Advance(time.Hour)
	delivered, failed := 0, 0
	for _, d := range waitSettled(t, env, m) {
		switch d.State {
		case paylink.DeliveryDelivered:
			delivered++
		case paylink.DeliveryFailed:
			failed++
		}
	}
	// Failed: the attempts that timed out and the two refused probes.
	if failed != tried+2 || delivered != 12-failed {
		t.Errorf("got %d delivered and %d failed, want %d failed (%d timed out, two refused) and the other %d delivered",
			delivered, failed, tried+2, tried, 12-tried-2)
	}
}

// TestNewRowsWaitForTheNextProbe: while a receiver is known to hang and
// its next probe is scheduled, its new webhooks are held with the rest,
// none tried at once: a busy merchant whose endpoint hangs would
// otherwise lose one webhook per timeout, and one whose endpoint then
// refuses connections (restarting) most of them at once.
func TestNewRowsWaitForTheNextProbe(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "hanging", true: "refusing"}[refuse], func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second})
			rc := newHangingReceiver(t)
			m := holdBacklog(t, env, rc, 8)
			if refuse {
				rc.refuse()
			}
			old := map[string]bool{}
			for _, d := range deliveries(t, env, m) {
				old[d.ID] = true
			}
			for range 3 { // the clock does not move: the next probe is not due
				purchase(t, env, m, "4111111111111111", "10.00")
			}
			env.WaitWebhooks()
			for _, d := range waitUnleased(t, env, m) {
				if !old[d.ID] && (d.State != paylink.DeliveryPending || d.HeldFor == "" || d.Attempts != 0) {
					t.Errorf("new delivery %s: %s after %d attempts, held for %q; want held, untried", d.ID, d.State, d.Attempts, d.HeldFor)
				}
			}
		})
	}
}

// waitUnleased waits until none of m's deliveries is leased (its attempt
// in flight, or its deferral not yet recorded) and returns them.
func waitUnleased(t *testing.T, env *apitest.Env, m *apitest.Merchant) []*paylink.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds, leased := deliveries(t, env, m), 0
		for _, d := range ds {
			if d.LeaseToken != "" {
				leased++
			}
		}
		if leased == 0 {
			return ds
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still leased after 30s", leased)
		}
		env.Service.WakeWebhooks()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeldRowsDueByTheFallbackProbeFirst: rows held for a receiver that
// still hangs, or now refuses, come due by the 24-hour fallback and are
// claimed by a dispatcher that never saw the receiver hang: one is tried,
// as a probe, and the others are held again, rather than each being
// tried at once and spending its single attempt.
func TestHeldRowsDueByTheFallbackProbeFirst(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "hanging", true: "refusing"}[refuse], func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{WebhookConcurrency: 8, WebhookTimeout: time.Second})
			rc := newHangingReceiver(t)
			if refuse {
				rc.refuse()
			}
			m := onboard(env, rc.URL+"/hook", nil)
			time.Sleep(300 * time.Millisecond) // the start-up read is over: it probes nothing of rows written later
			now := env.Clock.Now()
			insertDeliveries(t, env, m, rc.URL+"/hook", "fallback", 10, webhook.ReceiverKey(m.ID, rc.URL+"/hook"),
				func(int) time.Time { return now.Add(-time.Second) }) // held a day ago
			env.Service.WakeWebhooks()
			env.WaitWebhooks()
			checkOneTried(t, waitUnleased(t, env, m))
		})
	}
}

// checkOneTried checks that one of ds was tried and failed and the others
// are held, untried.
func checkOneTried(t *testing.T, ds []*paylink.WebhookDelivery) {
	t.Helper()
	tried := 0
	for _, d := range ds {
		switch {
		case d.Attempts == 1 && d.State == paylink.DeliveryFailed:
			tried++
		case d.Attempts != 0 || d.State != paylink.DeliveryPending || d.HeldFor == "":
			t.Errorf("delivery %s: %s after %d attempts, held for %q; want held, untried", d.ID, d.State, d.Attempts, d.HeldFor)
		}
	}
	if tried != 1 {
		t.Errorf("%d of %d deliveries tried, want one probe", tried, len(ds))
	}
}

// TestAFreshDispatcherKnowsWhoIsHeldFor: a receiver hangs and its rows
// are held; its holder died with attempts in flight, whose rows, not
// held, come due when their leases run out. A dispatcher starting then
// reads which receivers rows are held for before it claims anything, so
// it tries one of those rows, not all of them at once.
func TestAFreshDispatcherKnowsWhoIsHeldFor(t *testing.T) {
	rc := newHangingReceiver(t)
	dsn, m, clock := leftBehind(t, rc.URL+"/hook", func(t *testing.T, env *apitest.Env, m *apitest.Merchant, now time.Time) {
		insertDeliveries(t, env, m, rc.URL+"/hook", "held", 4, webhook.ReceiverKey(m.ID, rc.URL+"/hook"),
			func(int) time.Time { return now.Add(24 * time.Hour) })
		insertDeliveries(t, env, m, rc.URL+"/hook", "leased", 6, "", func(int) time.Time { return now.Add(time.Minute) })
	})
	clock.Advance(time.Minute)
	env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: clock, WebhookConcurrency: 8, WebhookTimeout: time.Second})
	env.WaitWebhooks()
	ds := waitUnleased(t, env, m)
	if got := rc.requests.Load(); got != 1 {
		t.Errorf("the hanging receiver got %d requests, want one probe", got)
	}
	checkOneTried(t, ds)
}

// TestAnswerBeforeTheReadReleasesTheRows: rows are held for a receiver
// after a dispatcher's last read of the receivers rows are held for (by
// another instance, which then died with an unheld attempt in flight);
// that dispatcher tries the unheld row and the receiver answers. Its next
// read lists the receiver: the rows are released then, not left held
// for a day.
func TestAnswerBeforeTheReadReleasesTheRows(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookHeldRefresh: 2 * time.Second})
	rc := newReceiver(t, http.StatusOK)
	m := onboard(env, rc.URL+"/hook", nil)
	time.Sleep(300 * time.Millisecond) // the dispatcher's first read found nothing held
	now := env.Clock.Now()
	insertDeliveries(t, env, m, rc.URL+"/hook", "held", 5, webhook.ReceiverKey(m.ID, rc.URL+"/hook"),
		func(int) time.Time { return now.Add(24 * time.Hour) })
	insertDeliveries(t, env, m, rc.URL+"/hook", "inflight", 1, "", func(int) time.Time { return now })
	env.Service.WakeWebhooks()
	checkDelivered(t, env, m)
}

// TestShutdownReleasesEveryBatch: a dispatcher stopping while a probe is
// in flight records its answer and makes due every row held for the
// receiver, more than one batch of 500, before it returns; it used to
// release one batch and leave the rest held for a day.
func TestShutdownReleasesEveryBatch(t *testing.T) {
	arrived := make(chan struct{}, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		time.Sleep(500 * time.Millisecond) // the dispatcher stops meanwhile
	}))
	t.Cleanup(rc.Close)
	dsn := filepath.Join(t.TempDir(), "paylink.db")
	var m *apitest.Merchant
	t.Run("stopped", func(t *testing.T) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m = onboard(env, rc.URL+"/hook", nil)
		insertDeliveries(t, env, m, rc.URL+"/hook", "held", 502, webhook.ReceiverKey(m.ID, rc.URL+"/hook"), probeFirst(env.Clock.Now()))
		env.Service.WakeWebhooks()
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("no probe within 30s")
		}
	})
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ds []*paylink.WebhookDelivery
	err = st.View(context.Background(), func(tx paylink.Tx) error {
		ds, err = tx.ListWebhookDeliveries(paylink.WebhookFilter{MerchantID: m.ID, Limit: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := heldRows(ds); got != 0 {
		t.Errorf("%d of %d rows still held after the dispatcher stopped, want none", got, len(ds))
	}
}

// TestRowsHeldForAHostKeepTheProbeSchedule: rows held under a host alone
// (before receivers were per merchant) for an endpoint that still hangs.
// The start-up probe of one times out and the next is scheduled under
// that key; the probe asked under the merchant's own key finds nothing
// there, which must not clear the schedule: the merchant's next new row
// waits for the scheduled probe rather than spending its one attempt.
func TestRowsHeldForAHostKeepTheProbeSchedule(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprint("held for a host alone: ", legacy), func(t *testing.T) {
			rc := newHangingReceiver(t)
			url := rc.URL + "/hook"
			dsn, m, clock := leftBehind(t, url, func(t *testing.T, env *apitest.Env, m *apitest.Merchant, now time.Time) {
				key := webhook.ReceiverKey(m.ID, url)
				if legacy {
					key = hostOf(url)
				}
				insertDeliveries(t, env, m, url, "held", 4, key, func(int) time.Time { return now.Add(24 * time.Hour) })
			})
			env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: clock, WebhookConcurrency: 4, WebhookTimeout: time.Second})
			env.WaitWebhooks()
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				tried := 0
				for _, d := range waitUnleased(t, env, m) {
					tried += d.Attempts
				}
				if tried > 0 {
					break // the start-up probe timed out; the next is scheduled (the clock does not move)
				}
				if time.Now().After(deadline) {
					t.Fatal("no start-up probe")
				}
			}
			time.Sleep(200 * time.Millisecond)
			purchase(t, env, m, "4111111111111111", "10.00")
			env.Service.WakeWebhooks()
			time.Sleep(1500 * time.Millisecond)
			for _, d := range waitUnleased(t, env, m) {
				if d.Reference != "pr_held" && d.Attempts > 0 {
					t.Errorf("new delivery %s: %s after %d attempts; want it held until the scheduled probe", d.ID, d.State, d.Attempts)
				}
			}
		})
	}
}

// TestARareWebhookToAHangingReceiverWaitsForTheProbe: a merchant whose
// webhooks come less often than one per timeout. Its first times out;
// the next, made before the next probe is due, is held and made due as
// that probe (not in a day), rather than tried at once: each would
// otherwise be a probe of its own and spend its one attempt.
func TestARareWebhookToAHangingReceiverWaitsForTheProbe(t *testing.T) {
	env := apitest.Start(t, apitest.Options{WebhookConcurrency: 4, WebhookTimeout: time.Second})
	rc := newHangingReceiver(t)
	m := onboard(env, rc.URL+"/hook", nil)
	purchase(t, env, m, "4111111111111111", "10.00")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ds := waitUnleased(t, env, m); len(ds) == 1 && ds[0].Attempts == 1 {
			break // its attempt timed out
		}
		if time.Now().After(deadline) {
			t.Fatal("the first webhook was never tried")
		}
	}
	time.Sleep(200 * time.Millisecond)                      // the dispatcher's turn after the timeout
	ref := purchase(t, env, m, "4111111111111111", "11.00") // the clock does not move: the next probe is not due
	env.Service.WakeWebhooks()
	time.Sleep(500 * time.Millisecond)
	ds := waitUnleased(t, env, m)
	if len(ds) != 2 {
		t.Fatalf("got %d deliveries, want 2", len(ds))
	}
	// Both were made at the same (test) clock time, so the list's order
	// between them is their ids': find the second by its payment.
	second := ds[0]
	if ds[1].Reference == ref {
		second = ds[1]
	}
	if second.State != paylink.DeliveryPending || second.HeldFor == "" || second.Attempts != 0 {
		t.Errorf("the second webhook: %s after %d attempts, held for %q; want held, untried", second.State, second.Attempts, second.HeldFor)
	}
	if due := second.NextAttemptAt.Sub(env.Clock.Now()); due <= 0 || due > time.Hour {
		t.Errorf("the second webhook is due in %v, want it made due as the next probe (a timeout or so)", due)
	}
}
