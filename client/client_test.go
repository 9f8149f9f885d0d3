package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

func newClient(t *testing.T) (*client.Client, *apitest.Env) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	return client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken), env
}

func year(env *apitest.Env) string { return env.Clock.Now().AddDate(3, 0, 0).Format("06") }

func TestClientPurchaseSurchargeAndStatus(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	card := client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123", HolderName: "Jo"}
	quote, err := c.Surcharge(ctx, client.SurchargeRequest{Card: card, Amount: "10.50", Currency: "AUD"})
	if err != nil || quote.Surcharge.Amount.String() != "0.13" {
		t.Fatalf("surcharge: got %+v, %v; want 0.13", quote, err)
	}
	res, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC", StoreCardPermission: true},
		Card:     &card,
		Purchase: client.PurchaseDetails{Amount: "10.50", Currency: "AUD", InvoiceNumber: "C-1", ApplySurcharge: true},
	}, client.IdempotencyKey("client-order-1"))
	if err != nil || res.Purchase.Status != "APPROVED" || res.Purchase.TotalAmount.String() != "10.63" || res.Card.Token == nil {
		t.Fatalf("purchase: got %+v, %v", res, err)
	}
	// A retry under the same key (the first answer lost, say) is the same
	// request, with the token fetched for the first attempt: it replays.
	again, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC", StoreCardPermission: true},
		Card:     &card,
		Purchase: client.PurchaseDetails{Amount: "10.50", Currency: "AUD", InvoiceNumber: "C-1", ApplySurcharge: true},
	}, client.IdempotencyKey("client-order-1"))
	if err != nil || again.Purchase.PurchaseReference != res.Purchase.PurchaseReference {
		t.Errorf("retry under the same key: got %+v, %v; want the first purchase %s replayed", again, err, res.Purchase.PurchaseReference)
	}
	st, err := c.PurchaseStatus(ctx, "C-1")
	if err != nil || st.Status != "APPROVED" || st.PurchaseReference != res.Purchase.PurchaseReference {
		t.Errorf("status: got %+v, %v", st, err)
	}
	declined, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4000000000000002", ExpiryMonth: "12", ExpiryYear: year(env)},
		Purchase: client.PurchaseDetails{Amount: "1", Currency: "AUD"},
	})
	if err != nil || declined.Purchase.Status != "DECLINED" || declined.ResponseCode != "declined" {
		t.Errorf("decline is a result, not an error: got %+v, %v", declined, err)
	}
}

func TestClientErrors(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	_, err := c.Purchase(ctx, client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4111111111111112", ExpiryMonth: "12", ExpiryYear: year(env)},
		Purchase: client.PurchaseDetails{Amount: "1", Currency: "AUD"},
	})
	var e *client.Error
	if !client.IsCode(err, "invalid_request") || !errors.As(err, &e) || e.Fields["card.number"] == "" || e.HTTPStatus != 400 {
		t.Errorf("got %v, want invalid_request naming card.number", err)
	}
	if _, err := c.PurchaseStatus(ctx, "nope"); !client.IsCode(err, "not_found") {
		t.Errorf("unknown reference: got %v, want not_found", err)
	}
	bad := client.New(env.Server.URL, "pl_sk_wrong", "x")
	if _, err := bad.TransactionToken(ctx); !client.IsCode(err, "unauthorized") {
		t.Errorf("bad key: got %v, want unauthorized", err)
	}
}

func TestClientDirectDebit(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	fee, err := c.DirectDebitFee(ctx, "100.00", "AUD")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.DirectDebit(ctx, client.DirectDebitRequest{
		BankAccount: client.BankAccount{Number: "123456789", HolderName: "Jo Citizen", BSB: "062-000"},
		Customer:    client.Customer{IPAddress: "203.0.113.7", Timezone: "Australia/Sydney"},
		Purchase:    client.DirectDebitDetails{Amount: "100.00", Currency: "AUD", ApplyFee: true},
	})
	if err != nil || res.Purchase.Status != "PENDING" || res.Purchase.FeeAmount != fee.Fee.Amount {
		t.Fatalf("direct debit: got %+v, %v; want PENDING with fee %s", res, err, fee.Fee.Amount)
	}
	account := client.BankAccount{Number: "******789", HolderName: "Jo Citizen", BSB: "062-000"}
	if res.BankAccount != account || res.Card != account {
		t.Errorf("direct debit: got bank_account %+v and card %+v, want both %+v", res.BankAccount, res.Card, account)
	}
	env.Clock.Advance(73 * time.Hour)
	if _, err := env.Service.ClearDirectDebits(ctx); err != nil {
		t.Fatal(err)
	}
	refund, err := c.DirectDebitRefund(ctx, res.Purchase.PurchaseReference, client.RefundRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Refund:   client.RefundDetails{Amount: "40", Currency: "AUD"},
	})
	if err != nil || refund.Refund.Status != "APPROVED" || refund.Refund.Amount.String() != "40" {
		t.Fatalf("refund: got %+v, %v", refund, err)
	}
	if refund.BankAccount == nil || *refund.BankAccount != account {
		t.Errorf("refund: got bank_account %+v, want %+v", refund.BankAccount, account)
	}
	if c := refund.Card; c == nil || c.Number != account.Number || c.HolderName != account.HolderName || c.BSB != account.BSB {
		t.Errorf("refund: got card %+v, want a copy of %+v", c, account)
	}
}

// TestDefaultTimeoutOutlastsEveryAnswer: the default HTTP client waits
// longer than paylink may take to answer (a purchase whose processor
// takes its whole deadline), so a slow payment's answer is not cut into
// an error that leaves its outcome to be looked up.
func TestDefaultTimeoutOutlastsEveryAnswer(t *testing.T) {
	if client.DefaultTimeout <= paylink.MaxRequestTime {
		t.Errorf("DefaultTimeout %s: want more than paylink's MaxRequestTime %s", client.DefaultTimeout, paylink.MaxRequestTime)
	}
}
