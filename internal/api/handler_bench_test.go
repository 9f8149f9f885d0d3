package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/apitest"
)

// Whole-handler benchmarks of the hot routes: the site's handler (shared
// middleware, authentication, decoding, service, SQLite store, encoding)
// called in process, without a network. Every commit is durable, so the
// purchase and token figures are dominated by the store; bench_test.go
// isolates the API's own decode and encode.

// serve runs one request through the site's handler and checks for 200.
func serve(b *testing.B, env *apitest.Env, m *apitest.Merchant, method, path, body string) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+m.Creds.APIKey)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	env.Server.Config.Handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s %s: got %d %s", method, path, rec.Code, rec.Body)
	}
}

func BenchmarkHandlerTransactionToken(b *testing.B) {
	env := apitest.Start(b, apitest.Options{})
	m := env.Onboard()
	body := fmt.Sprintf(`{"company_token":%q}`, m.Creds.CompanyToken)
	b.ReportAllocs()
	defer api.ReportCPU(b, api.CPUTime())
	for b.Loop() {
		serve(b, env, m, http.MethodPost, "/v5/transaction_token", body)
	}
}

// purchaseBody is a surcharged card purchase with every optional key a
// deployed client sends, the unused ones empty.
func purchaseBody(company, token, year string) string {
	return `{"token":{"company_token":"` + company + `","transaction_token":"` + token + `"},
"customer":{"id":"","reference":"CUST-10442","email":"jo.citizen@example.com","first_name":"Jo","last_name":"Citizen",
"phone":null,"ip_address":"203.0.113.7","timezone":"Australia/Sydney","accepted_terms_conditions":"true",
"user_agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
"store_card_permission":false,"should_service_apply_authentication":false,"authentication_redirect_url":""},
"card":{"token":"","number":"4111 1111 1111 1111","expiry_month":"12","expiry_year":` + year + `,"cvc":"123","holder_name":"Jo Citizen"},
"purchase":{"amount":"149.95","currency":"AUD","invoice_number":"","should_service_apply_surcharge":true,
"should_service_apply_pre_authorisation":false}}`
}

// BenchmarkHandlerPurchase issues its transaction tokens through the
// Service before the timer starts: one operation is the purchase alone.
func BenchmarkHandlerPurchase(b *testing.B) {
	env := apitest.Start(b, apitest.Options{})
	m := env.Onboard()
	year := fmt.Sprint(env.Clock.Now().Year()%100 + 3)
	bodies := make([]string, b.N)
	for i := range bodies {
		tok, err := env.Service.IssueTransactionToken(context.Background(), m.Merchant, m.Creds.CompanyToken)
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = purchaseBody(m.Creds.CompanyToken, tok, year)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer api.ReportCPU(b, api.CPUTime())
	for i := 0; i < b.N; i++ {
		serve(b, env, m, http.MethodPost, "/v5/purchase", bodies[i])
	}
}

func BenchmarkHandlerStatus(b *testing.B) {
	env := apitest.Start(b, apitest.Options{})
	m := env.Onboard()
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "20.00")).Str("purchase.purchase_reference")
	if ref == "" {
		b.Fatal("setup purchase failed")
	}
	b.ReportAllocs()
	defer api.ReportCPU(b, api.CPUTime())
	for b.Loop() {
		serve(b, env, m, http.MethodGet, "/v5/purchase/"+ref, "")
	}
}
