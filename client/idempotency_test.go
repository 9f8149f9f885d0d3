package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

// TestConcurrentCallsUnderOneKeyShareOneToken: sixteen calls under one
// Idempotency-Key on one Client send one request (one transaction
// token), so one payment is made, and a later retry from the same
// Client replays it rather than meeting a "different request" conflict.
func TestConcurrentCallsUnderOneKeyShareOneToken(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	req := client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "12.00", Currency: "AUD", InvoiceNumber: "CONC-1"},
	}
	key := client.IdempotencyKey("conc-1")
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		refs = map[string]bool{}
	)
	for range 16 {
		wg.Go(func() {
			res, err := c.Purchase(ctx, req, key)
			mu.Lock()
			defer mu.Unlock()
			var e *client.Error
			switch {
			case err == nil:
				refs[res.Purchase.PurchaseReference] = true
			case errors.As(err, &e) && e.HTTPStatus == http.StatusConflict && e.Code == "idempotency_key_conflict" &&
				strings.Contains(e.Message, "still in progress"):
				// the same request while the first runs: fine
			default:
				t.Errorf("concurrent call: got %v, want the payment or an in-progress conflict", err)
			}
		})
	}
	wg.Wait()
	if len(refs) > 1 {
		t.Errorf("got %d payments, want one", len(refs))
	}
	again, err := c.Purchase(ctx, req, key)
	if err != nil || !again.Replayed {
		t.Fatalf("retry after the burst: got %+v, %v; want the payment replayed", again, err)
	}
	if len(refs) == 1 && !refs[again.Purchase.PurchaseReference] {
		t.Errorf("retry replayed %s, want the burst's payment %v", again.Purchase.PurchaseReference, refs)
	}
}

// failFirst fails the first request to path before sending it (a
// connection refused, say) and records the transaction token of every
// request to path it sends.
type failFirst struct {
	path   string
	mu     sync.Mutex
	failed bool
	sent   []string
}

func (f *failFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != f.path {
		return http.DefaultTransport.RoundTrip(r)
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var body struct {
		Token struct {
			TransactionToken string `json:"transaction_token"`
		} `json:"token"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	f.mu.Lock()
	first := !f.failed
	f.failed = true
	if !first {
		f.sent = append(f.sent, body.Token.TransactionToken)
	}
	f.mu.Unlock()
	if first {
		return nil, errors.New("simulated: connection refused")
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return http.DefaultTransport.RoundTrip(r)
}

// TestARetryAfterTheTokenLifetimeAsksForANewKey: a first attempt that
// never reached paylink leaves its transaction token remembered under
// the key; a retry after the token's lifetime is refused as expired.
// The client says the key must be replaced (nothing ran) and forgets
// the token, so it is never sent again, and a new key pays.
func TestARetryAfterTheTokenLifetimeAsksForANewKey(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Config: paylink.Config{TransactionTokenTTL: time.Minute}})
	m := env.Onboard()
	rt := &failFirst{path: "/v5/purchase"}
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken, client.WithHTTPClient(&http.Client{Transport: rt}))
	ctx := context.Background()
	req := client.PurchaseRequest{
		Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "3.00", Currency: "AUD", InvoiceNumber: "TTL-1"},
	}
	if _, err := c.Purchase(ctx, req, client.IdempotencyKey("ttl-1")); err == nil {
		t.Fatal("the first attempt was not failed")
	}
	env.Clock.Advance(2 * time.Minute)
	_, err := c.Purchase(ctx, req, client.IdempotencyKey("ttl-1"))
	if !errors.Is(err, client.ErrReplaceIdempotencyKey) || !client.IsCode(err, "transaction_token_expired") ||
		!strings.Contains(err.Error(), "new Idempotency-Key") {
		t.Fatalf("retry after the token lifetime: got %v, want ErrReplaceIdempotencyKey wrapping transaction_token_expired", err)
	}
	_, _ = c.Purchase(ctx, req, client.IdempotencyKey("ttl-1")) // whatever paylink answers, with which token?
	rt.mu.Lock()
	sent := rt.sent
	rt.mu.Unlock()
	if len(sent) != 2 || sent[0] == sent[1] {
		t.Errorf("tokens sent by the two retries: got %q, want the expired one forgotten after its refusal", sent)
	}
	res, err := c.Purchase(ctx, req, client.IdempotencyKey("ttl-2"))
	if err != nil || res.Purchase.Status != "APPROVED" {
		t.Errorf("under a new key: got %+v, %v; want APPROVED", res, err)
	}
}

// TestTransactionTokenLeavesTheKeyOut: a caller fetching its own token
// with the options of its order, an IdempotencyKey among them, gets a
// fresh token each time, and the purchase spending it under that key
// runs (paylink would otherwise replay the first token under the key and
// refuse the purchase as another request with it).
func TestTransactionTokenLeavesTheKeyOut(t *testing.T) {
	c, env := newClient(t)
	ctx := context.Background()
	opts := []client.CallOption{client.IdempotencyKey("order-42"), client.RequestID("order-42")}
	first, err := c.TransactionToken(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.TransactionToken(ctx, opts...)
	if err != nil || second == first {
		t.Errorf("two fetches with one key: got the same token %v (%v), want two", second == first, err)
	}
	req := retryPurchase(env, "ORDER-42")
	req.Token.TransactionToken = first
	if res, err := c.Purchase(ctx, req, opts...); err != nil || res.Purchase.Status != client.StatusApproved {
		t.Errorf("purchase with the token under the order's key: got %+v, %v; want approved", res, err)
	}
}
