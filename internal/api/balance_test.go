package api_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
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
	// A cursor naming nothing of this merchant's is refused, not read as
	// a position in id order (which showed the first page again).
	for _, cursor := range []string{"nope", "bt_" + strings.Repeat("z", 20)} { // a padded one is trimmed: TestQueryParameters
		res := c.call(http.MethodGet, "/v5/balance_transactions?starting_after="+url.QueryEscape(cursor), nil, http.StatusBadRequest)
		if res.Get("fields.starting_after") == nil {
			t.Errorf("cursor %q: got %s, want starting_after named", cursor, res.Raw)
		}
	}
	c.call(http.MethodGet, "/v5/payouts?starting_after=po_nope", nil, http.StatusBadRequest)

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
	payoutID, _ := p.Get("data").([]any)[0].(map[string]any)["id"].(string)
	reportMatchesBalanceTransactions(t, rows, all, payoutID)

	// Each refusal's fields name the parameter, as docs/errors.md says
	// of every 400 invalid_request (they had none but starting_after's,
	// found by a hostile-input sweep).
	for _, bad := range []struct{ path, field, says string }{
		{"/v5/balance_transactions?limit=0", "limit", "whole number"},
		{"/v5/balance_transactions?limit=101", "limit", "whole number"},
		{"/v5/payouts?limit=x", "limit", "whole number"},
		{"/v5/balance_transactions?limit=5&limit=6", "limit", "sent twice"},
		{"/v5/payouts?starting_after=" + strings.Repeat("b", 200), "starting_after", "not an id"},
		{"/v5/reports/settlement?date=2026-13-01", "date", "YYYY-MM-DD"},
		{"/v5/reports/settlement?date=2026-02-30", "date", "YYYY-MM-DD"},
		{"/v5/reports/settlement", "date", "is required"},
	} {
		r := env.Do(http.MethodGet, bad.path, m, nil)
		fields, _ := r.Get("fields").(map[string]any)
		problem, _ := fields[bad.field].(string)
		if r.Status != http.StatusBadRequest || r.Str("response_code") != "invalid_request" || !strings.Contains(problem, bad.says) {
			t.Errorf("%s: got %d %s, want 400 invalid_request with fields.%s saying %q", bad.path, r.Status, r.Raw, bad.field, bad.says)
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

// TestPagesAtTheLargestLimit: a page of 100 (the documented largest) is
// served and says whether more follow, and a day's settlement report
// names its payout however many payouts came after it. Balance
// transactions at limit=100 were refused, payouts at limit=100 said
// has_more false with more to come, and the report looked for its payouts
// among the newest hundred only. Both engines.
func TestPagesAtTheLargestLimit(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		if r := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "10.00")); r.Status != http.StatusOK {
			t.Fatalf("purchase: got %d %s", r.Status, r.Raw)
		}
		day := env.Clock.Now().UTC().Format(time.DateOnly)
		env.Clock.Advance(24 * time.Hour)
		settled, err := env.Service.Settle(context.Background(), env.Clock.Now())
		if err != nil || len(settled.Payouts) != 1 {
			t.Fatalf("settle: got %+v, %v; want one payout", settled, err)
		}
		old := settled.Payouts[0]
		err = env.Store.Update(context.Background(), func(tx paylink.Tx) error {
			for i := range paylink.MaxBalanceTransactions {
				p := &paylink.Payout{ID: fmt.Sprintf("%s-%03d", old.ID, i), MerchantID: m.ID, Currency: "AUD", Amount: 1,
					CreatedAt: env.Clock.Now()}
				if err := tx.CreatePayout(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}

		data := func(r apitest.Response) []any { l, _ := r.Get("data").([]any); return l }
		if r := env.Do(http.MethodGet, "/v5/balance_transactions?limit=100", m, nil); r.Status != http.StatusOK || len(data(r)) != 2 {
			t.Errorf("balance transactions at limit=100: got %d %s, want 200 with the charge and its payout", r.Status, r.Raw)
		}
		first := env.Do(http.MethodGet, "/v5/payouts?limit=100", m, nil)
		if len(data(first)) != 100 || first.Body["has_more"] != true {
			t.Fatalf("payouts at limit=100: got %d rows, has_more %v; want 100 and more to come", len(data(first)), first.Body["has_more"])
		}
		last := data(first)[99].(map[string]any)["id"].(string)
		rest := env.Do(http.MethodGet, "/v5/payouts?limit=100&starting_after="+last, m, nil)
		if page := data(rest); len(page) != 1 || page[0].(map[string]any)["id"] != old.ID || rest.Body["has_more"] != false {
			t.Errorf("the next page: got %s, want the first payout alone", rest.Raw)
		}
		rep := env.Do(http.MethodGet, "/v5/reports/settlement?date="+day, m, nil)
		if rep.Status != http.StatusOK || !strings.Contains(rep.Raw, old.ID) {
			t.Errorf("settlement report of %s: got %d without payout %s:\n%s", day, rep.Status, old.ID, rep.Raw)
		}
	})
}

// reportMatchesBalanceTransactions: every row of a settlement report but
// the totals names, in its balance_transaction column, a balance
// transaction that GET /v5/balance_transactions lists with the same id
// and type; the payout's row names the payout's own posting there and
// the payout id as its reference (it named the po_ id, which the API
// lists under no balance transaction).
func reportMatchesBalanceTransactions(t *testing.T, rows [][]string, list apitest.Response, payoutID string) {
	t.Helper()
	types := map[string]string{}
	data, _ := list.Get("data").([]any)
	for _, d := range data {
		bt := d.(map[string]any)
		types[bt["id"].(string)] = bt["type"].(string)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	payouts := 0
	for _, r := range rows[1:] {
		id, typ := r[col["balance_transaction"]], r[col["type"]]
		if typ == "total" {
			continue
		}
		if types[id] != typ {
			t.Errorf("report row %v: balance transaction %q is listed as %q, want a %s", r, id, types[id], typ)
		}
		if typ == string(paylink.PostingPayout) {
			payouts++
			if r[col["reference"]] != payoutID {
				t.Errorf("payout row %v: want the reference %s", r, payoutID)
			}
		}
	}
	if payouts != 1 {
		t.Errorf("got %d payout rows, want 1", payouts)
	}
}
