package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// Rules of the spec that a spec-to-test audit found no test for: each
// test here fails if paylink stops following one.

// TestEveryCallRefusesAnotherMerchantsCompanyToken (spec 5.2): a valid
// API key with another merchant's company token is 403
// company_token_mismatch on every call that takes one, and changes
// nothing.
func TestEveryCallRefusesAnotherMerchantsCompanyToken(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	held := hold(t, env, m, "10.00")
	sold := paid(t, env, m, "10.00")
	ddRef := debit(t, env, m, testAccount, "10")
	clearAll(t, env)
	card := tokenize(env, m, visa, withPermission("store_card_permission")).Str("card.token")
	if card == "" {
		t.Fatal("tokenisation gave no card token")
	}
	wrong := func(b map[string]any) map[string]any {
		if tok, ok := b["token"].(map[string]any); ok {
			if _, has := tok["company"]; has {
				tok["company"] = other.Creds.CompanyToken
			} else {
				tok["company_token"] = other.Creds.CompanyToken
			}
		} else {
			b["company_token"] = other.Creds.CompanyToken
		}
		return b
	}
	calls := []struct {
		name, path string
		body       map[string]any
	}{
		{"capture", "/v5/purchase/" + held + "/capture", map[string]any{
			"token":   map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
			"capture": map[string]any{"amount": "10.00", "currency": "AUD"}}},
		{"cancel", "/v5/purchase/" + held + "/cancel", map[string]any{
			"token": map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)}}},
		{"card refund", "/v5/purchase/" + sold + "/refund", refundBody(env, m, "10.00")},
		{"direct debit refund", "/v5/direct_debit/" + ddRef + "/refund", refundBody(env, m, "10")},
		{"tokenize card", "/v5/tokenize_card", map[string]any{"company_token": m.Creds.CompanyToken,
			"card": map[string]any{"number": visa, "expiry_month": "07", "expiry_year": 40, "cvc": "123", "holder_name": "Jo"}}},
		{"card look-up", "/v5/card", map[string]any{"company_token": m.Creds.CompanyToken, "card_token": card}},
		{"invalidate card token", "/v5/invalidate_card_token", map[string]any{"company_token": m.Creds.CompanyToken, "card_token": card}},
		{"invalidate card", "/v5/invalidate_card", map[string]any{"company_token": m.Creds.CompanyToken, "card_token": card}},
		{"surcharge", "/v5/surcharge", map[string]any{"token": map[string]any{"company": m.Creds.CompanyToken},
			"card":   map[string]any{"number": visa, "expiry_month": 12, "expiry_year": 40, "cvc": "123", "holder_name": "Jo"},
			"amount": "10.00", "currency": "AUD"}},
	}
	for _, c := range calls {
		if r := env.Post(c.path, m, wrong(c.body)); r.Status != http.StatusForbidden || r.Str("error_code") != paylink.CodeCompanyTokenMismatch {
			t.Errorf("%s with another merchant's company token: got %d %s, want 403 %s", c.name, r.Status, r.Raw, paylink.CodeCompanyTokenMismatch)
		}
	}
	if got := statusOf(t, env, m, held); got != "PRE_AUTHORISED" {
		t.Errorf("hold after the refused capture and cancel: got %s, want PRE_AUTHORISED", got)
	}
	if got := stored(t, env, m, sold).Refunded; got != 0 {
		t.Errorf("purchase after the refused refund: refunded %d, want 0", got)
	}
	if got := stored(t, env, m, ddRef).Refunded; got != 0 {
		t.Errorf("direct debit after the refused refund: refunded %d, want 0", got)
	}
	if r := lookup(env, m, card); r.Status != http.StatusOK { // an invalidated card's look-up is 409 card_token_invalid
		t.Errorf("card after the refused invalidations: got %d %s, want it still valid", r.Status, r.Raw)
	}
}

// TestCaptureRequestRules (spec 4.4): capture.amount and capture.currency
// are required, at most the currency's decimals, above zero; capture and
// cancel need a transaction token. Each refusal leaves the hold as it was.
func TestCaptureRequestRules(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := hold(t, env, m, "10.00")
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		field  string
	}{
		"no amount":            {func(b map[string]any) { delete(b["capture"].(map[string]any), "amount") }, "capture.amount"},
		"no currency":          {func(b map[string]any) { delete(b["capture"].(map[string]any), "currency") }, "capture.currency"},
		"three decimals":       {func(b map[string]any) { apitest.Set(b, "capture.amount", "1.001") }, "capture.amount"},
		"zero":                 {func(b map[string]any) { apitest.Set(b, "capture.amount", "0") }, "capture.amount"},
		"no transaction token": {func(b map[string]any) { delete(b["token"].(map[string]any), "transaction_token") }, "token.transaction_token"},
	} {
		r := capture(env, m, ref, "5.00", c.mutate)
		if r.Status != http.StatusBadRequest || fieldProblem(r, c.field) == "" {
			t.Errorf("capture, %s: got %d %s, want 400 naming %s", name, r.Status, r.Raw, c.field)
		}
	}
	r := env.Post("/v5/purchase/"+ref+"/cancel", m, map[string]any{"token": map[string]any{"company_token": m.Creds.CompanyToken}})
	if r.Status != http.StatusBadRequest || fieldProblem(r, "token.transaction_token") == "" {
		t.Errorf("cancel without a transaction token: got %d %s, want 400 naming token.transaction_token", r.Status, r.Raw)
	}
	if got := statusOf(t, env, m, ref); got != "PRE_AUTHORISED" {
		t.Errorf("hold after the refused calls: got %s, want PRE_AUTHORISED", got)
	}
}

// TestTransactionTokenLivesFiveMinutes (spec 2.7, 5.3, 8): a token is good
// for five minutes by default: used at 4m45s it pays, at 5m15s it is
// transaction_token_expired.
func TestTransactionTokenLivesFiveMinutes(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	fresh, stale := env.TransactionToken(m), env.TransactionToken(m)
	withToken := func(tok string) func(map[string]any) {
		return func(b map[string]any) { apitest.Set(b, "token.transaction_token", tok) }
	}
	env.Clock.Advance(4*time.Minute + 45*time.Second)
	if r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", withToken(fresh))); r.Str("purchase.status") != "APPROVED" {
		t.Errorf("token used at 4m45s: got %s, want APPROVED", r.Raw)
	}
	env.Clock.Advance(30 * time.Second)
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", withToken(stale)))
	if r.Str("error_code") != paylink.CodeTransactionTokenExpired {
		t.Errorf("token used at 5m15s: got %d %s, want %s", r.Status, r.Raw, paylink.CodeTransactionTokenExpired)
	}
}

// TestStatusOfAPurchaseAwaitingAuthentication (spec 4.8): a purchase
// waiting for its 3-D Secure challenge looks up as
// REQUIRES_AUTHENTICATION, with no transaction time yet.
func TestStatusOfAPurchaseAwaitingAuthentication(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := threeDSPurchase(env, m, processor.CardThreeDSChallenge).Str("purchase.purchase_reference")
	r := env.Post("/v5/purchase/"+ref, m, map[string]any{"company_token": m.Creds.CompanyToken})
	if r.Status != http.StatusOK || r.Str("status") != "REQUIRES_AUTHENTICATION" || r.Get("transaction_time_utc") != nil {
		t.Errorf("status look-up: got %d %s, want REQUIRES_AUTHENTICATION with a null transaction time", r.Status, r.Raw)
	}
	// A read without a body, by GET or HEAD, needs the API key alone.
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		if r := env.Do(method, "/v5/purchase/"+ref, m, nil); r.Status != http.StatusOK {
			t.Errorf("%s status look-up: got %d %s, want 200", method, r.Status, r.Raw)
		}
	}
}

// TestCardIsSingleUseWithoutPermission (spec 2.4): a purchase without
// store_card_permission answers card.multi_use false and no card token.
func TestCardIsSingleUseWithoutPermission(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00"))
	if r.Str("purchase.status") != "APPROVED" || r.Get("card.multi_use") != false || r.Get("card.token") != nil {
		t.Errorf("purchase without permission: got %s, want multi_use false and a null token", r.Raw)
	}
}

// TestSurchargePreviewRequestRules (spec 4.6): amount, currency, the
// company token and the card are required; amounts keep the currency's
// decimals.
func TestSurchargePreviewRequestRules(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body := func() map[string]any {
		return map[string]any{"token": map[string]any{"company": m.Creds.CompanyToken},
			"card":   map[string]any{"number": visa, "expiry_month": 12, "expiry_year": 40, "cvc": "123", "holder_name": "Jo"},
			"amount": "10.00", "currency": "AUD"}
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		field  string
	}{
		"no amount":        {func(b map[string]any) { delete(b, "amount") }, "amount"},
		"no currency":      {func(b map[string]any) { delete(b, "currency") }, "currency"},
		"no company token": {func(b map[string]any) { delete(b, "token") }, "token.company"},
		"no card":          {func(b map[string]any) { delete(b, "card") }, "card"},
		"three decimals":   {func(b map[string]any) { b["amount"] = "10.001" }, "amount"},
	} {
		b := body()
		c.mutate(b)
		r := env.Post("/v5/surcharge", m, b)
		named := false
		fields, _ := r.Get("fields").(map[string]any)
		for f := range fields {
			named = named || strings.HasPrefix(f, c.field)
		}
		if r.Status != http.StatusBadRequest || !named {
			t.Errorf("surcharge preview, %s: got %d %s, want 400 naming %s", name, r.Status, r.Raw, c.field)
		}
	}
}

// TestFieldLengthLimits (spec 4.3, 4.7, 4.12, 4.13, 8): one character over
// a field's limit is 400 naming it, and nothing is charged.
func TestFieldLengthLimits(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	over := strings.Repeat("x", 129)
	for _, field := range []string{"customer.reference", "customer.id"} {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", func(b map[string]any) { apitest.Set(b, field, over) }))
		if r.Status != http.StatusBadRequest || fieldProblem(r, field) == "" {
			t.Errorf("purchase %s of 129 characters: got %d %s, want 400 naming it", field, r.Status, r.Raw)
		}
	}
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", func(b map[string]any) { apitest.Set(b, "card.cvc", "12345") }))
	if r.Status != http.StatusBadRequest || fieldProblem(r, "card.cvc") == "" {
		t.Errorf("a 5-digit CVC: got %d %s, want 400 naming card.cvc", r.Status, r.Raw)
	}
	held := hold(t, env, m, "10.00")
	for _, field := range []string{"metadata.channel", "metadata.merchant_hash"} { // 4.4's metadata, on a capture
		r := capture(env, m, held, "10.00", func(b map[string]any) { apitest.Set(b, field, over) })
		if r.Status != http.StatusBadRequest || fieldProblem(r, field) == "" {
			t.Errorf("capture %s of 129 characters: got %d %s, want 400 naming it", field, r.Status, r.Raw)
		}
	}
	if got := statusOf(t, env, m, held); got != "PRE_AUTHORISED" {
		t.Errorf("hold after the refused captures: got %s, want PRE_AUTHORISED", got)
	}
	sold := paid(t, env, m, "10.00")
	for field, value := range map[string]string{"customer.customer_reference": over, "refund.invoice_number": strings.Repeat("x", 256)} {
		r := refund(env, m, sold, "1.00", func(b map[string]any) { apitest.Set(b, field, value) })
		if r.Status != http.StatusBadRequest || fieldProblem(r, field) == "" {
			t.Errorf("refund %s over its limit: got %d %s, want 400 naming it", field, r.Status, r.Raw)
		}
	}
	for _, field := range []string{"bank_account.holder_name", "customer.customer_reference", "customer.customer_email"} {
		r := env.Post("/v5/direct_debit", m, debitBody(env, m, testAccount, "10", func(b map[string]any) { apitest.Set(b, field, over) }))
		if r.Status != http.StatusBadRequest || fieldProblem(r, field) == "" {
			t.Errorf("direct debit %s of 129 characters: got %d %s, want 400 naming it", field, r.Status, r.Raw)
		}
	}
	if r := env.Post("/v5/transaction_token", m, map[string]any{"company_token": over}); r.Status != http.StatusBadRequest {
		t.Errorf("a company token of 129 characters: got %d %s, want 400", r.Status, r.Raw)
	}
	if got := stored(t, env, m, sold).Refunded; got != 0 {
		t.Errorf("refunded after the refused refunds: %d, want 0", got)
	}
}

// TestStoredCardWhateverTheOutcome (spec 4.3; api.md's decision): a card
// sent with store_card_permission is kept as a multi-use token even when
// the purchase is declined, so that the merchant can charge it again.
func TestStoredCardWhateverTheOutcome(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, processor.CardDecline, "5.00", withPermission("store_card_permission")))
	tok := r.Str("card.token")
	if r.Str("purchase.status") != "DECLINED" || r.Get("card.multi_use") != true || tok == "" {
		t.Fatalf("declined purchase with permission: got %s, want DECLINED with a multi-use card token", r.Raw)
	}
	if r := lookup(env, m, tok); r.Status != http.StatusOK || r.Get("multi_use") != true {
		t.Errorf("look-up of the kept card: got %d %s", r.Status, r.Raw)
	}
}

// TestLongestInvoiceNumberIsFound (spec 4.10): a purchase and a refund
// are found by an invoice number as long as the one they were made with,
// counted in characters: 255 "é" are 510 bytes, and the look-up had
// refused anything over 255 bytes.
func TestLongestInvoiceNumberIsFound(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	invoice, refundInvoice := strings.Repeat("é", paylink.MaxInvoiceLength), strings.Repeat("è", paylink.MaxInvoiceLength)
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", invoice) }))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: got %d %s", r.Status, r.Raw)
	}
	ref := r.Str("purchase.purchase_reference")
	if rf := refund(env, m, ref, "1.00", func(b map[string]any) { apitest.Set(b, "refund.invoice_number", refundInvoice) }); rf.Status != http.StatusOK {
		t.Fatalf("refund: got %d %s", rf.Status, rf.Raw)
	}
	company := map[string]any{"company_token": m.Creds.CompanyToken}
	if s := env.Post("/v5/purchase/"+url.PathEscape(invoice), m, company); s.Status != http.StatusOK || s.Str("purchase_reference") != ref {
		t.Errorf("purchase by its 255-character invoice number: got %d %s", s.Status, s.Raw)
	}
	if s := env.Post("/v5/refund/"+url.PathEscape(refundInvoice), m, company); s.Status != http.StatusOK {
		t.Errorf("refund by its 255-character invoice number: got %d %s", s.Status, s.Raw)
	}
}

// TestAnInvoiceNumberStoredBeforeTheInvisibleRuleIsFound: an invoice
// number with a character the invisible-character rule refuses now (a
// tag character, refused since the s23d sweep) that was stored before it
// is still found by a look-up, which applies no field rule.
func TestAnInvoiceNumberStoredBeforeTheInvisibleRuleIsFound(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, visa, "5.00", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "OLD-1") }))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: got %d %s", r.Status, r.Raw)
	}
	ref, old := r.Str("purchase.purchase_reference"), "OLD-1\U000e0041"
	if _, err := env.WriterDB(t).Exec(`UPDATE transactions SET invoice_number = $1 WHERE reference = $2`, old, ref); err != nil {
		t.Fatal(err)
	}
	company := map[string]any{"company_token": m.Creds.CompanyToken}
	if s := env.Post("/v5/purchase/"+url.PathEscape(old), m, company); s.Status != http.StatusOK || s.Str("purchase_reference") != ref {
		t.Errorf("purchase by its old invoice number: got %d %s, want %s", s.Status, s.Raw, ref)
	}
}
