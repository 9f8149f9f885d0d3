package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// Rules of the spec's webhooks that a spec-to-test audit found no test
// for: each test here fails if paylink stops following one.

// TestOnlyHTTP200IsDelivered (spec 6.2.2, "must answer HTTP 200"): a
// receiver answering another 2xx has not taken the webhook.
func TestOnlyHTTP200IsDelivered(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newReceiver(t, http.StatusNoContent)
	m := onboard(env, rc.URL+"/hook", nil)
	purchase(t, env, m, "4111111111111111", "10.00")
	env.WaitWebhooks()
	if d := deliveries(t, env, m)[0]; d.State != paylink.DeliveryFailed || d.LastStatusCode != http.StatusNoContent {
		t.Errorf("a 204 answer: got state %s code %d, want failed 204", d.State, d.LastStatusCode)
	}
}

// TestCaptureSendsApprovedWithTheCapturedAmounts (spec 3, 6.2.9;
// webhooks.md): a hold sends PRE_AUTHORISED with the held total and
// estimated fees, its capture APPROVED with the captured amounts and
// exact fees.
func TestCaptureSendsApprovedWithTheCapturedAmounts(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newReceiver(t, 200)
	m := onboard(env, rc.URL+"/hook", nil)
	ref := purchase(t, env, m, "4111111111111111", "10.50", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true)
		apitest.Set(b, "purchase.should_service_apply_surcharge", true)
	})
	r := env.Post("/v5/purchase/"+ref+"/capture", m, map[string]any{
		"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"capture": map[string]any{"amount": "6.00", "currency": "AUD", "should_service_apply_surcharge": true}})
	if r.Str("purchase.status") != "APPROVED" {
		t.Fatalf("capture: got %s", r.Raw)
	}
	env.WaitWebhooks()
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("got %d webhooks, want the hold's and the capture's", len(got))
	}
	byStatus := map[any]map[string]any{} // delivered concurrently: in either order
	for _, h := range got {
		p := decode(t, h.Body)
		byStatus[p["status"]] = p
	}
	for _, w := range []map[string]string{
		{"status": "PRE_AUTHORISED", "amount": "10.63", "sale_amount": "10.50", "surcharge": "0.13", "mode": "ESTIMATED"},
		{"status": "APPROVED", "amount": "6.07", "sale_amount": "6.00", "surcharge": "0.07", "mode": "EXACT"},
	} {
		p := byStatus[w["status"]]
		if p == nil {
			t.Errorf("no %s webhook among %d", w["status"], len(got))
			continue
		}
		summary, _ := p["fee_detail"].(map[string]any)["total_fee_summary"].(map[string]any)
		if p["transaction_reference"] != ref || p["amount"] != w["amount"] ||
			p["sale_amount"] != w["sale_amount"] || p["surcharge"] != w["surcharge"] || summary["calculation_mode"] != w["mode"] {
			t.Errorf("%s webhook: got amount %v sale %v surcharge %v fees %v, want %v", w["status"],
				p["amount"], p["sale_amount"], p["surcharge"], summary["calculation_mode"], w)
		}
	}
}

// TestThreeDSCompletionSendsOneWebhook (spec 3, 6.2.5): nothing is sent
// while a purchase waits for its challenge; once the customer passes it
// and the merchant calls 3dsredirect, exactly one webhook carries the
// outcome and the 3-D Secure result.
func TestThreeDSCompletionSendsOneWebhook(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newReceiver(t, 200)
	m := onboard(env, rc.URL+"/hook", nil)
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, processor.CardThreeDSChallenge, "10.00", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example.com/back")
	}))
	ref, page := r.Str("purchase.purchase_reference"), r.Str("customer.authentication_redirect_url")
	if r.Str("purchase.status") != "REQUIRES_AUTHENTICATION" || !strings.Contains(page, paylink.ChallengePath) {
		t.Fatalf("purchase: got %s, want REQUIRES_AUTHENTICATION with a challenge page", r.Raw)
	}
	env.WaitWebhooks()
	if n := len(rc.requests()); n != 0 {
		t.Fatalf("while the challenge waits: got %d webhooks, want none", n)
	}
	capability := page[strings.Index(page, paylink.ChallengePath)+len(paylink.ChallengePath):]
	if _, err := env.Service.CompleteChallenge(context.Background(), capability, true); err != nil {
		t.Fatal(err)
	}
	done := env.Post("/v5/purchase/"+ref+"/3dsredirect", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if done.Str("purchase.status") != "APPROVED" {
		t.Fatalf("3dsredirect: got %s", done.Raw)
	}
	env.WaitWebhooks()
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("after the challenge: got %d webhooks, want 1", len(got))
	}
	if p := decode(t, got[0].Body); p["transaction_reference"] != ref || p["status"] != "APPROVED" || p["threeds_result"] != "authenticated" {
		t.Errorf("webhook: got status %v threeds_result %v, want APPROVED authenticated", p["status"], p["threeds_result"])
	}
}
