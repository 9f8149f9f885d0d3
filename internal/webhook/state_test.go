package webhook

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// TestATimeoutAfterAnAnswerLeavesTheProbeToTheRelease: two attempts to a
// receiver that hung end in one collect, an answer and then a timeout.
// The answer asked for every held row to be made due; the timeout must
// not then set a probe time that holds each released row again for
// maxHold with no probe scheduled: the first released row is the probe.
func TestATimeoutAfterAnAnswerLeavesTheProbeToTheRelease(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc, err := paylink.NewService(paylink.Config{}, paylink.Deps{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	d := New(svc, Options{Timeout: time.Second, Concurrency: 8})
	job := func() *paylink.WebhookJob {
		return &paylink.WebhookJob{Delivery: &paylink.WebhookDelivery{MerchantID: "m1", URL: "https://hooks.example.com/hook"}}
	}
	key, origin := receiverOf(job())
	d.receivers[key], d.hosts[origin], d.inflight = &receiver{inflight: 2, hangs: 1}, &host{inflight: 2}, 2
	d.returned(outcome{WebhookResult: paylink.WebhookResult{Job: job(), Attempt: paylink.WebhookAttempt{StatusCode: 200}},
		receiver: key, host: origin})
	d.returned(outcome{WebhookResult: paylink.WebhookResult{Job: job()}, receiver: key, host: origin, timedOut: true})
	if !d.releases[key].all {
		t.Fatalf("release: got %+v, want every held row made due (the receiver answered)", d.releases[key])
	}
	delete(d.releases, key) // as releaseHeld does once it made them due
	if wait, _ := d.start(context.Background(), job()); wait != 0 {
		t.Errorf("the first released row: got held for %v, want it started as the probe", wait)
	}
}

// TestRowsDeferredForTheirHostLeaveNoEntries: rows deferred for their
// host's share of the slots (a silent host) leave no receiver entry
// behind: nothing is in flight for them and they did not hang, so an
// entry per merchant would only grow.
func TestRowsDeferredForTheirHostLeaveNoEntries(t *testing.T) {
	d := New(nil, Options{Concurrency: 128})
	d.hosts["https://hooks.example.com:443"] = &host{inflight: d.share()} // at its share, not answering
	for i := range 1000 {
		job := &paylink.WebhookJob{Delivery: &paylink.WebhookDelivery{MerchantID: fmt.Sprintf("M%d", i), URL: "https://hooks.example.com/hook"}}
		if wait, _ := d.start(context.Background(), job); wait == 0 {
			t.Fatal("a row started beyond its host's share")
		}
	}
	if len(d.receivers) != 0 {
		t.Errorf("got %d receiver entries after deferring every row, want none", len(d.receivers))
	}
}
