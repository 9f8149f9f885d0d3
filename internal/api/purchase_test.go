package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

func TestPurchaseOutcomes(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		card, status, code, processorHint string
	}{
		{card: "4111111111111111", status: "APPROVED", code: "success"},
		{card: "4000056655665556", status: "APPROVED", code: "success"},
		{card: "5555555555554444", status: "APPROVED", code: "success"},
		{card: "378282246310005", status: "APPROVED", code: "success"},
		{card: "4000008260000000", status: "APPROVED", code: "success"},
		{card: "4000000000000002", status: "DECLINED", code: "declined", processorHint: "do not honour"},
		{card: "4000000000009995", status: "DECLINED", code: "declined", processorHint: "insufficient funds"},
		{card: "4000000000000119", status: "FAILED", code: "failed", processorHint: "processing error"},
		{card: "4000000000003220", status: "APPROVED", code: "success"},
		{card: "4000000000003063", status: "APPROVED", code: "success"},
	}
	for _, tt := range tests {
		t.Run(tt.card, func(t *testing.T) {
			r := env.Post("/v5/purchase", m, env.CardPurchase(m, tt.card, "25.00"))
			if r.Status != http.StatusOK {
				t.Fatalf("got HTTP %d %s, want 200", r.Status, r.Raw)
			}
			if got := r.Str("purchase.status"); got != tt.status {
				t.Errorf("got status %q, want %q", got, tt.status)
			}
			if got := r.Str("response_code"); got != tt.code {
				t.Errorf("got response_code %q, want %q", got, tt.code)
			}
			if !strings.HasPrefix(r.Str("purchase.purchase_reference"), "pr_") {
				t.Errorf("got purchase_reference %q, want a pr_ reference kept for reconciliation", r.Str("purchase.purchase_reference"))
			}
			if msg := strings.ToLower(r.Str("response_message")); !strings.Contains(msg, tt.processorHint) {
				t.Errorf("got response_message %q, want it to mention %q", msg, tt.processorHint)
			}
			if r.Str("purchase.total_amount") != "25" || r.Str("purchase.amount") != "25" {
				t.Errorf("got amount %s total %s, want 25 and 25", r.Str("purchase.amount"), r.Str("purchase.total_amount"))
			}
			if r.Get("card.token") != nil {
				t.Errorf("got card.token %v without store_card_permission, want null", r.Get("card.token"))
			}
		})
	}
}

func TestPurchaseResponseShape(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4000056655665556", "10.50", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", 123) // integers where strings are documented
	}))
	want := map[string]string{
		"card.number": "400005******5556", "card.brand": "VISA", "card.funding": "debit", "card.country": "AU",
		"card.expiry_month": "12", "card.holder_name": "Jo Citizen", "purchase.status": "APPROVED",
		"purchase.amount": "10.5", "purchase.surcharge_amount": "0", "purchase.total_amount": "10.5",
		"purchase.currency": "AUD", "purchase.pre_authorised_amount": "0.00", "purchase.invoice_number": "123",
	}
	for path, w := range want {
		if got := r.Str(path); got != w {
			t.Errorf("%s: got %q, want %q", path, got, w)
		}
	}
	if fp := r.Str("card.finger_print"); len(fp) != 64 {
		t.Errorf("got finger_print %q, want 64 hex characters", fp)
	}
	if _, err := time.Parse("2006-01-02 03:04:05 PM", r.Str("purchase.transaction_time_utc")); err != nil {
		t.Errorf("transaction_time_utc %q: %v", r.Str("purchase.transaction_time_utc"), err)
	}
	if v, present := r.Body["customer"].(map[string]any)["authentication_redirect_url"]; !present || v != nil {
		t.Errorf("got customer.authentication_redirect_url %v (present %v), want null without 3-D Secure", v, present)
	}
	if r.Get("purchase.pre_authorised") != false {
		t.Errorf("got pre_authorised %v, want false", r.Get("purchase.pre_authorised"))
	}
}

func TestStoredCardToken(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	first := env.Post("/v5/purchase", m, env.CardPurchase(m, "5555555555554444", "5.00", func(b map[string]any) {
		apitest.Set(b, "customer.store_card_permission", "true")
	}))
	token := first.Str("card.token")
	if len(token) != 128 || first.Get("card.multi_use") != true || first.Str("customer.id") == "" {
		t.Fatalf("got token %q multi_use %v customer %q, want a 128-character multi-use token and a customer id",
			token, first.Get("card.multi_use"), first.Str("customer.id"))
	}
	for i := range 2 {
		b := env.CardPurchase(m, "", "7.00", func(b map[string]any) {
			b["card"] = map[string]any{"token": token, "number": ""}
		})
		r := env.Post("/v5/purchase", m, b)
		if r.Str("purchase.status") != "APPROVED" || r.Str("card.number") != "555555******4444" || r.Str("card.token") != token {
			t.Errorf("purchase %d with the token: got %d %s", i, r.Status, r.Raw)
		}
		if r.Str("card.finger_print") != first.Str("card.finger_print") {
			t.Errorf("got fingerprint %s, want the first purchase's %s", r.Str("card.finger_print"), first.Str("card.finger_print"))
		}
	}
	other := env.Onboard()
	r := env.Post("/v5/purchase", other, env.CardPurchase(other, "", "7.00", func(b map[string]any) {
		b["card"] = map[string]any{"token": token}
	}))
	if r.Status != http.StatusNotFound || r.Str("response_code") != "not_found" {
		t.Errorf("another merchant's token: got %d %s, want 404 not_found", r.Status, r.Raw)
	}
}

func TestSurchargePreviewEqualsApplied(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		card, amount, surcharge, percent, funding string
	}{
		{card: "4000056655665556", amount: "100.00", surcharge: "0.5", percent: "0.5", funding: "debit"},
		{card: "4111111111111111", amount: "10.50", surcharge: "0.13", percent: "1.2", funding: "credit"}, // 0.126 rounds half-up
		{card: "378282246310005", amount: "19.99", surcharge: "0.5", percent: "2.5", funding: "credit"},   // 0.49975
		{card: "4000008260000000", amount: "0.17", surcharge: "0", percent: "2.9", funding: "credit"},     // 0.00493
		{card: "5555555555554444", amount: "1234.56", surcharge: "14.81", percent: "1.2", funding: "credit"},
	}
	for _, tt := range tests {
		t.Run(tt.card+"/"+tt.amount, func(t *testing.T) {
			preview := env.Post("/v5/surcharge", m, map[string]any{
				"token":  map[string]any{"company": m.Creds.CompanyToken},
				"card":   map[string]any{"number": tt.card, "expiry_month": 12, "expiry_year": 40, "holder_name": "Jo"},
				"amount": tt.amount, "currency": "AUD",
			})
			if preview.Status != http.StatusOK || preview.Str("surcharge.amount") != tt.surcharge || preview.Str("surcharge.percent") != tt.percent {
				t.Fatalf("preview: got %d %s, want surcharge %s at %s%%", preview.Status, preview.Raw, tt.surcharge, tt.percent)
			}
			if preview.Str("card.funding") != tt.funding || preview.Str("surcharge.currency") != "AUD" {
				t.Errorf("preview card: got %s", preview.Raw)
			}
			r := env.Post("/v5/purchase", m, env.CardPurchase(m, tt.card, tt.amount, func(b map[string]any) {
				apitest.Set(b, "purchase.should_service_apply_surcharge", true)
			}))
			if got := r.Str("purchase.surcharge_amount"); got != tt.surcharge {
				t.Errorf("applied surcharge: got %s, want the previewed %s", got, tt.surcharge)
			}
		})
	}
}

func TestSurchargePreviewByToken(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	first := env.Post("/v5/purchase", m, env.CardPurchase(m, "378282246310005", "1.00", func(b map[string]any) {
		apitest.Set(b, "customer.store_card_permission", true)
	}))
	r := env.Post("/v5/surcharge", m, map[string]any{
		"token": map[string]any{"company": m.Creds.CompanyToken}, "card": map[string]any{"token": first.Str("card.token")},
		"amount": 200, "currency": "AUD",
	})
	if r.Str("surcharge.amount") != "5" || r.Str("card.brand") != "AMEX" {
		t.Errorf("got %d %s, want an amex surcharge of 5", r.Status, r.Raw)
	}
}

func TestTransactionTokenRace(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body := env.CardPurchase(m, "4111111111111111", "3.00")
	var ok, conflict atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := env.Post("/v5/purchase", m, body)
			switch {
			case r.Status == http.StatusOK:
				ok.Add(1)
			case r.Status == http.StatusConflict && r.Str("response_code") == "transaction_token_used":
				conflict.Add(1)
			default:
				t.Errorf("got %d %s, want 200 or 409 transaction_token_used", r.Status, r.Raw)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || conflict.Load() != 15 {
		t.Fatalf("got %d successes and %d conflicts, want exactly 1 and 15", ok.Load(), conflict.Load())
	}
}

func TestTransactionTokenRules(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	r := env.Post("/v5/transaction_token", m, map[string]any{"company_token": m.Creds.CompanyToken})
	if tok := r.Str("transaction_token"); len(tok) != 128 || strings.Trim(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Errorf("got token %q, want 128 alphanumeric characters", tok)
	}
	if r.Str("company_token") != m.Creds.CompanyToken {
		t.Errorf("got company_token echo %q, want the request's", r.Str("company_token"))
	}

	expired := env.CardPurchase(m, "4111111111111111", "1.00")
	env.Clock.Advance(5*time.Minute + time.Second)
	if r := env.Post("/v5/purchase", m, expired); r.Status != http.StatusBadRequest || r.Str("response_code") != "transaction_token_expired" {
		t.Errorf("expired token: got %d %s, want 400 transaction_token_expired", r.Status, r.Raw)
	}

	foreign := env.CardPurchase(other, "4111111111111111", "1.00")
	apitest.Set(foreign, "token.company_token", m.Creds.CompanyToken)
	if r := env.Post("/v5/purchase", m, foreign); r.Status != http.StatusBadRequest || r.Str("response_code") != "transaction_token_invalid" {
		t.Errorf("another merchant's token: got %d %s, want 400 transaction_token_invalid", r.Status, r.Raw)
	}

	mismatch := env.CardPurchase(m, "4111111111111111", "1.00")
	apitest.Set(mismatch, "token.company_token", other.Creds.CompanyToken)
	if r := env.Post("/v5/purchase", m, mismatch); r.Status != http.StatusForbidden || r.Str("response_code") != "company_token_mismatch" {
		t.Errorf("company token of another merchant: got %d %s, want 403", r.Status, r.Raw)
	}
	if r := env.Post("/v5/transaction_token", m, map[string]any{"company_token": other.Creds.CompanyToken}); r.Status != http.StatusForbidden {
		t.Errorf("transaction token with another company token: got %d, want 403", r.Status)
	}
	// The token of the refused request was not consumed.
	if r := env.Post("/v5/purchase", m, mismatch); r.Status != http.StatusForbidden {
		t.Errorf("retry: got %d", r.Status)
	}
}

func TestAuthentication(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	body := map[string]any{"company_token": m.Creds.CompanyToken}
	for name, key := range map[string]string{"missing": "", "wrong": "pl_sk_wrong", "basic scheme": "Basic " + m.Creds.APIKey} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/transaction_token", strings.NewReader(`{"company_token":"x"}`))
			if key != "" {
				if strings.HasPrefix(key, "Basic") {
					req.Header.Set("Authorization", key)
				} else {
					req.Header.Set("Authorization", "Bearer "+key)
				}
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var out map[string]any
			json.NewDecoder(res.Body).Decode(&out)
			if res.StatusCode != http.StatusUnauthorized || out["response_code"] != "unauthorized" || out["error_code"] != "unauthorized" {
				t.Errorf("got %d %v, want 401 unauthorized", res.StatusCode, out)
			}
		})
	}
	if r := env.Post("/v5/transaction_token", m, body); r.Status != http.StatusOK {
		t.Errorf("valid key: got %d", r.Status)
	}
}

func TestPurchaseStatus(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m, other := env.Onboard(), env.Onboard()
	p := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "42.00", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "INV-77")
		apitest.Set(b, "purchase.should_service_apply_surcharge", "true")
	}))
	ref := p.Str("purchase.purchase_reference")
	status := map[string]any{"company_token": m.Creds.CompanyToken}
	for _, key := range []string{ref, "INV-77"} {
		r := env.Post("/v5/purchase/"+key, m, status)
		if r.Status != 200 || r.Str("status") != "APPROVED" || r.Str("amount") != "42.5" || r.Str("currency") != "AUD" || r.Str("transaction_time_utc") == "" {
			t.Errorf("status by %s: got %d %s, want APPROVED 42.5 AUD", key, r.Status, r.Raw)
		}
	}
	if r := env.Do(http.MethodGet, "/v5/purchase/"+ref, m, nil); r.Status != 200 || r.Str("status") != "APPROVED" {
		t.Errorf("GET without a body: got %d %s", r.Status, r.Raw)
	}
	declined := env.Post("/v5/purchase", m, env.CardPurchase(m, "4000000000000002", "1.00"))
	if r := env.Post("/v5/purchase/"+declined.Str("purchase.purchase_reference"), m, status); r.Str("status") != "DECLINED" {
		t.Errorf("declined status: got %s", r.Raw)
	}
	otherStatus := map[string]any{"company_token": other.Creds.CompanyToken}
	for _, key := range []string{ref, "INV-77", "pr_doesnotexist"} {
		if r := env.Post("/v5/purchase/"+key, other, otherStatus); r.Status != http.StatusNotFound || r.Get("purchase") != nil {
			t.Errorf("another merchant's %s: got %d %s, want 404", key, r.Status, r.Raw)
		}
	}
	if r := env.Post("/v5/purchase/"+ref, m, map[string]any{}); r.Status != http.StatusBadRequest {
		t.Errorf("POST without company_token: got %d, want 400", r.Status)
	}
}

func TestLenientDecoding(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	raw := `{"purchase":{"currency":"aud","amount":"100.50","should_service_apply_surcharge":"","invoice_number":987654},
		"card":{"cvc":"","holder_name":"Jo","expiry_year":"` + env.Clock.Now().AddDate(2, 0, 0).Format("06") + `","expiry_month":"07","number":"4111 1111 1111 1111","token":""},
		"customer":{"timezone":"UTC","ip_address":"2001:db8::1","accepted_terms_and_conditions":"true","customer_reference":"C-1","store_card_permission":null},
		"token":{"transaction_token":"` + env.TransactionToken(m) + `","company_token":"` + m.Creds.CompanyToken + `"},
		"unknown_extra":{"anything":[1,2,3]}}`
	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/purchase", strings.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Purchase struct{ Status, Currency, Invoice string } `json:"purchase"`
	}
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 200 || out.Purchase.Status != "APPROVED" || out.Purchase.Currency != "AUD" {
		t.Errorf("got %d %+v, want an approved AUD purchase", res.StatusCode, out)
	}
}

// badInputs is every kind of bad purchase input; each must get a 4xx and
// store nothing.
var badInputs = []struct {
	name   string
	mutate func(b map[string]any)
	status int
	field  string
}{
	{"missing amount", func(b map[string]any) { apitest.Delete(b, "purchase.amount") }, 400, "purchase.amount"},
	{"missing currency", func(b map[string]any) { apitest.Delete(b, "purchase.currency") }, 400, "purchase.currency"},
	{"missing company token", func(b map[string]any) { apitest.Delete(b, "token.company_token") }, 400, "token.company_token"},
	{"missing transaction token", func(b map[string]any) { apitest.Delete(b, "token.transaction_token") }, 400, "token.transaction_token"},
	{"missing ip address", func(b map[string]any) { apitest.Delete(b, "customer.ip_address") }, 400, "customer.ip_address"},
	{"missing timezone", func(b map[string]any) { apitest.Delete(b, "customer.timezone") }, 400, "customer.timezone"},
	{"missing card", func(b map[string]any) { delete(b, "card") }, 400, "card"},
	{"customer not an object", func(b map[string]any) { b["customer"] = 5 }, 400, "customer"},
	{"missing card number", func(b map[string]any) { apitest.Delete(b, "card.number") }, 400, "card.number"},
	{"missing expiry month", func(b map[string]any) { apitest.Delete(b, "card.expiry_month") }, 400, "card.expiry_month"},
	{"missing expiry year", func(b map[string]any) { apitest.Delete(b, "card.expiry_year") }, 400, "card.expiry_year"},
	{"amount as object", func(b map[string]any) { apitest.Set(b, "purchase.amount", map[string]any{"v": 1}) }, 400, "purchase.amount"},
	{"amount not a number", func(b map[string]any) { apitest.Set(b, "purchase.amount", "ten") }, 400, "purchase.amount"},
	{"amount with three decimals", func(b map[string]any) { apitest.Set(b, "purchase.amount", json.Number("10.505")) }, 400, "purchase.amount"},
	{"amount zero", func(b map[string]any) { apitest.Set(b, "purchase.amount", 0) }, 400, "purchase.amount"},
	{"amount negative", func(b map[string]any) { apitest.Set(b, "purchase.amount", -5) }, 400, "purchase.amount"},
	{"amount in exponent form", func(b map[string]any) { apitest.Set(b, "purchase.amount", json.Number("1e3")) }, 400, "purchase.amount"},
	{"amount too large", func(b map[string]any) { apitest.Set(b, "purchase.amount", "99999999999999999") }, 400, "purchase.amount"},
	{"unknown currency", func(b map[string]any) { apitest.Set(b, "purchase.currency", "XYZ") }, 400, "purchase.currency"},
	{"decimals for JPY", func(b map[string]any) {
		apitest.Set(b, "purchase.currency", "JPY")
		apitest.Set(b, "purchase.amount", "10.5")
	}, 400, "purchase.amount"},
	{"bad timezone", func(b map[string]any) { apitest.Set(b, "customer.timezone", "Mars/Olympus") }, 400, "customer.timezone"},
	{"timezone Local", func(b map[string]any) { apitest.Set(b, "customer.timezone", "Local") }, 400, "customer.timezone"},
	{"timezone localtime", func(b map[string]any) { apitest.Set(b, "customer.timezone", "localtime") }, 400, "customer.timezone"},
	{"timezone posixrules", func(b map[string]any) { apitest.Set(b, "customer.timezone", "posixrules") }, 400, "customer.timezone"},
	{"timezone right/UTC", func(b map[string]any) { apitest.Set(b, "customer.timezone", "right/UTC") }, 400, "customer.timezone"},
	{"bad ip address", func(b map[string]any) { apitest.Set(b, "customer.ip_address", "999.1.1.1") }, 400, "customer.ip_address"},
	{"luhn failure", func(b map[string]any) { apitest.Set(b, "card.number", "4111111111111112") }, 400, "card.number"},
	{"letters in card number", func(b map[string]any) { apitest.Set(b, "card.number", "4111abcd11111111") }, 400, "card.number"},
	{"unknown brand", func(b map[string]any) { apitest.Set(b, "card.number", "9999999999999995") }, 400, "card.number"},
	// A length the brand does not issue: paid, and the same digits were
	// then taken in clear as an invoice number (the code review sweep).
	{"a 14-digit Visa number", func(b map[string]any) { apitest.Set(b, "card.number", "40000000000002") }, 400, "card.number"},
	{"a 17-digit Amex number", func(b map[string]any) { apitest.Set(b, "card.number", "37000000000000002") }, 400, "card.number"},
	{"month 13", func(b map[string]any) { apitest.Set(b, "card.expiry_month", 13) }, 400, "card.expiry_month"},
	{"month 0", func(b map[string]any) { apitest.Set(b, "card.expiry_month", "00") }, 400, "card.expiry_month"},
	{"expired card", func(b map[string]any) { apitest.Set(b, "card.expiry_year", 20) }, 400, "card.expiry_year"},
	{"cvc letters", func(b map[string]any) { apitest.Set(b, "card.cvc", "12a") }, 400, "card.cvc"},
	{"American Express with a 3-digit cvc", func(b map[string]any) {
		apitest.Set(b, "card.number", "378282246310005")
		apitest.Set(b, "card.cvc", "123")
	}, 400, "card.cvc"},
	{"Visa with a 4-digit cvc", func(b map[string]any) { apitest.Set(b, "card.cvc", "1234") }, 400, "card.cvc"},
	{"token and details", func(b map[string]any) { apitest.Set(b, "card.token", strings.Repeat("a", 128)) }, 400, "card"},
	{"token and a number without its expiry", func(b map[string]any) { // "not both", not "add the expiry"
		apitest.Set(b, "card.token", strings.Repeat("a", 128))
		apitest.Delete(b, "card.expiry_month")
		apitest.Delete(b, "card.expiry_year")
	}, 400, "card"},
	{"invoice number ..", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "..") }, 400, "purchase.invoice_number"},
	{"invoice number with a bidirectional override", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "\u202eINV") }, 400, "purchase.invoice_number"},
	{"invoice number with a zero-width space", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV\u200b1") }, 400, "purchase.invoice_number"},
	{"invoice number with a tag character", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV-7\U000e0041") }, 400, "purchase.invoice_number"},
	{"invoice number with a Hangul filler", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV-7\u3164") }, 400, "purchase.invoice_number"},
	{"invoice number shaped as a purchase reference", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "pr_8DxHT8k5hhG28BxkBy4YWpoZZ")
	}, 400, "purchase.invoice_number"},
	{"invoice number shaped as a refund reference", func(b map[string]any) {
		apitest.Set(b, "purchase.invoice_number", "rf_8DxHT8k5hhG28BxkBy4YWpoZZ")
	}, 400, "purchase.invoice_number"},
	{"invoice over 255", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", strings.Repeat("9", 256)) }, 400, "purchase.invoice_number"},
	{"holder name over 128", func(b map[string]any) { apitest.Set(b, "card.holder_name", strings.Repeat("x", 129)) }, 400, "card.holder_name"},
	{"email over 128", func(b map[string]any) { apitest.Set(b, "customer.email", strings.Repeat("x", 120)+"@example.com") }, 400, "customer.email"},
	{"bad email", func(b map[string]any) { apitest.Set(b, "customer.email", "not-an-email") }, 400, "customer.email"},
	{"flag not a boolean", func(b map[string]any) { apitest.Set(b, "purchase.should_service_apply_surcharge", "maybe") }, 400, "purchase.should_service_apply_surcharge"},
	{"3DS without redirect", func(b map[string]any) { apitest.Set(b, "customer.should_service_apply_authentication", true) }, 400, "customer.authentication_redirect_url"},
	{"3DS with http redirect", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "http://shop.example/back")
	}, 400, "customer.authentication_redirect_url"},
	{"3DS with a port out of range", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example:99999/back")
	}, 400, "customer.authentication_redirect_url"},
	{"control characters", func(b map[string]any) { apitest.Set(b, "card.holder_name", "Jo\x00") }, 400, "card.holder_name"},
	{"a card number as the invoice number", func(b map[string]any) { apitest.Set(b, "purchase.invoice_number", "INV 4111 1111 1111 1111") }, 400, "purchase.invoice_number"},
	{"a card number in the customer's name", func(b map[string]any) { apitest.Set(b, "customer.first_name", "5555-5555-5555-4444") }, 400, "customer.first_name"},
	{"a card number as the holder's name", func(b map[string]any) { apitest.Set(b, "card.holder_name", "378282246310005") }, 400, "card.holder_name"},
	{"a card number in the 3-D Secure return address", func(b map[string]any) {
		apitest.Set(b, "customer.should_service_apply_authentication", true)
		apitest.Set(b, "customer.authentication_redirect_url", "https://shop.example/back?pan=4111111111111111")
	}, 400, "customer.authentication_redirect_url"},
}

func TestBadPurchaseInputStoresNothing(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	for i, tt := range badInputs {
		t.Run(tt.name, func(t *testing.T) {
			token, invoice := env.TransactionToken(m), fmt.Sprintf("BAD-%d", i)
			b := env.CardPurchase(m, "4111111111111111", "10.00", func(b map[string]any) {
				apitest.Set(b, "token.transaction_token", token)
				apitest.Set(b, "purchase.invoice_number", invoice)
			}, tt.mutate)
			r := env.Post("/v5/purchase", m, b)
			if r.Status != tt.status || r.Get("purchase") != nil || r.Str("error_message") == "" {
				t.Fatalf("got %d %s, want %d with an error message and no purchase", r.Status, r.Raw, tt.status)
			}
			if fields, _ := r.Get("fields").(map[string]any); fields[tt.field] == nil {
				t.Errorf("got fields %v, want a problem for %s", r.Get("fields"), tt.field)
			}
			assertNothingChanged(t, env, m, token, invoice)
		})
	}
}

// assertNothingChanged checks, through the API, that a refused purchase
// stored nothing (no transaction under its invoice number) and spent
// nothing (its transaction token still pays).
func assertNothingChanged(t *testing.T, env *apitest.Env, m *apitest.Merchant, token, invoice string) {
	t.Helper()
	if r := env.Post("/v5/purchase/"+invoice, m, map[string]any{"company_token": m.Creds.CompanyToken}); r.Status != http.StatusNotFound {
		t.Errorf("status of the refused purchase's invoice: got %d %s, want 404", r.Status, r.Raw)
	}
	ok := env.CardPurchase(m, "4111111111111111", "10.00", func(b map[string]any) { apitest.Set(b, "token.transaction_token", token) })
	if r := env.Post("/v5/purchase", m, ok); r.Status != http.StatusOK || r.Str("purchase.status") != "APPROVED" {
		t.Errorf("the refused purchase's token: got %d %s, want it still usable", r.Status, r.Raw)
	}
}

func TestMalformedBodies(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	tests := []struct {
		name, body string
		status     int
		code       string
	}{
		{"not json", `{"purchase":`, 400, "malformed_json"},
		{"array", `[1,2]`, 400, "malformed_json"},
		{"trailing data", `{} {}`, 400, "malformed_json"},
		{"invalid utf-8", "{\"a\":\"\xff\"}", 400, "malformed_json"},
		{"too large", `{"pad":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.Post("/v5/purchase", m, tt.body)
			if r.Status != tt.status || r.Str("response_code") != tt.code {
				t.Errorf("got %d %s, want %d %s", r.Status, r.Raw, tt.status, tt.code)
			}
		})
	}
	if r := env.Post("/v5/nope", m, "{}"); r.Status != 404 || r.Str("response_code") != "not_found" {
		t.Errorf("unknown route: got %d %s", r.Status, r.Raw)
	}
}

// The 404 of an unknown /v5 path tells the caller how to call: the
// ledger's calls it names are GET only (they answer GET, and POST is 405
// with Allow), where every other call is a POST.
func TestNotFoundNamesTheLedgerAsGETOnly(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	msg := env.Post("/v5/nope", m, "{}").Str("response_message")
	_, ledger, ok := strings.Cut(msg, "GET only")
	if !ok {
		t.Fatalf("the 404 message %q does not say which calls are GET only", msg)
	}
	named := regexp.MustCompile(`/v5/[a-z_/]+`).FindAllString(ledger, -1)
	want := []string{"/v5/balance", "/v5/balance_transactions", "/v5/payouts", "/v5/reports/settlement"}
	if !slices.Equal(named, want) {
		t.Errorf("the 404 message names %q as GET only, want %q", named, want)
	}
	for _, path := range named {
		if r := env.Do(http.MethodGet, path, m, nil); r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d %s, but the 404 message says it is a GET", path, r.Status, r.Raw)
		}
		var allow string
		r := env.DoWith(http.MethodPost, path, m, "{}", func(res *http.Response) { allow = res.Header.Get("Allow") })
		if r.Status != http.StatusMethodNotAllowed || strings.Contains(allow, http.MethodPost) {
			t.Errorf("POST %s: %d (Allow %q), but the 404 message says it is GET only", path, r.Status, allow)
		}
	}
}

// cvcAlone is the test's CVC with no letter or digit either side.
var cvcAlone = regexp.MustCompile(`(^|[^0-9A-Za-z])7319([^0-9A-Za-z]|$)`)

func TestNoCardDataAtRestOrInLogs(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	// The CVC looked for is an American Express card's (4 digits); the
	// other brands', 3 digits, would turn up by chance.
	pans := []string{"4111111111111111", "4000000000000002", "5555555555554444", "378282246310005", "371449635398431"}
	for _, pan := range pans {
		r := env.Post("/v5/purchase", m, env.CardPurchase(m, pan, "9.99", func(b map[string]any) {
			if paylink.BrandOf(pan) == paylink.BrandAmex {
				apitest.Set(b, "card.cvc", "7319")
			}
			apitest.Set(b, "customer.store_card_permission", true)
		}))
		if r.Get("purchase") == nil {
			t.Fatalf("purchase with %.6s...: got %d %s, want a purchase", pan, r.Status, r.Raw)
		}
	}
	// A card number sent as the amount, refused under an Idempotency-Key
	// (whose answer is kept): the error quotes the value masked.
	spaced := "4111 1111 1111 1111"
	raw, err := json.Marshal(env.CardPurchase(m, "4000000000000002", "9.99", func(b map[string]any) { apitest.Set(b, "purchase.amount", spaced) }))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/purchase", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	req.Header.Set("Idempotency-Key", "k-card-number-as-amount")
	res, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || strings.Contains(string(answer), spaced) || !strings.Contains(string(answer), "411111******1111") {
		t.Errorf("a card number as the amount: got %d %s, want 400 quoting it masked", res.StatusCode, answer)
	}
	pans = append(pans, spaced)
	var files [][]byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(env.DBPath + suffix)
		if err == nil {
			files = append(files, b)
		}
	}
	files = append(files, []byte(env.LogText()))
	for i, content := range files {
		for _, secret := range append(pans, m.Creds.APIKey, m.Creds.CompanyToken) {
			if at := bytes.Index(content, []byte(secret)); at >= 0 {
				t.Errorf("file %d contains a secret (%.6s...) in %q", i, secret, content[max(0, at-40):min(len(content), at+40)])
			}
		}
		// Four digits turn up by chance inside the ids, hashes and times
		// paylink makes (key_16d7319afa..., 01:57:31.973190000Z): the CVC
		// counts only as a value of its own, not inside a longer word.
		if at := cvcAlone.FindIndex(content); at != nil {
			t.Errorf("file %d contains the CVC in %q", i, content[max(0, at[0]-40):min(len(content), at[1]+40)])
		}
	}
	if !strings.Contains(env.LogText(), `"route":"POST /v5/purchase"`) {
		t.Errorf("the log shows no requests at all, so the check above proves nothing")
	}
}
