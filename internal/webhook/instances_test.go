package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestInstancesShareOnePostgres runs two paylink instances, each with
// its own dispatcher, on one PostgreSQL database: every webhook is sent
// exactly once although both dispatchers race for the rows.
func TestInstancesShareOnePostgres(t *testing.T) {
	dsn := pg.Database(t)
	var mu sync.Mutex
	seen := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	a := apitest.Start(t, apitest.Options{DSN: dsn})
	b := apitest.Start(t, apitest.Options{DSN: dsn, Clock: a.Clock})
	m := onboard(a, rc.URL+"/hook", nil)
	const n = 12
	for i := range n {
		env := a
		if i%2 == 1 {
			env = b
		}
		purchase(t, env, m, "4111111111111111", "10.00")
		// Both dispatchers race for every row.
		a.Service.WakeWebhooks()
		b.Service.WakeWebhooks()
	}
	a.WaitWebhooks()
	ds, err := a.Service.ListWebhooks(context.Background(), paylink.WebhookFilter{MerchantID: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ds) != n || len(seen) != n {
		t.Fatalf("got %d rows and %d distinct webhooks received, want %d", len(ds), len(seen), n)
	}
	for _, d := range ds {
		if seen[d.ID] != 1 || d.State != paylink.DeliveryDelivered || d.Attempts != 1 {
			t.Errorf("%s: got received %d times, state %s after %d attempts; want delivered once", d.ID, seen[d.ID], d.State, d.Attempts)
		}
	}
}

// TestInstancesHoldAndReleaseTogether: two instances on one PostgreSQL
// database deliver a merchant's webhooks while its endpoint hangs for
// some hours, then answers. Whichever instance holds, probes or releases
// the rows, every webhook is sent once and tried once, and none is left
// held.
func TestInstancesHoldAndReleaseTogether(t *testing.T) {
	opts := apitest.Options{DSN: pg.Database(t), WebhookConcurrency: 4, WebhookTimeout: time.Second,
		WebhookHeldRefresh: 200 * time.Millisecond}
	a := apitest.Start(t, opts)
	opts.Clock = a.Clock
	b := apitest.Start(t, opts)
	rc := newHangingReceiver(t)
	m := onboard(a, rc.URL+"/hook", nil)
	for i := range 20 {
		purchase(t, []*apitest.Env{a, b}[i%2], m, "4111111111111111", "10.00")
		a.Service.WakeWebhooks()
		b.Service.WakeWebhooks()
	}
	for range 3 { // each hour, a probe comes due and times out
		a.WaitWebhooks()
		waitUnleased(t, a, m) // nothing in flight: no lease runs out as the clock moves
		a.Clock.Advance(time.Hour)
		b.Service.WakeWebhooks()
	}
	a.WaitWebhooks()
	waitUnleased(t, a, m)
	rc.answering.Store(true)
	a.Clock.Advance(time.Hour)
	b.Service.WakeWebhooks()
	checkSettled(t, waitSettled(t, a, m), rc)
}

// TestAResultTheDatabaseRefusesStopsNoOtherWebhook: one attempt's result
// that the database refuses for good (here a trigger; before, a held
// key too long for its index) is dropped after the results are recorded
// one at a time, and the other merchants' webhooks are still recorded
// and sent: before, the dispatcher gave the same results again every
// turn, and nothing was recorded or leased any more.
func TestAResultTheDatabaseRefusesStopsNoOtherWebhook(t *testing.T) {
	rc := newReceiver(t, http.StatusOK)
	env := apitest.Start(t, apitest.Options{DSN: pg.Database(t), WebhookConcurrency: 4})
	poisoned, other := onboard(env, rc.URL+"/a", nil), onboard(env, rc.URL+"/b", nil)
	if _, err := env.Store.DB().Exec(`CREATE FUNCTION refuse_finish() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			IF NEW.state <> 'pending' AND NEW.merchant_id = '` + poisoned.ID + `' THEN RAISE EXCEPTION 'refused'; END IF;
			RETURN NEW; END $$;
		CREATE TRIGGER refuse_finish BEFORE UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_finish()`); err != nil {
		t.Fatal(err)
	}
	purchase(t, env, poisoned, "4111111111111111", "10.00")
	select { // its attempt is made; its result is refused
	case <-rc.hits:
	case <-time.After(10 * time.Second):
		t.Fatal("the poisoned merchant's webhook was never sent")
	}
	purchase(t, env, other, "4111111111111111", "11.00")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		env.Service.WakeWebhooks()
		if ds := deliveries(t, env, other); len(ds) == 1 && ds[0].State == paylink.DeliveryDelivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other merchant's webhook: got %+v, want it delivered while one result is refused", deliveries(t, env, other))
		}
	}
}
