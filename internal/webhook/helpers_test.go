package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
}

// receiver is a merchant's webhook endpoint: a real HTTP server on
// 127.0.0.1 answering with status (200 unless set).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status int
	hits   chan struct{}
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{status: status, hits: make(chan struct{}, 100)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{Header: req.Header.Clone(), Body: body})
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status)
		r.hits <- struct{}{}
	}))
	t.Cleanup(r.Close)
	return r
}

// requests returns what the receiver got so far.
func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) setStatus(s int) {
	r.mu.Lock()
	r.status = s
	r.mu.Unlock()
}

// onboard creates a merchant whose company webhook is url, whitelisting
// domains (127.0.0.1 when none are given).
func onboard(env *apitest.Env, url string, mutate func(*paylink.NewMerchant), domains ...string) *apitest.Merchant {
	if len(domains) == 0 {
		domains = []string{"127.0.0.1"}
	}
	return env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = url, domains
		if mutate != nil {
			mutate(n)
		}
	})
}

// purchase makes an API card purchase and returns its reference.
func purchase(t *testing.T, env *apitest.Env, m *apitest.Merchant, number, amount string, mutate ...func(map[string]any)) string {
	t.Helper()
	r := env.Post("/v5/purchase", m, env.CardPurchase(m, number, amount, mutate...))
	if r.Status != http.StatusOK {
		t.Fatalf("purchase: got %d %s, want 200", r.Status, r.Raw)
	}
	return r.Str("purchase.purchase_reference")
}

// deliveries lists the merchant's deliveries, oldest first.
func deliveries(t *testing.T, env *apitest.Env, m *apitest.Merchant) []*paylink.WebhookDelivery {
	t.Helper()
	ds, err := env.Service.ListWebhooks(context.Background(), paylink.WebhookFilter{MerchantID: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	return ds
}

// decode parses a webhook body.
func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("webhook body is not JSON: %v: %s", err, body)
	}
	return m
}

// waitHit waits for one request at r (a generous bound against hangs,
// not a timing assertion).
func waitHit(t *testing.T, r *receiver) {
	t.Helper()
	select {
	case <-r.hits:
	case <-time.After(30 * time.Second):
		t.Fatal("receiver got no webhook within 30s")
	}
}
