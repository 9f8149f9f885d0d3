package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// TestARefundFormSentAgainAfterALongOutage: a refund whose processor
// answer comes while PostgreSQL is down is shown pending, and its form's
// key cannot be finished until the database is back. When the outage
// outlasts the API's idempotency lock (3 minutes) and the staff member
// sends the same form again, it is not run a second time (a dashboard
// action spends no transaction token, so the key is its only guard): the
// payment is shown as it now is, and recovery records the one refund.
// Before, the form refunded the customer twice.
func TestARefundFormSentAgainAfterALongOutage(t *testing.T) {
	srv, dsn := pgtest.DurableDatabase(t)
	env := apitest.Start(t, apitest.Options{DSN: dsn, Config: paylink.Config{ProcessorTimeout: 5 * time.Second}})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	ref := purchase(t, env, m, "25.00", false)
	b := signedIn(t, env, "staff@example.com")
	form := actionForm(t, b.get("/dashboard/payments/"+ref), "refund")
	form.Set("amount", "10.00")

	// The refund is reserved and the acquirer has its request when the
	// database stops; its answer comes after the delay, which outlasts
	// the halt even on a slow machine.
	env.Sandbox.SetDelay(3 * time.Second)
	asked := env.Sandbox.Received(paylink.OpRefund)
	first := make(chan page, 1)
	go func() { first <- b.post("/dashboard/payments/"+ref+"/refund", form) }()
	for deadline := time.Now().Add(time.Minute); env.Sandbox.Received(paylink.OpRefund) == asked; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the refund never reached the acquirer")
		}
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	if p := <-first; p.status != http.StatusSeeOther {
		t.Fatalf("the refund during the outage: got %d %s, want 303 (pending)", p.status, p.body)
	}
	env.Sandbox.SetDelay(0)
	env.Clock.Advance(paylink.IdempotencyLock + time.Second) // the outage outlasts the lock
	time.Sleep(time.Second)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if p := b.post("/dashboard/payments/"+ref+"/refund", form); p.status == http.StatusSeeOther {
		t.Errorf("the same form after the outage: got 303 to %s, want it refused as already sent", p.header.Get("Location"))
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, env, m, ref).Refunded; got != 1000 {
		t.Errorf("refunded after recovery: got %d, want 1000 (one form, one refund)", got)
	}
}

// TestALinkFormWhoseCommitAnswerWasLost: a link created while the answer
// to its COMMIT was lost is read back and found made (it answered 503
// before e5da16c), so the form goes on to the new link's page. The same
// form sent again makes no second link.
func TestALinkFormWhoseCommitAnswerWasLost(t *testing.T) {
	var pg pgtest.Shared
	pg.Start()
	t.Cleanup(pg.Stop)
	proxy, dsn := pgtest.StartProxy(t, pg.Database(t))
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	b := signedIn(t, env, "staff@example.com")
	list := b.get("/dashboard/links")
	f := linkForm(list.csrf(), formKey(t, list))
	f.Set("merchantReference", "LOST-LINK")
	cut := proxy.Arm(pgtest.Cut{Marker: "LOST-LINK", Forward: true, Delay: 300 * time.Millisecond})
	p := b.post("/dashboard/links", f)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/links/lnk_") {
		t.Fatalf("a link whose COMMIT answer was lost: got %d to %q, want 303 to the link made:\n%s", p.status, p.header.Get("Location"), p.body)
	}
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the armed cut never happened")
	}
	if again := b.post("/dashboard/links", f); again.status != http.StatusSeeOther || again.header.Get("Location") != p.header.Get("Location") {
		t.Errorf("the same form again: got %d to %q, want the first answer, 303 to %q", again.status, again.header.Get("Location"), p.header.Get("Location"))
	}
	var n int
	if err := env.Store.DB().QueryRow(`SELECT COUNT(*) FROM payment_links WHERE merchant_id = $1`, m.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("links after one form sent twice: got %d, %v; want 1", n, err)
	}
}
