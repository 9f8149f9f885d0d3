package api_test

import (
	"net/http"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// refund posts a refund of amount (AUD) with a fresh transaction token.
func refund(env *apitest.Env, m *apitest.Merchant, ref, amount string, mutate ...func(map[string]any)) apitest.Response {
	b := map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "2001:db8::1", "timezone": "UTC", "customer_reference": "c-1"},
		"refund":   map[string]any{"amount": amount, "currency": "AUD"},
	}
	for _, f := range mutate {
		f(b)
	}
	return env.Post("/v5/purchase/"+ref+"/refund", m, b)
}

// paid makes an approved purchase and returns its reference.
func paid(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount string) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, amount))
	if r.Str("purchase.status") != "APPROVED" {
		t.Fatalf("purchase: got %s, want APPROVED", r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

func TestRefunds(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	t.Run("full refund", func(t *testing.T) {
		ref := paid(t, env, m, "10.00")
		r := refund(env, m, ref, "10.00")
		want := map[string]string{"refund.status": "APPROVED", "refund.amount": "10", "refund.currency": "AUD",
			"refund.purchase_reference": ref, "card.number": "411111******1111", "card.brand": "VISA", "response_code": "success"}
		for path, w := range want {
			if got := r.Str(path); got != w {
				t.Errorf("%s: got %q, want %q", path, got, w)
			}
		}
		if r.Str("refund.refund_reference") == "" || r.Str("refund.transaction_time_utc") == "" {
			t.Errorf("refund reference and time: got %s, want both set", r.Raw)
		}
		expectError(t, refund(env, m, ref, "0.01"), http.StatusBadRequest, paylink.CodeAmountExceedsRefundable)
	})
	t.Run("several partial refunds up to the total", func(t *testing.T) {
		ref := paid(t, env, m, "10.00")
		for _, amount := range []string{"3.00", "3.00", "4.00"} {
			if r := refund(env, m, ref, amount); r.Str("refund.status") != "APPROVED" {
				t.Fatalf("partial refund %s: got %s, want APPROVED", amount, r.Raw)
			}
		}
		expectError(t, refund(env, m, ref, "0.01"), http.StatusBadRequest, paylink.CodeAmountExceedsRefundable)
		if got := stored(t, env, m, ref).Refunded; got != 1000 {
			t.Errorf("refunded: got %d, want 1000", got)
		}
	})
	t.Run("a captured hold refunds up to the captured total", func(t *testing.T) {
		ref := hold(t, env, m, "10.00")
		capture(env, m, ref, "4.00")
		expectError(t, refund(env, m, ref, "4.01"), http.StatusBadRequest, paylink.CodeAmountExceedsRefundable)
		if r := refund(env, m, ref, "4.00"); r.Str("refund.status") != "APPROVED" {
			t.Errorf("refund of the captured total: got %s, want APPROVED", r.Raw)
		}
	})
	notRefundable := map[string]func(t *testing.T) string{
		"declined": func(t *testing.T) string {
			return env.Post("/v5/purchase", m, env.CardPurchase(m, "4000000000000002", "10.00")).Str("purchase.purchase_reference")
		},
		"failed": func(t *testing.T) string {
			return env.Post("/v5/purchase", m, env.CardPurchase(m, "4000000000000119", "10.00")).Str("purchase.purchase_reference")
		},
		"uncaptured": func(t *testing.T) string { return hold(t, env, m, "10.00") },
		"cancelled": func(t *testing.T) string {
			ref := hold(t, env, m, "10.00")
			cancel(env, m, ref)
			return ref
		},
	}
	for name, setup := range notRefundable {
		t.Run(name+" is not refundable", func(t *testing.T) {
			expectError(t, refund(env, m, setup(t), "1.00"), http.StatusConflict, paylink.CodeNotRefundable)
		})
	}
	t.Run("currency must match", func(t *testing.T) {
		ref := paid(t, env, m, "10.00")
		r := refund(env, m, ref, "1.00", func(b map[string]any) { apitest.Set(b, "refund.currency", "USD") })
		expectError(t, r, http.StatusBadRequest, paylink.CodeCurrencyMismatch)
	})
	t.Run("customer ip_address and timezone are required", func(t *testing.T) {
		ref := paid(t, env, m, "10.00")
		r := refund(env, m, ref, "1.00", func(b map[string]any) { apitest.Delete(b, "customer.ip_address") })
		expectError(t, r, http.StatusBadRequest, paylink.CodeInvalidRequest)
	})
	t.Run("another merchant's purchase is unknown", func(t *testing.T) {
		expectError(t, refund(env, other, paid(t, env, m, "10.00"), "1.00"), http.StatusNotFound, paylink.CodeNotFound)
	})
}

// TestLargeRefund: a refund above 2^31-1 minor units is an ordinary
// refund on both engines (on PostgreSQL it was a 500: the amount was sent
// as a 32-bit parameter).
func TestLargeRefund(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		ref := paid(t, env, m, "25000000.00")
		if r := refund(env, m, ref, "25000000.00"); r.Status != http.StatusOK || r.Str("refund.status") != "APPROVED" {
			t.Errorf("refund of 25,000,000.00: got %d %s, want 200 APPROVED", r.Status, r.Raw)
		}
		if got := stored(t, env, m, ref).Refunded; got != 2_500_000_000 {
			t.Errorf("refunded: got %d, want 2500000000", got)
		}
	})
}

func TestRefundStatus(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	ref := paid(t, env, m, "10.00")
	r := refund(env, m, ref, "2.50", func(b map[string]any) { apitest.Set(b, "refund.invoice_number", 4711) })
	refundRef := r.Str("refund.refund_reference")
	for name, key := range map[string]string{"refund reference": refundRef, "invoice number": "4711", "purchase reference": ref} {
		t.Run(name, func(t *testing.T) {
			got := env.Post("/v5/refund/"+key, m, map[string]any{"company_token": m.Creds.CompanyToken})
			if got.Status != http.StatusOK || got.Str("status") != "APPROVED" || got.Str("amount") != "2.5" ||
				got.Str("refund_reference") != refundRef || got.Str("transaction_time_utc") == "" {
				t.Errorf("got %d %s, want 200 APPROVED 2.5 %s", got.Status, got.Raw, refundRef)
			}
		})
	}
	t.Run("another merchant's refund is unknown", func(t *testing.T) {
		got := env.Post("/v5/refund/"+refundRef, other, map[string]any{"company_token": other.Creds.CompanyToken})
		expectError(t, got, http.StatusNotFound, paylink.CodeNotFound)
	})
	t.Run("company token of another merchant", func(t *testing.T) {
		got := env.Post("/v5/refund/"+refundRef, m, map[string]any{"company_token": other.Creds.CompanyToken})
		expectError(t, got, http.StatusForbidden, paylink.CodeCompanyTokenMismatch)
	})
}

// TestRefundStatusByThePurchasesInvoiceNumber: a merchant that keys
// everything by its order number finds a refund by the purchase's
// invoice number (spec 4.8: "sent as purchase.invoice_number or
// refund.invoice_number"), where it was 404 (the twenty-fifth stop's
// spec sweep); a refund's own invoice number comes first.
func TestRefundStatusByThePurchasesInvoiceNumber(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m, other := env.Onboard(), env.Onboard()
		order := func(invoice string) string {
			t.Helper()
			r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "10.00", func(b map[string]any) {
				apitest.Set(b, "purchase.invoice_number", invoice)
			}))
			if r.Str("purchase.status") != "APPROVED" {
				t.Fatalf("purchase %s: got %s, want APPROVED", invoice, r.Raw)
			}
			return r.Str("purchase.purchase_reference")
		}
		refunded := func(ref, amount string, mutate ...func(map[string]any)) string {
			t.Helper()
			r := refund(env, m, ref, amount, mutate...)
			if r.Str("refund.status") != "APPROVED" {
				t.Fatalf("refund of %s: got %s, want APPROVED", ref, r.Raw)
			}
			return r.Str("refund.refund_reference")
		}
		lookUp := func(key string, as *apitest.Merchant) apitest.Response {
			return env.Post("/v5/refund/"+key, as, map[string]any{"company_token": as.Creds.CompanyToken})
		}
		first := refunded(order("ORD-555"), "1.00")
		if got := lookUp("ORD-555", m); got.Status != http.StatusOK || got.Str("refund_reference") != first || got.Str("amount") != "1" {
			t.Errorf("by the purchase's invoice number: got %d %s, want 200 %s", got.Status, got.Raw, first)
		}
		// A refund's own invoice number equal to another order's.
		refunded(order("ORD-600"), "2.00")
		own := refunded(order("ORD-700"), "3.00", func(b map[string]any) { apitest.Set(b, "refund.invoice_number", "ORD-600") })
		if got := lookUp("ORD-600", m); got.Str("refund_reference") != own {
			t.Errorf("a refund invoice number beside a purchase's: got %d %s, want the refund %s", got.Status, got.Raw, own)
		}
		order("ORD-800")
		expectError(t, lookUp("ORD-800", m), http.StatusNotFound, paylink.CodeNotFound)
		expectError(t, lookUp("ORD-555", other), http.StatusNotFound, paylink.CodeNotFound)
	})
}

func TestTenRacingRefundsNeverExceedTheTotal(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := paid(t, env, m, "10.00")
	toks := make([]string, 10)
	for i := range toks {
		toks[i] = env.TransactionToken(m)
	}
	rs := race(10, func(i int) apitest.Response {
		return env.Post("/v5/purchase/"+ref+"/refund", m, map[string]any{
			"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": toks[i]},
			"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "Australia/Sydney"},
			"refund":   map[string]any{"amount": "3.00", "currency": "AUD"}})
	})
	approved := 0
	for _, r := range rs {
		switch {
		case r.Status == http.StatusOK && r.Str("refund.status") == "APPROVED":
			approved++
		case r.Str("response_code") != paylink.CodeAmountExceedsRefundable:
			t.Errorf("loser: got %d %s, want %s", r.Status, r.Raw, paylink.CodeAmountExceedsRefundable)
		}
	}
	if approved != 3 {
		t.Errorf("approved refunds: got %d, want 3 (3.00 each of 10.00)", approved)
	}
	if got := stored(t, env, m, ref).Refunded; got != 900 {
		t.Errorf("refunded total: got %d, want 900", got)
	}
}

// TestRefundOfAWholeTotalAboveMaxAmount: a purchase of the largest amount
// with its surcharge has a total above MaxAmount, and one refund of that
// whole total is approved (a refund is held to what is left, not to the
// largest purchase amount); one cent more is refused as too much to
// refund.
func TestRefundOfAWholeTotalAboveMaxAmount(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "10000000000.00", func(b map[string]any) {
		apitest.Set(b, "purchase.should_service_apply_surcharge", true)
	}))
	total := r.Str("purchase.total_amount")
	if r.Str("purchase.status") != "APPROVED" || total == "10000000000" {
		t.Fatalf("purchase: got %s, want APPROVED with a surcharge", r.Raw)
	}
	ref := r.Str("purchase.purchase_reference")
	aud, _ := paylink.LookupCurrency("AUD")
	cents, err := paylink.ParseTotal(total, aud)
	if err != nil || cents <= paylink.MaxAmount {
		t.Fatalf("total %s: %d, %v; want above MaxAmount", total, cents, err)
	}
	oneMore := paylink.FormatAmount(cents+1, aud)
	if over := refund(env, m, ref, oneMore); over.Str("error_code") != paylink.CodeAmountExceedsRefundable {
		t.Errorf("refund of %s: got %s, want %s", oneMore, over.Raw, paylink.CodeAmountExceedsRefundable)
	}
	if whole := refund(env, m, ref, total); whole.Status != http.StatusOK || whole.Str("refund.status") != "APPROVED" {
		t.Errorf("refund of the whole total %s: got %d %s, want APPROVED", total, whole.Status, whole.Raw)
	}
}
