package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paylink/paylink/client"
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
