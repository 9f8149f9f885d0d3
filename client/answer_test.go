package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/api"
	"github.com/paylink/paylink/internal/apitest"
)

// requestID is a CallOption sending the caller's own X-Request-Id.
func requestID(id string) client.CallOption {
	return func(r *http.Request) { r.Header.Set("X-Request-Id", id) }
}

// customer is a payer with every field a purchase needs.
var customer = client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}

// TestClientErrorCarriesItsHeaders: a refusal's Retry-After (429) and
// X-Request-Id reach client.Error, so a caller knows when to retry and
// what to quote; the replay of a remembered refusal says it is one.
func TestClientErrorCarriesItsHeaders(t *testing.T) {
	env := apitest.Start(t, apitest.Options{API: []api.Option{api.WithRateLimit(0.01, 3)}})
	m := env.Onboard()
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken)
	ctx := context.Background()
	bad := client.PurchaseRequest{Customer: customer,
		Card:     &client.Card{Number: "4111111111111112", ExpiryMonth: "12", ExpiryYear: year(env)},
		Purchase: client.PurchaseDetails{Amount: "1", Currency: "AUD"}}
	// Three requests: the transaction token, the purchase, its replay.
	var first, again *client.Error
	_, err1 := c.Purchase(ctx, bad, client.IdempotencyKey("bad-1"), requestID("order-7.try-1"))
	_, err2 := c.Purchase(ctx, bad, client.IdempotencyKey("bad-1"), requestID("order-7.try-2"))
	if !errors.As(err1, &first) || first.HTTPStatus != 400 || first.RequestID != "order-7.try-1" || first.Replayed {
		t.Errorf("refusal: got %#v, want a 400 with RequestID order-7.try-1, not replayed", err1)
	}
	if !errors.As(err2, &again) || again.HTTPStatus != 400 || again.RequestID != "order-7.try-2" || !again.Replayed {
		t.Errorf("its retry under the key: got %#v, want the 400 replayed, RequestID order-7.try-2", err2)
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
	first, err := c.Purchase(ctx, req, client.IdempotencyKey("order-8"), requestID("order-8.try-1"))
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
