package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/client"
)

// TestClientLedger: balances, pages of balance transactions, payouts and
// the settlement report, read through the client after two purchases
// and a settlement.
func TestClientLedger(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	card := client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"}
	for _, amount := range []string{"10.50", "20.00"} {
		if _, err := c.Purchase(ctx, client.PurchaseRequest{Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
			Card: &card, Purchase: client.PurchaseDetails{Amount: amount, Currency: "AUD"}}); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Second) // ids are time-ordered: the next is newer
	}
	bal, err := c.Balances(ctx)
	if err != nil || len(bal.Balances) != 1 || bal.Balances[0].Pending != "29.37" {
		t.Fatalf("balances: got %+v, %v; want 29.37 pending", bal, err)
	}
	first, err := c.BalanceTransactions(ctx, client.Page{Limit: 1})
	if err != nil || len(first.Data) != 1 || !first.HasMore || first.Data[0].Amount != "20.00" {
		t.Fatalf("first page: got %+v, %v", first, err)
	}
	rest, err := c.BalanceTransactions(ctx, client.Page{StartingAfter: first.Data[0].ID})
	if err != nil || len(rest.Data) != 1 || rest.HasMore || rest.Data[0].Amount != "10.50" {
		t.Errorf("second page: got %+v, %v", rest, err)
	}
	if _, err := c.BalanceTransactions(ctx, client.Page{Limit: -1}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a negative limit: got %v, want an error", err)
	}
	if _, err := c.BalanceTransactions(ctx, client.Page{StartingAfter: "bt_nope"}); !client.IsCode(err, "invalid_request") {
		t.Errorf("an unknown cursor: got %v, want invalid_request", err)
	}
	if _, err := env.Service.Settle(ctx, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	payouts, err := c.Payouts(ctx, client.Page{})
	if err != nil || len(payouts.Data) != 1 || payouts.Data[0].Amount != "29.37" || len(payouts.Data[0].BalanceTransactions) != 2 {
		t.Errorf("payouts: got %+v, %v", payouts, err)
	}
	csv, err := c.SettlementReport(ctx, env.Clock.Now().UTC().Format("2006-01-02"))
	if err != nil || !strings.Contains(string(csv), "total") {
		t.Errorf("report: got %q, %v", csv, err)
	}
}
