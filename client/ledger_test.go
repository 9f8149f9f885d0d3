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
	if err != nil || len(bal) != 1 || bal[0].Pending != "29.37" {
		t.Fatalf("balances: got %+v, %v; want 29.37 pending", bal, err)
	}
	first, more, err := c.BalanceTransactions(ctx, client.Page{Limit: 1})
	if err != nil || len(first) != 1 || !more || first[0].Amount != "20.00" {
		t.Fatalf("first page: got %+v, %v, %v", first, more, err)
	}
	rest, more, err := c.BalanceTransactions(ctx, client.Page{StartingAfter: first[0].ID})
	if err != nil || len(rest) != 1 || more || rest[0].Amount != "10.50" {
		t.Errorf("second page: got %+v, %v, %v", rest, more, err)
	}
	if _, _, err := c.BalanceTransactions(ctx, client.Page{StartingAfter: "bt_nope"}); !client.IsCode(err, "invalid_request") {
		t.Errorf("an unknown cursor: got %v, want invalid_request", err)
	}
	if _, err := env.Service.Settle(ctx, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	payouts, _, err := c.Payouts(ctx, client.Page{})
	if err != nil || len(payouts) != 1 || payouts[0].Amount != "29.37" || len(payouts[0].BalanceTransactions) != 2 {
		t.Errorf("payouts: got %+v, %v", payouts, err)
	}
	csv, err := c.SettlementReport(ctx, env.Clock.Now().UTC().Format("2006-01-02"))
	if err != nil || !strings.Contains(string(csv), "total") {
		t.Errorf("report: got %q, %v", csv, err)
	}
}
