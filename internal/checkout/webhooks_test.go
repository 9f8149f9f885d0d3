package checkout_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/processor"
)

// hookReceiver records the webhooks it is sent.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []map[string]any
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		h.mu.Lock()
		h.got = append(h.got, body)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// take returns and forgets what was received.
func (h *hookReceiver) take() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.got
	h.got = nil
	return got
}

// pay pays a link in one mode, given its two page addresses.
type pay func(t *testing.T, b *browser, hpp, vt string)

func payCard(number string) pay {
	return func(t *testing.T, b *browser, hpp, _ string) {
		b.post(hpp, cardForm(b.get(hpp).csrf(t), number))
	}
}

func payVT(t *testing.T, b *browser, _, vt string) {
	f := cardForm(b.get(vt).csrf(t), cardOK)
	f.Set("customer_reference", "PHONE-9")
	f.Set("invoice_number", "INV-VT-1")
	b.post(vt, f)
}

func payMethod(path string) pay {
	return func(t *testing.T, b *browser, hpp, _ string) {
		f := url.Values{"csrf": {b.get(hpp).csrf(t)}, "first_name": {"Sam"}}
		b.post(hpp+path, f)
		b.post(hpp+path+"/confirm", f)
	}
}

// TestLinkWebhooksOfEachMode pays links in every mode and checks that the
// company and the link's dynamic webhook each get the outcome once, with
// the link's fields.
func TestLinkWebhooksOfEachMode(t *testing.T) {
	env := start(t)
	company, dynamic := newHookReceiver(t), newHookReceiver(t)
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = company.URL+"/hooks", []string{"127.0.0.1"}
	})
	tests := []struct {
		name                                    string
		pay                                     pay
		status, webhookType, paymentType, brand string
		customerRef, invoice                    string
	}{
		{"hosted card", payCard(cardOK), "APPROVED", "HPP", "CreditCard", "visa", "CUST-7", "ORDER-42"},
		{"hosted card declined", payCard(cardDecline), "DECLINED", "HPP", "CreditCard", "visa", "CUST-7", "ORDER-42"},
		{"hosted card failed", payCard(processor.CardProcessingError), "FAILED", "HPP", "CreditCard", "visa", "CUST-7", "ORDER-42"},
		{"virtual terminal", payVT, "APPROVED", "VT", "CreditCard", "visa", "PHONE-9", "INV-VT-1"},
		{"Apple Pay", payMethod("/wallet/applepay"), "APPROVED", "HPP", "ApplePay", "visa", "CUST-7", "ORDER-42"},
		{"Google Pay", payMethod("/wallet/googlepay"), "APPROVED", "HPP", "GooglePay", "mastercard", "CUST-7", "ORDER-42"},
		{"Zip", payMethod("/zip"), "APPROVED", "HPP", "Zip", "zip", "CUST-7", "ORDER-42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := link(t, env, m, "10.50", map[string]any{"webhook_url": dynamic.URL + "/link-hook"})
			hpp, vt := pageURLs(r)
			tt.pay(t, newBrowser(t, env), hpp, vt)
			env.WaitWebhooks()
			for name, got := range map[string][]map[string]any{"company": company.take(), "dynamic": dynamic.take()} {
				if len(got) != 1 {
					t.Fatalf("%s webhook: got %d, want 1", name, len(got))
				}
				w := got[0]
				want := map[string]any{"status": tt.status, "webhook_type": tt.webhookType, "payment_type": tt.paymentType,
					"payment_link": r.Str("id"), "card_brand": tt.brand, "customer_reference": tt.customerRef,
					"invoice_number": tt.invoice, "mid": m.ID, "trading_name": "Acme Coffee"}
				for k, v := range want {
					if w[k] != v {
						t.Errorf("%s webhook %s: got %v, want %v", name, k, w[k], v)
					}
				}
			}
		})
	}
	t.Run("same URL as the company webhook is sent once", func(t *testing.T) {
		r := link(t, env, m, "10.50", map[string]any{"webhook_url": company.URL + "/hooks"})
		hpp, vt := pageURLs(r)
		payCard(cardOK)(t, newBrowser(t, env), hpp, vt)
		env.WaitWebhooks()
		if got := company.take(); len(got) != 1 {
			t.Errorf("got %d webhooks, want 1", len(got))
		}
	})
}

// TestCancelledAttemptsWebhookSaysCanceled: a customer who goes back
// during a challenge and pays again cancels the open attempt, and the
// merchant hears of it: a DECLINED webhook whose 3-D Secure reason is
// canceled, beside the approved payment's.
func TestCancelledAttemptsWebhookSaysCanceled(t *testing.T) {
	env := start(t)
	company := newHookReceiver(t)
	m := env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = company.URL+"/hooks", []string{"127.0.0.1"}
	})
	_, hpp, b, csrf := openPage(t, env, m)
	first := challengeRef(t, b.post(hpp, cardForm(csrf, card3DS)))
	if paid := b.post(hpp, cardForm(csrf, cardOK)); paid.status != http.StatusSeeOther {
		t.Fatalf("paying again: got %d, want 303", paid.status)
	}
	env.WaitWebhooks()
	byRef := map[string]map[string]any{}
	for _, w := range company.take() {
		ref, _ := w["transaction_reference"].(string)
		if byRef[ref] != nil {
			t.Errorf("two webhooks for %s", ref)
		}
		byRef[ref] = w
	}
	cancelled := byRef[first]
	if cancelled == nil {
		t.Fatalf("no webhook for the cancelled attempt %s among %d", first, len(byRef))
	}
	want := map[string]any{"status": "DECLINED", "threeds_result_reason": "canceled", "threeds_eci": nil, "transaction_auth_code": nil}
	for k, v := range want {
		if cancelled[k] != v {
			t.Errorf("cancelled attempt's webhook %s: got %v, want %v", k, cancelled[k], v)
		}
	}
	delete(byRef, first)
	if len(byRef) != 1 {
		t.Fatalf("got webhooks for %d other payments, want the approved one", len(byRef))
	}
	for _, w := range byRef {
		if w["status"] != "APPROVED" {
			t.Errorf("the new payment's webhook: got %v, want APPROVED", w["status"])
		}
	}
}
