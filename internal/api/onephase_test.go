package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// TestPurchaseInOneTransaction: through the in-process sandbox a purchase
// is one database transaction (one Update, no PROCESSING row), and every
// answer it gives and stores is the one the two-transaction path (how a
// remote acquirer's payments are recorded, Config.RecordProcessingFirst)
// gives and stores: the response, the status look-up, the ledger's
// balances and balance transactions, and the webhook payload, for every
// sandbox outcome, holds, 3-D Secure and stored cards.
func TestPurchaseInOneTransaction(t *testing.T) {
	withHook := func(n *paylink.NewMerchant) { n.Settings.Webhook.URL = "https://hooks.example.com/paylink" }
	one := apitest.Start(t, apitest.Options{})
	two := apitest.Start(t, apitest.Options{Config: paylink.Config{RecordProcessingFirst: true}})
	m1, m2 := one.Onboard(withHook), two.Onboard(withHook)
	// Store updates are counted on services of their own, with no webhook
	// to deliver, so that only the purchase writes while it is counted.
	c1, c2 := apitest.Start(t, apitest.Options{}), apitest.Start(t, apitest.Options{Config: paylink.Config{RecordProcessingFirst: true}})
	q1, q2 := c1.Onboard(), c2.Onboard()
	tests := []struct {
		name, card, status string
		mutate             func(map[string]any)
	}{
		{"approved", "4111111111111111", "APPROVED", nil},
		{"surcharged", "5555555555554444", "APPROVED", func(b map[string]any) { apitest.Set(b, "purchase.should_service_apply_surcharge", true) }},
		{"declined", "4000000000000002", "DECLINED", nil},
		{"insufficient funds", "4000000000009995", "DECLINED", nil},
		{"failed", "4000000000000119", "FAILED", nil},
		{"pre-authorised", "4111111111111111", "PRE_AUTHORISED", func(b map[string]any) { apitest.Set(b, "purchase.should_service_apply_pre_authorisation", true) }},
		{"3-D Secure challenge", "4000000000003220", "REQUIRES_AUTHENTICATION", threeDS},
		{"3-D Secure frictionless", "4000000000003063", "APPROVED", threeDS},
		{"stored card", "4111111111111111", "APPROVED", func(b map[string]any) { apitest.Set(b, "customer.store_card_permission", true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if u1, u2 := purchaseUpdates(t, c1, q1, tt.card, tt.mutate), purchaseUpdates(t, c2, q2, tt.card, tt.mutate); u1 != 1 || u2 != 2 {
				t.Errorf("got %d and %d store updates, want 1 (in process) and 2 (PROCESSING first)", u1, u2)
			}
			r1, r2 := purchase(t, one, m1, tt.card, tt.mutate), purchase(t, two, m2, tt.card, tt.mutate)
			if got := r1.Str("purchase.status"); got != tt.status {
				t.Errorf("got status %s, want %s", got, tt.status)
			}
			sameJSON(t, "purchase response", r1.Raw, r2.Raw)
			ref1, ref2 := r1.Str("purchase.purchase_reference"), r2.Str("purchase.purchase_reference")
			s1 := one.Post("/v5/purchase/"+ref1, m1, map[string]any{"company_token": m1.Creds.CompanyToken})
			s2 := two.Post("/v5/purchase/"+ref2, m2, map[string]any{"company_token": m2.Creds.CompanyToken})
			sameJSON(t, "status look-up", s1.Raw, s2.Raw)
			sameJSON(t, "webhook payload", webhookPayload(t, one, m1, ref1), webhookPayload(t, two, m2, ref2))
		})
	}
	t.Run("paid by a stored card's token", func(t *testing.T) {
		byToken := func(env *apitest.Env, m *apitest.Merchant) func(map[string]any) {
			stored := purchase(t, env, m, "4111111111111111", func(b map[string]any) { apitest.Set(b, "customer.store_card_permission", true) })
			return func(b map[string]any) { b["card"] = map[string]any{"token": stored.Str("card.token")} }
		}
		if u1, u2 := purchaseUpdates(t, c1, q1, "", byToken(c1, q1)), purchaseUpdates(t, c2, q2, "", byToken(c2, q2)); u1 != 1 || u2 != 2 {
			t.Errorf("got %d and %d store updates, want 1 (in process) and 2 (PROCESSING first)", u1, u2)
		}
		sameJSON(t, "purchase response", purchase(t, one, m1, "", byToken(one, m1)).Raw, purchase(t, two, m2, "", byToken(two, m2)).Raw)
	})
	sameJSON(t, "balance", one.Do(http.MethodGet, "/v5/balance", m1, nil).Raw, two.Do(http.MethodGet, "/v5/balance", m2, nil).Raw)
	sameJSON(t, "balance transactions", one.Do(http.MethodGet, "/v5/balance_transactions", m1, nil).Raw,
		two.Do(http.MethodGet, "/v5/balance_transactions", m2, nil).Raw)
}

func threeDS(b map[string]any) {
	apitest.Set(b, "customer.should_service_apply_authentication", true)
	apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example.com/back")
}

// purchase makes a card purchase of 25.00 and returns its response.
func purchase(t *testing.T, env *apitest.Env, m *apitest.Merchant, card string, mutate func(map[string]any)) apitest.Response {
	t.Helper()
	var muts []func(map[string]any)
	if mutate != nil {
		muts = append(muts, mutate)
	}
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, card, "25.00", muts...))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: HTTP %d %s", r.Status, r.Raw)
	}
	return r
}

// purchaseUpdates makes a purchase and returns how many store updates it
// took (env must have nothing else to write meanwhile).
func purchaseUpdates(t *testing.T, env *apitest.Env, m *apitest.Merchant, card string, mutate func(map[string]any)) int64 {
	t.Helper()
	// The fewest of three purchases: a background job's write (the
	// service's jobs run beside it, late under load) only adds to one.
	fewest := int64(-1)
	for range 3 {
		_, before := env.Store.WriterStats()
		purchase(t, env, m, card, mutate)
		_, after := env.Store.WriterStats()
		if n := after - before; fewest < 0 || n < fewest {
			fewest = n
		}
	}
	return fewest
}

// webhookPayload is the payload enqueued for ref ("" when none was).
func webhookPayload(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) string {
	t.Helper()
	ds, err := env.Service.ListWebhooks(context.Background(), paylink.WebhookFilter{MerchantID: m.ID, Reference: ref, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) == 0 {
		return "null"
	}
	return string(ds[0].Payload)
}

// variable holds the keys whose values differ between two equal payments
// on two services: ids, times, tokens, per-merchant fingerprints and
// secrets in URLs.
var variable = map[string]bool{
	"purchase_reference": true, "reference": true, "transaction_reference": true, "transaction_time_utc": true,
	"token": true, "card_token": true, "authentication_redirect_url": true, "finger_print": true, "fingerprint": true, "authentication_url": true, "id": true,
	"created": true, "created_at": true, "available_on": true, "merchant_id": true, "source": true,
	"acquirer_transaction_id": true, "acquirer_trans_id": true, "ds_trans_id": true, "threeds_ds_trans_id": true,
	"customer_id": true, "auth_code": true, "transaction_auth_code": true, "mid": true,
}

// sameJSON compares two JSON documents with the variable values masked.
func sameJSON(t *testing.T, what, a, b string) {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("%s: %v in %s", what, err, a)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("%s: %v in %s", what, err, b)
	}
	if ma, mb := mask(va), mask(vb); !reflect.DeepEqual(ma, mb) {
		t.Errorf("%s differs:\n in one transaction: %s\n PROCESSING first:   %s", what, a, b)
	}
}

func mask(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if variable[k] && x != nil {
				x = "*"
			}
			out[k] = mask(x)
		}
		return out
	case []any:
		// Compared as multisets: equal payments made in the same instant
		// of the test clock list in the order of their random ids.
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = mask(x)
		}
		slices.SortFunc(out, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return out
	}
	return v
}

// failingSandbox is the sandbox acquirer, answering in process, except
// that its first authorisation fails with err: what an in-process
// processor might still do.
type failingSandbox struct {
	processor.Sandbox
	err    error
	failed atomic.Bool
}

func (p *failingSandbox) AuthorizeInProcess(ctx context.Context, req paylink.AuthRequest) (paylink.AuthResult, error) {
	if !p.failed.Swap(true) {
		return paylink.AuthResult{}, p.err
	}
	return p.Sandbox.AuthorizeInProcess(ctx, req)
}

// TestInProcessProcessorErrors: asked inside the purchase's transaction,
// a processor error is recorded as FAILED as it would be with PROCESSING
// first, while an answer lost (the outcome unknown) rolls the whole
// purchase back: 503 processor_unavailable, no transaction stored, and
// the transaction token still unspent.
func TestInProcessProcessorErrors(t *testing.T) {
	t.Run("error", func(t *testing.T) {
		env := apitest.Start(t, apitest.Options{Processor: &failingSandbox{err: errors.New("connection refused")}})
		m := env.Onboard()
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00"))
		if r.Status != http.StatusOK || r.Str("purchase.status") != "FAILED" {
			t.Errorf("got HTTP %d %s, want 200 and status FAILED", r.Status, r.Raw)
		}
	})
	t.Run("answer lost", func(t *testing.T) {
		env := apitest.Start(t, apitest.Options{Processor: &failingSandbox{err: fmt.Errorf("reset: %w", paylink.ErrOutcomeUnknown)}})
		m := env.Onboard()
		body := env.CardPurchase(m, "4111111111111111", "5.00", func(b map[string]any) {
			apitest.Set(b, "purchase.invoice_number", "LOST-IN-PROCESS")
		})
		r := env.Post("/v5/purchase", m, body)
		if r.Status != http.StatusServiceUnavailable || r.Str("error_code") != paylink.CodeProcessorUnavailable {
			t.Errorf("got HTTP %d %s, want 503 %s", r.Status, r.Raw, paylink.CodeProcessorUnavailable)
		}
		token := body["token"].(map[string]any)["transaction_token"].(string)
		assertNothingChanged(t, env, m, token, "LOST-IN-PROCESS")
	})
}
