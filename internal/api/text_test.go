package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// TestBytesThatAreNotTextAreRefused: a reference in the path, a query
// value or an Idempotency-Key that is not UTF-8, or holds a NUL, is a 400
// invalid_request on both engines. PostgreSQL refuses such bytes in a
// text parameter, and each of these was a 500 there.
func TestBytesThatAreNotTextAreRefused(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/v5/purchase/%ff"}, {http.MethodPost, "/v5/refund/pr%ed%a0%80"},
			{http.MethodPost, "/v5/payment-links/%c3"}, {http.MethodGet, "/v5/balance_transactions?starting_after=%ff"},
			{http.MethodGet, "/v5/purchase/pr%00"}, {http.MethodGet, "/v5/payouts?starting_after=%00"},
		} {
			if r := env.Do(c.method, c.path, m, nil); r.Status != http.StatusBadRequest || r.Str("error_code") != "invalid_request" {
				t.Errorf("%s %s: got %d %s, want 400 invalid_request", c.method, c.path, r.Status, r.Raw)
			}
		}
		req, err := http.NewRequest(http.MethodPost, env.Server.URL+"/v5/transaction_token",
			strings.NewReader(`{"company_token":"`+m.Creds.CompanyToken+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
		req.Header.Set("Idempotency-Key", "key-\xff")
		res, err := env.Server.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("Idempotency-Key not UTF-8: got %d, want 400", res.StatusCode)
		}
	})
}
