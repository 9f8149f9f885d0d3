package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/apitest"
)

// customer is a payer with every field a purchase needs.
var customer = client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}

// TestClientErrorCarriesItsHeaders: a refusal's Retry-After (429) and
// X-Request-Id reach client.Error, so a caller knows when to retry and
// what to quote; the replay of a remembered refusal (a card token that
// names no card: a refusal of the request as sent, invalid_request, is
// not remembered) says it is one.
func TestClientErrorCarriesItsHeaders(t *testing.T) {
	env := apitest.Start(t, apitest.Options{API: []api.Option{api.WithRateLimit(0.01, 3)}})
	m := env.Onboard()
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	ctx := context.Background()
	bad := client.PurchaseRequest{Customer: customer,
		Card:     &client.Card{Token: "ct_0000000000000000000000000", CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "1", Currency: "AUD"}}
	// Three requests: the transaction token, the purchase, its replay.
	var first, again *client.Error
	_, err1 := c.Purchase(ctx, bad, client.IdempotencyKey("bad-1"), client.RequestID("order-7.try-1"))
	_, err2 := c.Purchase(ctx, bad, client.IdempotencyKey("bad-1"), client.RequestID("order-7.try-2"))
	if !errors.As(err1, &first) || first.HTTPStatus < 400 || first.RequestID != "order-7.try-1" || first.Replayed {
		t.Errorf("refusal: got %#v, want a 4xx with RequestID order-7.try-1, not replayed", err1)
	}
	if !errors.As(err2, &again) || again.HTTPStatus != first.HTTPStatus || again.RequestID != "order-7.try-2" || !again.Replayed {
		t.Errorf("its retry under the key: got %#v, want the refusal replayed, RequestID order-7.try-2", err2)
	}
	_, err := c.Balances(ctx)
	var limited *client.Error
	if !errors.As(err, &limited) || limited.HTTPStatus != http.StatusTooManyRequests || limited.RetryAfter <= 0 || limited.RequestID == "" {
		t.Fatalf("over the rate limit: got %#v, want a 429 with RetryAfter and RequestID", err)
	}
}

// TestClientResultCarriesItsHeaders: a success says its X-Request-Id and
// whether it is the replay of an earlier call under the same key, on a
// purchase and on a surcharge preview, which takes CallOptions too.
func TestClientResultCarriesItsHeaders(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	card := client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env)}
	req := client.PurchaseRequest{Customer: customer, Card: &card, Purchase: client.PurchaseDetails{Amount: "3", Currency: "AUD"}}
	first, err := c.Purchase(ctx, req, client.IdempotencyKey("order-8"), client.RequestID("order-8.try-1"))
	if err != nil || first.RequestID != "order-8.try-1" || first.Replayed {
		t.Fatalf("purchase: got %+v, %v; want RequestID order-8.try-1, not replayed", first, err)
	}
	again, err := c.Purchase(ctx, req, client.IdempotencyKey("order-8"))
	if err != nil || !again.Replayed || again.RequestID == "" || again.Purchase.PurchaseReference != first.Purchase.PurchaseReference {
		t.Errorf("its retry: got %+v, %v; want %s replayed, with a RequestID", again, err, first.Purchase.PurchaseReference)
	}
	quote := client.SurchargeRequest{Card: card, Amount: "10.50", Currency: "AUD"}
	for i, want := range []bool{false, true} {
		q, err := c.Surcharge(ctx, quote, client.IdempotencyKey("quote-1"))
		if err != nil || q.Replayed != want {
			t.Errorf("surcharge %d under one key: got %+v, %v; want Replayed %v", i+1, q, err, want)
		}
	}
}

// TestClientSendsTheCustomersName: first_name, last_name and phone, which
// the API reads and the OpenAPI documents, reach the payment.
func TestClientSendsTheCustomersName(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	ctx := context.Background()
	who := customer
	who.FirstName, who.LastName, who.Phone = "Jo", "Citizen", "+61 2 5550 1234"
	res, err := c.Purchase(ctx, client.PurchaseRequest{Customer: who,
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env)},
		Purchase: client.PurchaseDetails{Amount: "2", Currency: "AUD"}})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := env.Service.TransactionStatus(ctx, m.Merchant, res.Purchase.PurchaseReference)
	if err != nil {
		t.Fatal(err)
	}
	if got := tx.Details.Customer; got.FirstName != "Jo" || got.LastName != "Citizen" || got.Phone != who.Phone {
		t.Errorf("got customer %q %q %q, want Jo Citizen %s", got.FirstName, got.LastName, got.Phone, who.Phone)
	}
}

// TestClientLookUpsTakeCallOptions: every look-up and list sends the
// caller's options: its RequestID comes back on the answer (or on the
// refusal of a call whose answer has no Result), and an option that
// spoils the credentials is refused, so the options reach each request.
func TestClientLookUpsTakeCallOptions(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	card := client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env)}
	paid, err := c.Purchase(ctx, client.PurchaseRequest{Customer: customer, Card: &card,
		Purchase: client.PurchaseDetails{Amount: "4", Currency: "AUD"}})
	if err != nil {
		t.Fatal(err)
	}
	ref := paid.Purchase.PurchaseReference
	if _, err := c.Refund(ctx, ref, client.RefundRequest{Customer: customer, Refund: client.RefundDetails{Amount: "1", Currency: "AUD"}}); err != nil {
		t.Fatal(err)
	}
	link, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{Amount: "5", Currency: "AUD", MerchantReference: "tea-1"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.TokenizeCard(ctx, client.TokenizeRequest{Card: card})
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]func(client.CallOption) (string, error){
		"PurchaseStatus": func(o client.CallOption) (string, error) {
			r, err := c.PurchaseStatus(ctx, ref, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"RefundStatus": func(o client.CallOption) (string, error) {
			r, err := c.RefundStatus(ctx, ref, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"PaymentLink": func(o client.CallOption) (string, error) {
			r, err := c.PaymentLink(ctx, link.ID, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"DirectDebitFee": func(o client.CallOption) (string, error) {
			r, err := c.DirectDebitFee(ctx, "100.00", "AUD", o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"Balances": func(o client.CallOption) (string, error) {
			r, err := c.Balances(ctx, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"BalanceTransactions": func(o client.CallOption) (string, error) {
			r, err := c.BalanceTransactions(ctx, client.Page{}, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"Payouts": func(o client.CallOption) (string, error) {
			r, err := c.Payouts(ctx, client.Page{}, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
		"WriteSettlementReport": func(o client.CallOption) (string, error) {
			r, err := c.WriteSettlementReport(ctx, env.Clock.Now().Format("2006-01-02"), io.Discard, o)
			return requestIDOf(r, err, func() string { return r.RequestID })
		},
	}
	for name, call := range answered {
		if got, err := call(client.RequestID("look-up." + name)); err != nil || got != "look-up."+name {
			t.Errorf("%s: got RequestID %q, %v; want look-up.%s", name, got, err, name)
		}
	}
	spoilt := func(r *http.Request) { r.Header.Set("Authorization", "Bearer pl_sk_not-a-key") }
	refused := map[string]func(...client.CallOption) error{
		"TransactionToken": func(o ...client.CallOption) error { _, err := c.TransactionToken(ctx, o...); return err },
		"Card":             func(o ...client.CallOption) error { _, err := c.Card(ctx, *tok.Card.Token, o...); return err },
		"SettlementReport": func(o ...client.CallOption) error {
			_, err := c.SettlementReport(ctx, env.Clock.Now().Format("2006-01-02"), o...)
			return err
		},
	}
	for name, call := range refused {
		if err := call(); err != nil {
			t.Errorf("%s without options: %v", name, err)
		}
		var e *client.Error
		err := call(spoilt, client.RequestID("spoilt."+name))
		if !errors.As(err, &e) || e.HTTPStatus != http.StatusUnauthorized || e.RequestID != "spoilt."+name {
			t.Errorf("%s with spoilt credentials: got %v, want a 401 with RequestID spoilt.%s", name, err, name)
		}
	}
}

// requestIDOf is a look-up's RequestID, read once its error is nil.
func requestIDOf[T any](r *T, err error, id func() string) (string, error) {
	if err != nil {
		return "", err
	}
	return id(), nil
}

// TestClientLookUpsReadTheCurrentState: a look-up sent with the caller's
// usual options, IdempotencyKey included, reads the link again after it
// changed (paylink would replay the first answer under the key).
func TestClientLookUpsReadTheCurrentState(t *testing.T) {
	c, _ := newClient(t)
	ctx := context.Background()
	link, err := c.CreatePaymentLink(ctx, client.PaymentLinkRequest{Amount: "5", Currency: "AUD", MerchantReference: "tea-2"})
	if err != nil {
		t.Fatal(err)
	}
	key := client.IdempotencyKey("order-9")
	before, err := c.PaymentLink(ctx, link.ID, key)
	if err != nil || before.Status != "unpaid" {
		t.Fatalf("look-up: got %+v, %v; want unpaid", before, err)
	}
	if _, err := c.CancelPaymentLink(ctx, link.ID); err != nil {
		t.Fatal(err)
	}
	after, err := c.PaymentLink(ctx, link.ID, key)
	if err != nil || after.Status != "cancelled" || after.Replayed {
		t.Errorf("look-up after the cancel, same options: got %+v, %v; want cancelled, not replayed", after, err)
	}
}
