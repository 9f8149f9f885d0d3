package client_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

// TestRequestIDs: an id paylink keeps (1 to 64 of [A-Za-z0-9._-]) is
// echoed in the answer; one it would replace is refused before anything
// is sent, so the caller's correlation id is never lost in silence.
func TestRequestIDs(t *testing.T) {
	c, _ := newClient(t)
	ctx := context.Background()
	for _, id := range []string{"order-7.try_1", strings.Repeat("a", 64)} {
		st, err := c.DirectDebitFee(ctx, "10.00", "AUD", client.RequestID(id))
		if err != nil || st.RequestID != id {
			t.Errorf("RequestID(%q): got %+v, %v; want it echoed", id, st, err)
		}
	}
	for _, id := range []string{"", "order 7/try#1", strings.Repeat("a", 65), "ordér-7"} {
		if _, err := c.DirectDebitFee(ctx, "10.00", "AUD", client.RequestID(id)); err == nil || !strings.Contains(err.Error(), "X-Request-Id") {
			t.Errorf("RequestID(%q): got %v, want an error naming X-Request-Id", id, err)
		}
	}
}

// headerLog records, by path, the X-Request-Id and Idempotency-Key of
// each request it sends.
type headerLog struct {
	mu   sync.Mutex
	seen map[string][2]string
}

func (l *headerLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.seen[r.URL.Path] = [2]string{r.Header.Get("X-Request-Id"), r.Header.Get("Idempotency-Key")}
	l.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestTheTokenFetchCarriesTheRequestID: the transaction token a payment
// fetches for itself is logged under the payment's RequestID (one id
// for the whole payment), without its Idempotency-Key (under which
// paylink would replay the token of another call).
func TestTheTokenFetchCarriesTheRequestID(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	log := &headerLog{seen: map[string][2]string{}}
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken, client.WithHTTPClient(&http.Client{Transport: log}))
	_, err := c.Purchase(context.Background(), client.PurchaseRequest{Customer: client.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"},
		Card:     &client.Card{Number: "4111111111111111", ExpiryMonth: "12", ExpiryYear: year(env), CVC: "123"},
		Purchase: client.PurchaseDetails{Amount: "2", Currency: "AUD"}}, client.RequestID("order-8"), client.IdempotencyKey("k-8"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][2]string{"/v5/transaction_token": {"order-8", ""}, "/v5/purchase": {"order-8", "k-8"}} {
		if got := log.seen[path]; got != want {
			t.Errorf("%s: got X-Request-Id, Idempotency-Key %q, want %q", path, got, want)
		}
	}
}

// TestANilHTTPClientIsTheDefault: WithHTTPClient(nil) leaves the default
// client, rather than a nil one that panics on the first call.
func TestANilHTTPClientIsTheDefault(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	c := client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken, client.WithHTTPClient(nil))
	if _, err := c.Balances(context.Background()); err != nil {
		t.Errorf("got %v", err)
	}
}
