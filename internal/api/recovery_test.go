package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/storetest"
)

func TestInterruptedPurchaseIsFailedByRecovery(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	// A purchase whose process died after step 1: PROCESSING, never answered.
	stuck := storetest.NewTransaction(m.Merchant, "pr_stuck", "INV-STUCK", 500)
	stuck.Status, stuck.CreatedAt, stuck.UpdatedAt, stuck.ProcessedAt = paylink.StatusProcessing, env.Clock.Now(), env.Clock.Now(), time.Time{}
	if err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.CreateTransaction(stuck) }); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		r := env.Post("/v5/purchase/pr_stuck", m, map[string]any{"company_token": m.Creds.CompanyToken})
		if r.Status != http.StatusOK {
			t.Fatalf("status: %d %s", r.Status, r.Raw)
		}
		return r.Str("status")
	}
	if got := status(); got != "PENDING" {
		t.Errorf("in flight: got %s, want PENDING", got)
	}
	if n, err := env.Service.RecoverInterrupted(context.Background()); err != nil || n != 0 {
		t.Errorf("before the timeout: moved %d, %v; want 0", n, err)
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if n, err := env.Service.RecoverInterrupted(context.Background()); err != nil || n != 1 {
		t.Errorf("after the timeout: moved %d, %v; want 1", n, err)
	}
	if got := status(); got != "FAILED" {
		t.Errorf("after recovery: got %s, want FAILED", got)
	}
	if n, _ := env.Service.RecoverInterrupted(context.Background()); n != 0 {
		t.Errorf("second run: moved %d, want 0", n)
	}
}

func TestInterruptedCaptureRestoresTheHold(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	hold := storetest.NewTransaction(m.Merchant, "pr_hold", "", 800)
	hold.PreAuth, hold.PreAuthAmount = true, 800
	hold.Status, hold.CreatedAt, hold.UpdatedAt, hold.ProcessedAt = paylink.StatusProcessing, env.Clock.Now(), env.Clock.Now(), env.Clock.Now()
	if err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.CreateTransaction(hold) }); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if n, err := env.Service.RecoverInterrupted(context.Background()); err != nil || n != 1 {
		t.Fatalf("recovery: moved %d, %v; want 1", n, err)
	}
	r := env.Post("/v5/purchase/pr_hold", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Str("status") != "PRE_AUTHORISED" {
		t.Fatalf("after recovery: got %s, want the hold restored to PRE_AUTHORISED", r.Raw)
	}
}

func TestInterruptedRefundIsFailedAndReleased(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tr := storetest.NewTransaction(m.Merchant, "pr_refunded", "", 1000)
	refund := &paylink.Refund{Reference: "rf_stuck", MerchantID: m.ID, TransactionReference: tr.Reference,
		Status: paylink.StatusProcessing, Currency: "AUD", Amount: 400, CreatedAt: env.Clock.Now()}
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(tr); err != nil {
			return err
		}
		if err := tx.AddRefunded(tr.Reference, 400, env.Clock.Now()); err != nil {
			return err
		}
		return tx.CreateRefund(refund)
	})
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if n, err := env.Service.RecoverInterrupted(context.Background()); err != nil || n != 1 {
		t.Fatalf("recovery: moved %d, %v; want 1", n, err)
	}
	r := env.Post("/v5/refund/rf_stuck", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Str("status") != "FAILED" {
		t.Errorf("refund after recovery: got %s, want FAILED", r.Raw)
	}
	// The reservation is released: the whole purchase can be refunded.
	full := env.Post("/v5/purchase/pr_refunded/refund", m, map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "10.00", "currency": "AUD"}})
	if full.Str("refund.status") != "APPROVED" {
		t.Errorf("a full refund after recovery: got %s, want APPROVED (the 4.00 reservation released)", full.Raw)
	}
}

// TestSpentCardNumbersAreErased: a card number is kept only while it can
// still pay. A card given for one purchase that the (in-process) sandbox
// answers at once is never written; one that a 3-D Secure challenge
// still needs is, and is erased after CardRetention; a stored card keeps
// its number.
func TestSpentCardNumbersAreErased(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	sealed := func() int {
		var n int
		env.Store.DB().QueryRow(`SELECT COUNT(*) FROM cards WHERE key_id <> ''`).Scan(&n)
		return n
	}
	once := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00"))
	if got := sealed(); once.Str("purchase.status") != "APPROVED" || got != 0 {
		t.Fatalf("a one-off card paid at once: got %s and %d sealed card numbers, want APPROVED and none", once.Str("purchase.status"), got)
	}
	challenged := env.Post("/v5/purchase", m, env.CardPurchase(m, "4000000000003220", "5.00", threeDS))
	kept := env.Post("/v5/purchase", m, env.CardPurchase(m, "5555555555554444", "5.00", func(b map[string]any) {
		apitest.Set(b, "customer.store_card_permission", true)
	}))
	if got := sealed(); challenged.Str("purchase.status") != "REQUIRES_AUTHENTICATION" || got != 2 {
		t.Fatalf("got %s and %d sealed card numbers, want REQUIRES_AUTHENTICATION and 2 (the challenged card, the stored one)",
			challenged.Str("purchase.status"), got)
	}
	env.Clock.Advance(paylink.CardRetention + time.Minute)
	if n, err := env.Service.WipeSpentCards(context.Background()); err != nil || n != 1 {
		t.Fatalf("wipe: %d, %v; want the one-purchase card erased", n, err)
	}
	if got := sealed(); got != 1 {
		t.Errorf("got %d sealed card numbers, want only the stored card's", got)
	}
	again := env.Post("/v5/purchase", m, env.CardPurchase(m, "", "6.00", func(b map[string]any) {
		b["card"] = map[string]any{"token": kept.Str("card.token")}
	}))
	if again.Str("purchase.status") != "APPROVED" {
		t.Errorf("the stored card still pays: got %s", again.Raw)
	}
	if st := env.Post("/v5/purchase/"+once.Str("purchase.purchase_reference"), m, map[string]any{"company_token": m.Creds.CompanyToken}); st.Str("status") != "APPROVED" {
		t.Errorf("the erased card's purchase is unchanged: got %s", st.Raw)
	}
}

// The HTTP contract of a lost processor answer: a purchase, capture or
// refund whose processor call outlasts its deadline is HTTP 200 with
// status PENDING and response_code pending (never a 5xx); once recovery
// finds the processor silent, look-ups show UNKNOWN, and the hold cannot
// be captured again. Every response is checked against openapi.yaml.
func TestLostProcessorAnswersOverHTTP(t *testing.T) {
	c := newOASCheckerWith(t, apitest.Options{Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
	env, m := c.env, c.m
	company := map[string]any{"company_token": m.Creds.CompanyToken}
	paid := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "10"), http.StatusOK)
	held := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "20", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
	}), http.StatusOK)
	heldRef := held.Str("purchase.purchase_reference")
	capture := func() map[string]any {
		return map[string]any{
			"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"capture": map[string]any{"amount": "15", "currency": "AUD"},
		}
	}

	env.Sandbox.SetSilent(true)
	lost := map[string]apitest.Response{
		"purchase": c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", "5", func(b map[string]any) {
			apitest.Set(b, "purchase.invoice_number", "LOST-1")
		}), http.StatusOK),
		"capture": c.call(http.MethodPost, "/v5/purchase/"+heldRef+"/capture", capture(), http.StatusOK),
		"refund": c.call(http.MethodPost, "/v5/purchase/"+paid.Str("purchase.purchase_reference")+"/refund", map[string]any{
			"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
			"refund":   map[string]any{"amount": "4", "currency": "AUD", "invoice_number": "LOST-R1"},
		}, http.StatusOK),
	}
	for name, r := range lost {
		status := r.Str("purchase.status")
		if name == "refund" {
			status = r.Str("refund.status")
		}
		if status != "PENDING" || r.Str("response_code") != "pending" {
			t.Errorf("%s past its deadline: got %s, want status PENDING and response_code pending", name, r.Raw)
		}
	}

	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	if n, err := env.Service.RecoverInterrupted(context.Background()); err != nil || n != 3 {
		t.Fatalf("recovery with a silent processor: moved %d, %v; want 3", n, err)
	}
	for _, path := range []string{"/v5/purchase/LOST-1", "/v5/purchase/" + heldRef, "/v5/refund/LOST-R1"} {
		if r := c.call(http.MethodPost, path, company, http.StatusOK); r.Str("status") != "UNKNOWN" {
			t.Errorf("look-up %s: got %s, want status UNKNOWN", path, r.Raw)
		}
	}
	if r := c.call(http.MethodPost, "/v5/purchase/"+heldRef+"/capture", capture(), http.StatusConflict); r.Str("response_code") != "invalid_state" {
		t.Errorf("capture of an UNKNOWN hold: got %s, want 409 invalid_state", r.Raw)
	}
}
