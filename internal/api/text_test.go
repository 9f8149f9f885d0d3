package api_test

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
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

// TestCardNumbersInPathsNeverReachTheDatabase: a card number sent where a
// reference goes in the path (a client that put the card in the URL) is
// answered 404 like any unknown reference, and neither PostgreSQL's
// statement log (with parameters) nor the answer nor paylink's log holds
// it (the secrets sweep found it sent as a query parameter of each
// look-up and of the spent token's insert).
func TestCardNumbersInPathsNeverReachTheDatabase(t *testing.T) {
	var pg pgtest.Shared
	pg.Start()
	defer pg.Stop()
	dsn := pg.Database(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET log_statement = ''all''', current_database()); END $$`); err != nil {
		t.Fatalf("log statements: %v", err)
	}
	env := apitest.Start(t, apitest.Options{DSN: dsn})
	m := env.Onboard()
	const digits = "4242424242424242"
	customer := map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"}
	token := func() map[string]any {
		return map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)}
	}
	for _, pan := range []string{digits, "4242%204242%204242%204242", "4242%C2%A04242%C2%A04242%C2%A04242"} {
		for path, body := range map[string]map[string]any{
			"/v5/purchase/" + pan:                  {"company_token": m.Creds.CompanyToken},
			"/v5/refund/" + pan:                    {"company_token": m.Creds.CompanyToken},
			"/v5/payment-links/" + pan:             {"company_token": m.Creds.CompanyToken},
			"/v5/purchase/" + pan + "/capture":     {"token": token(), "capture": map[string]any{"amount": "1.00", "currency": "AUD"}},
			"/v5/purchase/" + pan + "/cancel":      {"token": token()},
			"/v5/purchase/" + pan + "/refund":      {"token": token(), "refund": map[string]any{"amount": "1.00", "currency": "AUD"}, "customer": customer},
			"/v5/purchase/" + pan + "/3dsredirect": {"token": token()},
			"/v5/direct_debit/" + pan + "/refund":  {"token": token(), "refund": map[string]any{"amount": "1.00", "currency": "AUD"}, "customer": customer},
			"/v5/payment-links/" + pan + "/cancel": {"company_token": m.Creds.CompanyToken},
		} {
			r := env.Post(path, m, body)
			if r.Status != http.StatusNotFound || strings.Contains(r.Raw, "4242424242") {
				t.Errorf("POST %s: got %d %s, want 404 without the card number", path, r.Status, r.Raw)
			}
		}
	}
	// Digits a letter touches are stored, and found: a UUID or a
	// reference holding a card-shaped run is no card number (a
	// verification sweep found these masked, a paid order not found).
	for _, invoice := range []string{"INV4111111111111111", "50cc30e7-3838-4450-9603-20303920a7c9"} {
		p := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "1.00", func(b map[string]any) {
			apitest.Set(b, "purchase.invoice_number", invoice)
		}))
		s := env.Post("/v5/purchase/"+invoice, m, map[string]any{"company_token": m.Creds.CompanyToken})
		if p.Status != http.StatusOK || s.Status != http.StatusOK || s.Str("purchase_reference") != p.Str("purchase.purchase_reference") {
			t.Errorf("look-up by the invoice number %s: got %d %s, want its purchase", invoice, s.Status, s.Raw)
		}
	}
	for where, text := range map[string]string{"PostgreSQL's statement log": pg.Log(t), "paylink's log": env.LogText()} {
		if !strings.Contains(text, "spent_transaction_tokens") && where != "paylink's log" {
			t.Fatalf("%s holds no statements: the test does not see them", where)
		}
		if i := strings.Index(text, digits[:10]); i >= 0 {
			t.Errorf("%s holds the card number: %s", where, text[max(0, i-300):min(len(text), i+100)])
		}
	}
}
