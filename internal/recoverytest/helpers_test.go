package recoverytest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// engines runs fn on SQLite and on PostgreSQL, each with a fresh API
// configured by cfg.
func engines(t *testing.T, cfg paylink.Config, fn func(t *testing.T, env *apitest.Env)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, apitest.Start(t, apitest.Options{Config: cfg})) })
	t.Run("postgres", func(t *testing.T) {
		fn(t, apitest.Start(t, apitest.Options{Config: cfg, DSN: pg.Database(t)}))
	})
}

var ctx = context.Background()

var customer = paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}

// token issues a transaction token for m.
func token(t *testing.T, env *apitest.Env, m *apitest.Merchant) string {
	t.Helper()
	tok, err := env.Service.IssueTransactionToken(ctx, m.Merchant, m.Creds.CompanyToken)
	if err != nil {
		t.Fatalf("transaction token: %v", err)
	}
	return tok
}

// purchase is a card purchase (or hold) request of amount cents AUD.
func purchase(t *testing.T, env *apitest.Env, m *apitest.Merchant, number string, amount int64, hold bool) paylink.PurchaseRequest {
	return paylink.PurchaseRequest{CompanyToken: m.Creds.CompanyToken, TransactionToken: token(t, env, m),
		Customer: customer, Amount: amount, Currency: "AUD", PreAuth: hold,
		Card: &paylink.CardDetails{Number: number, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 2, CVC: "123"}}
}

// approved makes an approved purchase (or hold) and returns its reference.
func approved(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount int64, hold bool) string {
	t.Helper()
	tr, err := env.Service.Purchase(ctx, m.Merchant, purchase(t, env, m, "4111111111111111", amount, hold))
	if err != nil {
		t.Fatalf("purchase: %v", err)
	}
	return tr.Reference
}

// refund is a refund request of amount cents AUD.
func refund(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount int64) paylink.RefundRequest {
	return paylink.RefundRequest{CompanyToken: m.Creds.CompanyToken, TransactionToken: token(t, env, m),
		Customer: customer, Amount: amount, Currency: "AUD"}
}

// capture is a capture request of amount cents AUD.
func capture(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount int64) paylink.CaptureRequest {
	return paylink.CaptureRequest{CompanyToken: m.Creds.CompanyToken, TransactionToken: token(t, env, m),
		Amount: amount, Currency: "AUD"}
}

// debit is a direct debit request of amount cents from a sandbox account
// that clears.
func debit(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount int64) paylink.DirectDebitRequest {
	return paylink.DirectDebitRequest{CompanyToken: m.Creds.CompanyToken, TransactionToken: token(t, env, m),
		Customer: customer, Amount: amount, Currency: "AUD",
		Account: paylink.BankAccount{BSB: "062-000", Number: "12345678", HolderName: "Jo Citizen"}}
}

// status is the stored transaction, as a status look-up shows it.
func status(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) *paylink.Transaction {
	t.Helper()
	tr, err := env.Service.TransactionStatus(ctx, m.Merchant, ref)
	if err != nil {
		t.Fatalf("status of %s: %v", ref, err)
	}
	return tr
}

// refundStatus is the stored refund.
func refundStatus(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) *paylink.Refund {
	t.Helper()
	r, err := env.Service.RefundStatus(ctx, m.Merchant, ref)
	if err != nil {
		t.Fatalf("refund status of %s: %v", ref, err)
	}
	return r
}

// received waits until n requests of kind reached the sandbox acquirer
// or bank: the call is then in flight at the processor. It fails the test
// after a minute.
func received(t *testing.T, count func(paylink.OpKind) int, kind paylink.OpKind, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); count(kind) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the processor received %d %s requests, want %d", count(kind), kind, n)
		}
	}
}

// recoverAfterThreshold moves the clock past the recovery threshold and
// runs the recovery job once.
func recoverAfterThreshold(t *testing.T, env *apitest.Env) int {
	t.Helper()
	env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
	n, err := env.Service.RecoverInterrupted(ctx)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	return n
}

// onboard creates a merchant whose webhooks go to a local receiver.
func onboard(t *testing.T, env *apitest.Env) *apitest.Merchant {
	t.Helper()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(hooks.Close)
	return env.Onboard(func(n *paylink.NewMerchant) {
		n.Settings.Webhook.URL, n.Settings.Webhook.Domains = hooks.URL+"/hooks", []string{"127.0.0.1"}
	})
}

// webhooks counts the webhook deliveries enqueued for ref, by status.
func webhooks(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) map[paylink.Status]int {
	t.Helper()
	ds, err := env.Service.ListWebhooks(ctx, paylink.WebhookFilter{MerchantID: m.ID, Limit: 1000})
	if err != nil {
		t.Fatalf("list webhooks: %v", err)
	}
	out := map[paylink.Status]int{}
	for _, d := range ds {
		if d.Reference == ref {
			out[d.EventStatus]++
		}
	}
	return out
}

// wantClientError fails unless err is a 4xx-kind service error: a
// request-level refusal, never an internal error or an outage.
func wantClientError(t *testing.T, what string, err error) {
	t.Helper()
	var e *paylink.Error
	if !errors.As(err, &e) || e.Kind == paylink.KindInternal || e.Kind == paylink.KindUnavailable {
		t.Errorf("%s: got %v, want a 4xx error", what, err)
	}
}
