package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// fuzzRoutes are the POST endpoints the fuzzer drives, with {ref}/{id}
// filled by a real purchase reference or link id (or garbage).
var fuzzRoutes = []string{
	"/v5/transaction_token", "/v5/purchase", "/v5/surcharge", "/v5/purchase/{ref}",
	"/v5/purchase/{ref}/capture", "/v5/purchase/{ref}/cancel", "/v5/purchase/{ref}/refund",
	"/v5/purchase/{ref}/3dsredirect", "/v5/refund/{ref}", "/v5/tokenize_card", "/v5/card",
	"/v5/invalidate_card_token", "/v5/direct_debit_fee", "/v5/direct_debit", "/v5/direct_debit/{ref}/refund",
	"/v5/payment-links", "/v5/payment-links/{id}", "/v5/payment-links/{id}/cancel",
}

var placeholder = regexp.MustCompile(`\{(ref|id)\}`)

// FuzzAPINeverAnswers5xx sends arbitrary bodies (seeded with valid ones,
// with real tokens spliced in) to every endpoint: whatever arrives, the
// answer must be JSON below 500. A 5xx is always a bug.
func FuzzAPINeverAnswers5xx(f *testing.F) {
	seeds := []string{
		`{}`, `null`, `[]`, `{"company_token":"COMPANY"}`,
		`{"token":{"company_token":"COMPANY","transaction_token":"TT"},"customer":{"ip_address":"203.0.113.7","timezone":"UTC"},"card":{"number":"4111111111111111","expiry_month":"12","expiry_year":"40","cvc":"123"},"purchase":{"amount":"10.00","currency":"AUD","should_service_apply_pre_authorisation":true}}`,
		`{"token":{"company_token":"COMPANY","transaction_token":"TT"},"capture":{"amount":"5","currency":"AUD"}}`,
		`{"token":{"company_token":"COMPANY","transaction_token":"TT"},"customer":{"ip_address":"::1","timezone":"UTC"},"refund":{"amount":"1","currency":"AUD"}}`,
		`{"token":{"company":"COMPANY"},"card":{"number":"378282246310005","expiry_month":1,"expiry_year":2040},"amount":1e2,"currency":"aud"}`,
		`{"company_token":"COMPANY","card":{"number":"5555555555554444","expiry_month":"01","expiry_year":"40","cvc":"1234"},"customer":{"store_card_permisison":"true"}}`,
		`{"token":{"company_token":"COMPANY","transaction_token":"TT"},"bank_account":{"number":"123456789","holder_name":"Jo","bsb":"062-000"},"customer":{"ip_address":"203.0.113.7","timezone":"UTC"},"purchase":{"amount":"25.50","currency":"AUD","should_service_apply_fee":true}}`,
		`{"amount":"49.50","currency":"AUD","merchantReference":"X","customer":{"first_name":"<script>"},"expires_at":"2030-01-01T00:00:00Z"}`,
	}
	for i, s := range seeds {
		for r := range fuzzRoutes {
			if (i+r)%3 == 0 {
				f.Add(uint8(r), s, true)
			}
		}
	}
	env := apitest.Start(f, apitest.Options{})
	m := env.Onboard()
	approved := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "20.00")).Str("purchase.purchase_reference")
	link := env.Post("/v5/payment-links", m, map[string]any{"amount": "5", "currency": "AUD", "merchantReference": "F"}).Str("id")
	f.Fuzz(func(t *testing.T, route uint8, body string, realIDs bool) {
		env := env.For(t)
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path = placeholder.ReplaceAllStringFunc(path, func(p string) string {
			switch {
			case !realIDs:
				return "x%2F..%00"
			case p == "{id}":
				return link
			}
			return approved
		})
		body = strings.ReplaceAll(body, "COMPANY", m.Creds.CompanyToken)
		if strings.Contains(body, "TT") {
			body = strings.ReplaceAll(body, "TT", env.TransactionToken(m))
		}
		r := env.Post(path, m, body)
		if r.Status >= http.StatusInternalServerError || r.Body == nil {
			t.Fatalf("POST %s with %q: got %d %s, want a JSON answer below 500", path, body, r.Status, r.Raw)
		}
	})
}
