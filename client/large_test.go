package client_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paylink/paylink/client"
)

// TestLargeAnswers: a settlement report larger than a JSON answer's cap
// arrives whole, and a JSON answer over the cap is an error that says
// so, never a cut body or an opaque decode error. The server is an
// httptest one: paylink's own answers this large need a day of tens of
// thousands of payments.
func TestLargeAnswers(t *testing.T) {
	report := strings.Repeat("bt_0123456789,payment,pr_0123456789,AUD,10.50,0.29,10.21,available\n", 80_000) // ~5.4 MB
	var page bytes.Buffer
	page.WriteString(`{"response_code":"success","has_more":false,"data":[{"id":"po_1","balance_transactions":[`)
	for i := range 300_000 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `"bt_%010d"`, i)
	}
	page.WriteString(`]}]}`) // ~4.8 MB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-large")
		switch r.URL.Path {
		case "/v5/reports/settlement":
			w.Header().Set("Content-Type", "text/csv")
			_, _ = w.Write([]byte(report))
		case "/v5/payouts":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(page.Bytes())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, "pl_sk_test", "co")
	ctx := context.Background()

	csv, err := c.SettlementReport(ctx, "2026-11-27")
	if err != nil || len(csv) != len(report) {
		t.Errorf("SettlementReport: got %d bytes, %v; want all %d", len(csv), err, len(report))
	}
	var w bytes.Buffer
	res, err := c.WriteSettlementReport(ctx, "2026-11-27", &w)
	if err != nil || w.Len() != len(report) || res.RequestID != "req-large" {
		t.Errorf("WriteSettlementReport: got %d bytes, %+v, %v; want all %d, request id req-large", w.Len(), res, err, len(report))
	}
	if _, err := c.Payouts(ctx, client.Page{}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a JSON page over the cap: got %v, want an error saying the answer is too large", err)
	}
}
