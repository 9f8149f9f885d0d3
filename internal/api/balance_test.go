package api_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The ledger's read API answers with the documented shapes, pages through
// balance transactions, serves the settlement report as CSV, refuses bad
// parameters, and shows a merchant only its own money.
func TestLedgerAPI(t *testing.T) {
	c := newOASChecker(t)
	env, m := c.env, c.m
	var refs []string
	for _, amount := range []string{"10.50", "20.00"} {
		r := c.call(http.MethodPost, "/v5/purchase", env.CardPurchase(m, "4111111111111111", amount), http.StatusOK)
		refs = append(refs, r.Str("purchase.purchase_reference"))
	}
	c.call(http.MethodPost, "/v5/purchase/"+refs[1]+"/refund", map[string]any{
		"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
		"customer": map[string]any{"ip_address": "203.0.113.9", "timezone": "UTC"},
		"refund":   map[string]any{"amount": "5.00", "currency": "AUD"},
	}, http.StatusOK)

	b := c.call(http.MethodGet, "/v5/balance", nil, http.StatusOK)
	// 10.50 - 0.48 + 20.00 - 0.65 - 5.00
	if got := b.Raw; !strings.Contains(got, `{"currency":"AUD","pending":"24.37","available":"0.00","paid_out":"0.00"}`) {
		t.Errorf("balance before settlement: got %s", got)
	}
	first := c.call(http.MethodGet, "/v5/balance_transactions?limit=2", nil, http.StatusOK)
	data, _ := first.Get("data").([]any)
	if len(data) != 2 || first.Get("has_more") != true {
		t.Fatalf("first page: got %s", first.Raw)
	}
	last := data[1].(map[string]any)["id"].(string)
	rest := c.call(http.MethodGet, "/v5/balance_transactions?limit=2&starting_after="+last, nil, http.StatusOK)
	if more, _ := rest.Get("data").([]any); len(more) != 1 || rest.Get("has_more") != false {
		t.Errorf("second page: got %s", rest.Raw)
	}

	if _, err := env.Service.Settle(context.Background(), env.Clock.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	b = c.call(http.MethodGet, "/v5/balance", nil, http.StatusOK)
	if !strings.Contains(b.Raw, `"pending":"0.00","available":"0.00","paid_out":"24.37"`) {
		t.Errorf("balance after settlement: got %s", b.Raw)
	}
	p := c.call(http.MethodGet, "/v5/payouts", nil, http.StatusOK)
	if payouts, _ := p.Get("data").([]any); len(payouts) != 1 || payouts[0].(map[string]any)["amount"] != "24.37" ||
		len(payouts[0].(map[string]any)["balance_transactions"].([]any)) != 3 {
		t.Errorf("payouts: got %s", p.Raw)
	}
	all := c.call(http.MethodGet, "/v5/balance_transactions", nil, http.StatusOK)
	if !strings.Contains(all.Raw, `"type":"payout"`) || strings.Contains(all.Raw, `"status":"pending"`) {
		t.Errorf("after settlement every balance transaction is available, the payout listed: got %s", all.Raw)
	}

	day := env.Clock.Now().UTC().Format(time.DateOnly)
	rep := c.call(http.MethodGet, "/v5/reports/settlement?date="+day, nil, http.StatusOK)
	rows, err := csv.NewReader(strings.NewReader(rep.Raw)).ReadAll()
	if err != nil || len(rows) != 1+3+1+1 {
		t.Errorf("settlement report: got %d rows, %v\n%s", len(rows), err, rep.Raw)
	}

	for _, bad := range []string{"/v5/balance_transactions?limit=0", "/v5/balance_transactions?limit=101", "/v5/payouts?limit=x",
		"/v5/reports/settlement?date=2026-13-01", "/v5/reports/settlement"} {
		if r := env.Do(http.MethodGet, bad, m, nil); r.Status != http.StatusBadRequest || r.Str("response_code") != "invalid_request" {
			t.Errorf("%s: got %d %s, want 400 invalid_request", bad, r.Status, r.Raw)
		}
	}

	other := env.Onboard()
	r := env.Do(http.MethodGet, "/v5/balance_transactions", other, nil)
	if r.Status != http.StatusOK || strings.Contains(r.Raw, refs[0]) {
		t.Errorf("another merchant's balance transactions: got %d %s", r.Status, r.Raw)
	}
	if r := env.Do(http.MethodGet, "/v5/balance", nil, nil); r.Status != http.StatusUnauthorized {
		t.Errorf("no key: got %d", r.Status)
	}
}
