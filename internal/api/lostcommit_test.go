package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
	"github.com/paylink/paylink/internal/processor"
)

// TestLostCommitAnswer cuts the connection between paylink and a real
// PostgreSQL at a purchase's COMMIT. When the server received the COMMIT
// and only its answer was lost, the purchase happened: paylink finds its
// transaction token spent by that purchase and answers it (not a 503 that
// says nothing happened, which led clients to pay again). When the COMMIT
// never arrived, nothing happened: 503, and the same token pays. A token
// spent already is refused naming the payment that spent it.
func TestLostCommitAnswer(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	m := env.Onboard()
	purchase := func(invoice string) map[string]any {
		return env.CardPurchase(m, "4111111111111111", "12.50", func(b map[string]any) {
			apitest.Set(b, "purchase.invoice_number", invoice)
		})
	}

	body := purchase("LOST-COMMIT-ANSWER")
	// The server reads the batch only after paylink has lost the
	// connection: paylink waits for the server to finish with it.
	cut := proxy.Arm(pgtest.Cut{Marker: "LOST-COMMIT-ANSWER", Forward: true, Delay: 300 * time.Millisecond})
	r := env.Post("/v5/purchase", m, body)
	waitCut(t, cut)
	ref := r.Str("purchase.purchase_reference")
	if r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" || ref == "" {
		t.Fatalf("a purchase whose COMMIT answer was lost: got %d %s, want 200 APPROVED\n%s", r.Status, r.Raw, env.Logs.String())
	}
	if s := env.Post("/v5/purchase/LOST-COMMIT-ANSWER", m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Str("status") != "APPROVED" || s.Str("purchase_reference") != ref {
		t.Errorf("look-up: got %s, want %s APPROVED\n%s", s.Raw, ref, env.Logs.String())
	}
	again := env.Post("/v5/purchase", m, body)
	if again.Status != http.StatusConflict || again.Str("response_code") != "transaction_token_used" || !strings.Contains(again.Str("response_message"), ref) {
		t.Errorf("the spent token again: got %d %s, want 409 transaction_token_used naming %s", again.Status, again.Raw, ref)
	}

	body = purchase("LOST-COMMIT-NEVER-SENT")
	cut = proxy.Arm(pgtest.Cut{Marker: "LOST-COMMIT-NEVER-SENT"})
	r = env.Post("/v5/purchase", m, body)
	waitCut(t, cut)
	if r.Status != http.StatusServiceUnavailable || r.Str("response_code") != "service_unavailable" {
		t.Fatalf("a purchase whose COMMIT never reached the server: got %d %s, want 503", r.Status, r.Raw)
	}
	if s := env.Post("/v5/purchase/LOST-COMMIT-NEVER-SENT", m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Status != http.StatusNotFound {
		t.Errorf("look-up of the purchase that did not happen: got %d %s, want 404", s.Status, s.Raw)
	}
	if retry := env.Post("/v5/purchase", m, body); retry.Status != http.StatusOK || retry.Str("purchase.status") != "APPROVED" {
		t.Errorf("the retry with the same token: got %d %s, want 200 APPROVED", retry.Status, retry.Raw)
	}
}

// behindProxy starts an API with cfg on a PostgreSQL of its own, reached
// through a proxy that can cut the connection at a COMMIT.
func behindProxy(t *testing.T, cfg paylink.Config) (*pgtest.Proxy, *apitest.Env) {
	t.Helper()
	var pg pgtest.Shared
	pg.Start()
	t.Cleanup(pg.Stop)
	proxy, dsn := pgtest.StartProxy(t, pg.Database(t))
	return proxy, apitest.Start(t, apitest.Options{DSN: dsn, Config: cfg})
}

// waitCut waits for an armed cut to have happened.
func waitCut(t *testing.T, cut <-chan struct{}) {
	t.Helper()
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the armed cut never happened: the purchase's COMMIT did not go through the proxy with its marker")
	}
}

// TestLostCommitAnswerOfARecordedOutcome: with the processor's answer
// recorded in a second commit (--record-processing-first, as for a
// remote acquirer), a COMMIT of that answer whose own answer is lost is
// found committed by the transaction's version, and the client gets the
// payment's outcome, not a 503.
func TestLostCommitAnswerOfARecordedOutcome(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{RecordProcessingFirst: true})
	m := env.Onboard()
	body := env.CardPurchase(m, "4111111111111111", "12.50", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "LOST-OUTCOME")
	})
	// Only the outcome's commit names the status APPROVED.
	cut := proxy.Arm(pgtest.Cut{Marker: "APPROVED", Forward: true, Delay: 300 * time.Millisecond})
	r := env.Post("/v5/purchase", m, body)
	waitCut(t, cut)
	if r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" {
		t.Fatalf("a purchase whose outcome's COMMIT answer was lost: got %d %s, want 200 APPROVED\n%s", r.Status, r.Raw, env.Logs.String())
	}
	if s := env.Post("/v5/purchase/LOST-OUTCOME", m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Str("status") != "APPROVED" {
		t.Errorf("look-up: got %s, want APPROVED", s.Raw)
	}
}

// TestLostCommitAnswerOfARefund: a refund is reserved (its token spent)
// in one commit and its outcome recorded in another. When the outcome's
// COMMIT reached the server and only its answer was lost, the refund
// happened: the client gets it APPROVED, not a 503 whose retry its spent
// token refuses (and a retry with a new token would refund twice). When
// the COMMIT never arrived, the client gets the refund PROCESSING, to be
// looked up, and recovery records what the processor did.
func TestLostCommitAnswerOfARefund(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	m := env.Onboard()
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "12.50")).Str("purchase.purchase_reference")

	cut := proxy.Arm(pgtest.Cut{Marker: "Refund processed successfully", Forward: true, Delay: 300 * time.Millisecond})
	r := env.Post("/v5/purchase/"+ref+"/refund", m, refundBody(env, m, "5.00"))
	waitCut(t, cut)
	if r.Status != http.StatusOK || r.Str("refund.status") != "APPROVED" {
		t.Fatalf("a refund whose outcome's COMMIT answer was lost: got %d %s, want 200 APPROVED\n%s", r.Status, r.Raw, env.Logs.String())
	}
	if got := stored(t, env, m, ref).Refunded; got != 500 {
		t.Errorf("refunded: got %d, want 500", got)
	}

	cut = proxy.Arm(pgtest.Cut{Marker: "Refund processed successfully"})
	r = env.Post("/v5/purchase/"+ref+"/refund", m, refundBody(env, m, "2.00"))
	waitCut(t, cut)
	refund := r.Str("refund.refund_reference")
	if r.Status != http.StatusOK || r.Str("refund.status") == "APPROVED" || refund == "" {
		t.Fatalf("a refund whose outcome's COMMIT never arrived: got %d %s, want 200 with the refund still in progress", r.Status, r.Raw)
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := env.Post("/v5/refund/"+refund, m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Str("status") != "APPROVED" {
		t.Errorf("the refund once recovery asked the processor: got %s, want APPROVED", s.Raw)
	}
	if got := stored(t, env, m, ref).Refunded; got != 700 {
		t.Errorf("refunded: got %d, want 700 (each refund once)", got)
	}
}

// TestAnOutcomeThatCannotBeRecorded: when the COMMIT recording a
// processor's answer never reaches the server (a remote acquirer's
// purchase, a capture), the acquirer may have taken the money, so the
// client gets the payment in progress (PENDING, look it up), not a 503
// inviting it to pay again; a retry of the same request is refused naming
// the payment, and recovery records what the acquirer did.
func TestAnOutcomeThatCannotBeRecorded(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{RecordProcessingFirst: true})
	m := env.Onboard()
	body := env.CardPurchase(m, visa, "12.50", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "UNRECORDED") })
	cut := proxy.Arm(pgtest.Cut{Marker: "Transaction processed successfully"})
	r := env.Post("/v5/purchase", m, body)
	waitCut(t, cut)
	ref := r.Str("purchase.purchase_reference")
	if r.Status != http.StatusOK || r.Str("purchase.status") != "PENDING" || ref == "" {
		t.Fatalf("a purchase whose outcome could not be recorded: got %d %s, want 200 PENDING", r.Status, r.Raw)
	}
	wantTokenUsedBy(t, env.Post("/v5/purchase", m, body), ref)

	hold := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "20.00", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
	})).Str("purchase.purchase_reference")
	capture := map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"capture": map[string]any{"amount": "15.00", "currency": "AUD"}}
	cut = proxy.Arm(pgtest.Cut{Marker: "the hold was captured"})
	c := env.Post("/v5/purchase/"+hold+"/capture", m, capture)
	waitCut(t, cut)
	if c.Status != http.StatusOK || c.Str("purchase.status") != "PENDING" {
		t.Fatalf("a capture whose outcome could not be recorded: got %d %s, want 200 PENDING", c.Status, c.Raw)
	}
	wantTokenUsedBy(t, env.Post("/v5/purchase/"+hold+"/capture", m, capture), hold)

	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if _, err := env.Service.RecoverInterrupted(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{ref, hold} {
		if got := stored(t, env, m, r).Status; got != paylink.StatusApproved {
			t.Errorf("%s once recovery asked the acquirer: got %s, want APPROVED", r, got)
		}
	}
}

// wantTokenUsedBy checks a 409 transaction_token_used naming ref.
func wantTokenUsedBy(t *testing.T, r apitest.Response, ref string) {
	t.Helper()
	if r.Status != http.StatusConflict || r.Str("response_code") != "transaction_token_used" || !strings.Contains(r.Str("response_message"), ref) {
		t.Errorf("the same request again: got %d %s, want 409 transaction_token_used naming %s", r.Status, r.Raw, ref)
	}
}

// TestACommitHeldUpPastTheWaitIsEnded: a COMMIT that reaches the server
// only after paylink stopped waiting for it (5 s: a stalled network or
// server) can no longer commit: paylink ends the server's process before
// it reads the batch, so its 503 "nothing happened" stays true, and the
// same token pays on retry. Before, the late COMMIT went through after
// the client was told 503.
func TestACommitHeldUpPastTheWaitIsEnded(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	m := env.Onboard()
	body := env.CardPurchase(m, visa, "12.50", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "HELD-UP") })
	cut := proxy.Arm(pgtest.Cut{Marker: "HELD-UP", Forward: true, Delay: 7 * time.Second})
	r := env.Post("/v5/purchase", m, body)
	waitCut(t, cut)
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("a purchase whose COMMIT was held up: got %d %s, want 503", r.Status, r.Raw)
	}
	time.Sleep(3 * time.Second) // past the held-up batch's delivery
	if s := env.Post("/v5/purchase/HELD-UP", m, map[string]any{"company_token": m.Creds.CompanyToken}); s.Status != http.StatusNotFound {
		t.Errorf("look-up after the 503: got %d %s, want 404 (nothing happened)", s.Status, s.Raw)
	}
	if retry := env.Post("/v5/purchase", m, body); retry.Status != http.StatusOK || retry.Str("purchase.status") != "APPROVED" {
		t.Errorf("the retry with the same token: got %d %s, want 200 APPROVED", retry.Status, retry.Raw)
	}
}

// TestAChallengeThatCannotBeRecorded: an acquirer's 3-D Secure challenge
// whose recording fails is answered in progress without the challenge's
// address: its page was never stored, so the customer sent there would
// find nothing.
func TestAChallengeThatCannotBeRecorded(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{RecordProcessingFirst: true})
	m := env.Onboard()
	cut := proxy.Arm(pgtest.Cut{Marker: "The card issuer requires the customer to authenticate"})
	r := threeDSPurchase(env, m, processor.CardThreeDSChallenge)
	waitCut(t, cut)
	if r.Status != http.StatusOK || r.Str("purchase.status") != "PENDING" || r.Str("customer.authentication_redirect_url") != "" {
		t.Errorf("a challenge whose recording failed: got %d %s, want 200 PENDING without a challenge address", r.Status, r.Raw)
	}
}

// TestLostCommitAnswerOfACreation: a payment link or card token whose
// COMMIT reached PostgreSQL but whose answer was lost is found made, and
// the client gets it, 200, not a 503 that released its Idempotency-Key:
// a retry under the key (the Go client's WithRetries makes one) created
// a second link, or stored the card twice, as nothing is spent to stop
// it. The retry now replays the first answer, and one is stored.
func TestLostCommitAnswerOfACreation(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	m := env.Onboard()
	for _, tc := range []struct{ path, marker, count string }{
		{"/v5/payment-links", "LOSTLINK-1", `SELECT COUNT(*) FROM payment_links WHERE merchant_id = $1`},
		{"/v5/tokenize_card", "LOSTCARD-1", `SELECT COUNT(*) FROM cards WHERE merchant_id = $1`},
	} {
		body := map[string]any{"amount": "10.00", "currency": "AUD", "merchantReference": tc.marker}
		if tc.path == "/v5/tokenize_card" {
			body = map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken},
				"card":     map[string]any{"number": "4111111111111111", "expiry_month": "12", "expiry_year": "2030", "holder_name": "Jo Citizen"},
				"customer": map[string]any{"id": tc.marker, "store_card_permisison": true}}
		}
		raw, _ := json.Marshal(body)
		cut := proxy.Arm(pgtest.Cut{Marker: tc.marker, Forward: true, Delay: 300 * time.Millisecond})
		first, firstBody := postKeyTo(t, env, m, tc.path, "key-of-"+tc.path, raw)
		waitCut(t, cut)
		if first.StatusCode != http.StatusOK {
			t.Errorf("%s whose COMMIT answer was lost: got %d %s, want 200 (it committed)", tc.path, first.StatusCode, firstBody)
		}
		again, againBody := postKeyTo(t, env, m, tc.path, "key-of-"+tc.path, raw)
		if again.StatusCode != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || againBody != firstBody {
			t.Errorf("%s retried under its key: got %d (replayed %q) %s, want the first answer replayed",
				tc.path, again.StatusCode, again.Header.Get("Idempotent-Replayed"), againBody)
		}
		var n int
		if err := env.Store.DB().QueryRow(tc.count, m.ID).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s: %d stored (%v), want 1", tc.path, n, err)
		}
	}
}

// TestLostCommitAnswerOfAWebhookTurn: when the COMMIT of the webhook
// dispatcher's turn (ExchangeWebhooks: record the attempts, lease more)
// reaches PostgreSQL and only its answer is lost, the dispatcher gives
// the same results again. The first commit recorded them: the attempt
// is logged once (one HTTP request was made), and no lease is said to be
// lost. It logged two rows for the attempt, and the warning, when the
// attempts were inserted before the lease was checked.
func TestLostCommitAnswerOfAWebhookTurn(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Stored as the attempt's response excerpt: only the turn that
		// records the attempt sends it.
		_, _ = w.Write([]byte("LOST-WEBHOOK-TURN"))
	}))
	defer receiver.Close()
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = receiver.URL+"/hooks", []string{"127.0.0.1"}
	})
	cut := proxy.Arm(pgtest.Cut{Marker: "LOST-WEBHOOK-TURN", Forward: true, Delay: 300 * time.Millisecond})
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "12.50")).Str("purchase.purchase_reference")
	waitCut(t, cut)
	// Results not recorded are given again at every turn until they are:
	// once a later payment's delivery is settled, the first one's are.
	later := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "13.50")).Str("purchase.purchase_reference")
	if ref == "" || later == "" {
		t.Fatalf("purchases: got references %q and %q", ref, later)
	}
	env.WaitWebhooks()

	ctx := context.Background()
	for _, r := range []string{ref, later} {
		ds, err := env.Service.ListWebhooks(ctx, paylink.WebhookFilter{Reference: r, Limit: 10})
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries of %s: got %d, %v; want 1", r, len(ds), err)
		}
		var as []*paylink.WebhookAttempt
		if err := env.Store.View(ctx, func(tx paylink.Tx) error {
			as, err = tx.WebhookAttempts(ds[0].ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(as) != 1 || ds[0].State != paylink.DeliveryDelivered || ds[0].Attempts != 1 {
			t.Errorf("delivery of %s: got %s after %d attempts with %d rows in the log, want %s after 1 with 1 row",
				r, ds[0].State, ds[0].Attempts, len(as), paylink.DeliveryDelivered)
		}
	}
	if log := env.LogText(); strings.Contains(log, "webhook lease lost") {
		t.Errorf("a lease said to be lost, when the first commit had recorded the attempt:\n%s", log)
	}
}

// TestAClientHangingUpDuringACommitKeepsItsKey: a client that gives up
// while a keyed request's COMMIT is slow (PostgreSQL answers it late)
// must find, on its retry under the same key, what that commit did: the
// link it created, not a second one (the creating commit ran on the
// request's context, and pgx called a committed transaction cancelled),
// and not a key claimed for a request that never ran (the claim's commit
// did the same); the idempotency sweep found both.
func TestAClientHangingUpDuringACommitKeepsItsKey(t *testing.T) {
	proxy, env := behindProxy(t, paylink.Config{})
	m := env.Onboard()
	db := env.WriterDB(t)
	for _, c := range []struct{ name, key, reference, marker string }{
		{"the link's commit", "hang-up-link-key", "HANGUP-LINK", "HANGUP-LINK"},
		{"the key's claim", "HANGUP-CLAIM-KEY", "claimed", "HANGUP-CLAIM-KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{"amount": "5.00", "currency": "AUD", "merchantReference": c.reference})
			held := proxy.Arm(pgtest.Cut{Marker: c.marker, Hold: 700 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.Server.URL+"/v5/payment-links", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
			req.Header.Set("Idempotency-Key", c.key)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				t.Fatalf("the first request was answered (%d) before the client gave up: the commit was not held", res.StatusCode)
			}
			waitCut(t, held)
			time.Sleep(time.Second) // the held commit's answer arrives
			res, raw := postKeyTo(t, env, m, "/v5/payment-links", c.key, body)
			var links int
			if err := db.QueryRow(`SELECT COUNT(*) FROM payment_links WHERE merchant_id = $1`, m.Merchant.ID).Scan(&links); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusOK || res.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("the retry under the key: got %d %s (replayed %q), want the first request's link replayed",
					res.StatusCode, raw, res.Header.Get("Idempotent-Replayed"))
			}
			if _, err := db.Exec(`DELETE FROM payment_links WHERE merchant_id = $1`, m.Merchant.ID); err != nil {
				t.Fatal(err)
			}
			if links != 1 {
				t.Errorf("got %d links for one keyed request, want 1", links)
			}
		})
	}
}
