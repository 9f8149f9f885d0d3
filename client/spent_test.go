package client_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink/client"
	"github.com/paylink/paylink/internal/apitest"
)

// spender is one money-moving call for TestAnAttemptThatSpentTheTokenIsLookedUp:
// what it needs made first (prepare, through a client that loses
// nothing), the path its attempts go to, the call, and the status and
// reference its result must carry.
type spender struct {
	name    string
	prepare func(t *testing.T, c *client.Client, env *apitest.Env) string // the reference the call works on, if any
	path    func(ref string) string
	call    func(c *client.Client, env *apitest.Env, ref string) (client.Result, string, string, error) // result, status, reference
	status  string
}

func spenders() []spender {
	ctx := context.Background()
	refund := client.RefundRequest{Customer: buyer, Refund: client.RefundDetails{Amount: "2.00", Currency: "AUD"}}
	debit := client.DirectDebitRequest{
		BankAccount: client.BankAccount{Number: "123456789", HolderName: "Jo Citizen", BSB: "062-000"},
		Customer:    buyer,
		Purchase:    client.DirectDebitDetails{Amount: "50.00", Currency: "AUD"},
	}
	purchaseOf := func(res *client.TransactionResult, err error) (client.Result, string, string, error) {
		if err != nil {
			return client.Result{}, "", "", err
		}
		return res.Result, res.Purchase.Status, res.Purchase.PurchaseReference, nil
	}
	refundOf := func(res *client.RefundResult, err error) (client.Result, string, string, error) {
		if err != nil {
			return client.Result{}, "", "", err
		}
		return res.Result, res.Refund.Status, res.Refund.RefundReference, nil
	}
	hold := func(t *testing.T, c *client.Client, env *apitest.Env) string { return holdOf(t, c, env, "9.00") }
	paid := func(t *testing.T, c *client.Client, env *apitest.Env) string {
		t.Helper()
		res, err := c.Purchase(ctx, retryPurchase(env, ""))
		if err != nil || res.Purchase.Status != client.StatusApproved {
			t.Fatalf("purchase: got %+v, %v", res, err)
		}
		return res.Purchase.PurchaseReference
	}
	cleared := func(t *testing.T, c *client.Client, env *apitest.Env) string {
		t.Helper()
		res, err := c.DirectDebit(ctx, debit)
		if err != nil {
			t.Fatalf("direct debit: %v", err)
		}
		env.Clock.Advance(73 * time.Hour)
		if _, err := env.Service.ClearDirectDebits(ctx); err != nil {
			t.Fatal(err)
		}
		return res.Purchase.PurchaseReference
	}
	none := func(*testing.T, *client.Client, *apitest.Env) string { return "" }
	return []spender{
		{"purchase", none, func(string) string { return "/v5/purchase" },
			func(c *client.Client, env *apitest.Env, _ string) (client.Result, string, string, error) {
				return purchaseOf(c.Purchase(ctx, retryPurchase(env, "SPENT-1")))
			}, client.StatusApproved},
		{"capture", hold, func(ref string) string { return "/v5/purchase/" + ref + "/capture" },
			func(c *client.Client, _ *apitest.Env, ref string) (client.Result, string, string, error) {
				return purchaseOf(c.Capture(ctx, ref, client.CaptureRequest{Capture: client.CaptureDetails{Amount: "9.00", Currency: "AUD"}}))
			}, client.StatusApproved},
		{"cancel", hold, func(ref string) string { return "/v5/purchase/" + ref + "/cancel" },
			func(c *client.Client, _ *apitest.Env, ref string) (client.Result, string, string, error) {
				return purchaseOf(c.Cancel(ctx, ref, client.CancelRequest{}))
			}, client.StatusPreAuthorisedReversed},
		{"refund", paid, func(ref string) string { return "/v5/purchase/" + ref + "/refund" },
			func(c *client.Client, _ *apitest.Env, ref string) (client.Result, string, string, error) {
				return refundOf(c.Refund(ctx, ref, refund))
			}, client.StatusApproved},
		{"direct debit", none, func(string) string { return "/v5/direct_debit" },
			func(c *client.Client, _ *apitest.Env, _ string) (client.Result, string, string, error) {
				res, err := c.DirectDebit(ctx, debit)
				if err != nil {
					return client.Result{}, "", "", err
				}
				return res.Result, res.Purchase.Status, res.Purchase.PurchaseReference, nil
			}, client.StatusPending},
		{"direct debit refund", cleared, func(ref string) string { return "/v5/direct_debit/" + ref + "/refund" },
			func(c *client.Client, _ *apitest.Env, ref string) (client.Result, string, string, error) {
				return refundOf(c.DirectDebitRefund(ctx, ref, refund))
			}, client.StatusApproved},
	}
}

// TestAnAttemptThatSpentTheTokenIsLookedUp: a money-moving call's first
// attempt is made, and paylink's answer is lost as when its database
// stops after the COMMIT: a 503 that releases the key. The retry, same
// key, same token, is refused transaction_token_used naming the
// operation that spent it. The client fetched that token for this call,
// so that operation is the first attempt: the call returns it, looked
// up, marked Recovered, instead of the refusal.
func TestAnAttemptThatSpentTheTokenIsLookedUp(t *testing.T) {
	for _, s := range spenders() {
		t.Run(s.name, func(t *testing.T) {
			env := apitest.Start(t, apitest.Options{})
			m := env.Onboard()
			ref := s.prepare(t, client.New(env.Server.URL, m.Creds.APIKey, m.Creds.CompanyToken), env)
			path := s.path(ref)
			p := newProxy(t, env, on(path, 1, paidUnanswered))
			res, status, made, err := s.call(retryingClient(p, m, 3), env, ref)
			if err != nil || !res.Recovered || !res.Replayed || status != s.status || made == "" {
				t.Fatalf("got %+v %s %q, %v; want the first attempt's %s, recovered", res, status, made, err, s.status)
			}
			if got := p.statuses(path); !slices.Equal(got, []int{http.StatusOK, http.StatusConflict}) {
				t.Errorf("answers paylink sent: got %v, want the first attempt's 200, then 409 transaction_token_used", got)
			}
			wantAttempts(t, p, "/v5/transaction_token", 1)
			if s.name == "purchase" {
				oneAuthorisation(t, env)
			}
		})
	}
}

// TestACallersSpentTokenIsNotLookedUp: the same lost answer to a
// purchase whose transaction token the caller passed. The client cannot
// tell who else had the token: the refusal is the call's error.
func TestACallersSpentTokenIsNotLookedUp(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/purchase", 1, paidUnanswered))
	c := retryingClient(p, m, 3)
	tok, err := c.TransactionToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	req := retryPurchase(env, "OWN-1")
	req.Token.TransactionToken = tok
	res, err := c.Purchase(context.Background(), req)
	if res != nil || !client.IsCode(err, client.CodeTransactionTokenUsed) {
		t.Fatalf("got %+v, %v; want the refusal transaction_token_used", res, err)
	}
}

// TestAKeyReusedForAnotherCallIsNotRecovered: a purchase's answer is
// lost (the 503 releases its key), and the caller then sends another
// purchase under the same key: the client resends the token it
// remembered for the key, which the first purchase spent. That payment
// is not this call's result (another order, another amount): the
// refusal stands (second verification sweep: the call returned the first
// order's payment as its own).
func TestAKeyReusedForAnotherCallIsNotRecovered(t *testing.T) {
	env, c := lostUnderKey(t, "ORDER-A", "k-1")
	ctx := context.Background()
	other := retryPurchase(env, "ORDER-B")
	other.Purchase.Amount = "99.00"
	res, err := c.Purchase(ctx, other, client.IdempotencyKey("k-1"))
	if res != nil || !client.IsCode(err, client.CodeTransactionTokenUsed) {
		t.Fatalf("another purchase under the key: got %+v, %v; want the refusal transaction_token_used", res, err)
	}
	// The first order repeated: paylink keeps the second's refusal
	// under the key now, and the client would not recover anyway: the
	// token also went out with the second order.
	res, err = c.Purchase(ctx, retryPurchase(env, "ORDER-A"), client.IdempotencyKey("k-1"))
	if res != nil || !client.IsCode(err, client.CodeIdempotencyConflict) {
		t.Fatalf("the first purchase repeated after another: got %+v, %v; want the refusal idempotency_key_conflict", res, err)
	}
}

// lostPurchase makes a purchase with card number whose first answer is
// lost, as paylink's database stopping after its COMMIT loses it, through
// a client that retries.
func lostPurchase(t *testing.T, number string, set func(*client.PurchaseRequest)) (*client.TransactionResult, error) {
	t.Helper()
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/purchase", 1, paidUnanswered))
	req := retryPurchase(env, "LOST-1")
	req.Card.Number = number
	if set != nil {
		set(&req)
	}
	return retryingClient(p, m, 3).Purchase(context.Background(), req)
}

// TestARecoveredDeclineSaysDeclined: a declined purchase whose answer
// was lost is recovered with the outcome code its answer had, not the
// look-up's "success".
func TestARecoveredDeclineSaysDeclined(t *testing.T) {
	res, err := lostPurchase(t, "4000000000000002", nil)
	if err != nil || !res.Recovered || res.Purchase.Status != client.StatusDeclined || res.ResponseCode != client.CodeDeclined {
		t.Fatalf("got %+v, %v; want the decline recovered with response_code declined", res, err)
	}
}

// TestARecoveredPendingDirectDebitIsPending: a direct debit whose answer
// was lost is recovered PENDING, and its response code says "pending",
// as a card payment's recovered PENDING does: the look-up cannot tell a
// debit lodged with the bank from one whose bank has not answered, and
// neither is money received (docs/direct-debit.md). It said "success",
// which a caller deciding on the response code read as paid.
func TestARecoveredPendingDirectDebitIsPending(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	p := newProxy(t, env, on("/v5/direct_debit", 1, paidUnanswered))
	res, err := retryingClient(p, m, 3).DirectDebit(context.Background(), client.DirectDebitRequest{
		BankAccount: client.BankAccount{Number: "123456789", HolderName: "Jo Citizen", BSB: "062-000"},
		Customer:    buyer,
		Purchase:    client.DirectDebitDetails{Amount: "50.00", Currency: "AUD", InvoiceNumber: "DD-LOST-1"},
	})
	if err != nil || !res.Recovered || res.Purchase.Status != client.StatusPending || res.ResponseCode != client.CodePending {
		t.Fatalf("got %+v, %v; want the debit recovered PENDING with response_code pending", res, err)
	}
	if res.Purchase.InvoiceNumber != "DD-LOST-1" || res.Purchase.PurchaseReference == "" {
		t.Errorf("got invoice %q, reference %q; want the lost attempt's debit", res.Purchase.InvoiceNumber, res.Purchase.PurchaseReference)
	}
}

// TestARecoveredChallengeIsNoResult: a purchase whose lost answer asked
// for a 3-D Secure challenge carried the challenge's address alone; the
// look-up has none, so the refusal stands, saying why.
func TestARecoveredChallengeIsNoResult(t *testing.T) {
	res, err := lostPurchase(t, "4000000000003220", func(req *client.PurchaseRequest) {
		req.Customer.ShouldServiceApplyAuth, req.Customer.AuthenticationRedirectURL = true, "https://shop.example/back"
	})
	if res != nil || !client.IsCode(err, client.CodeTransactionTokenUsed) || !strings.Contains(err.Error(), "3-D Secure challenge") {
		t.Fatalf("got %+v, %v; want the refusal, saying the attempt awaits its challenge", res, err)
	}
}

// TestARequestRepeatedUnderItsKeyIsRecovered: a purchase's answer is
// lost (the 503 releases its key) and the client gives up; the caller
// repeats the same request under the same key. The client resends the
// token it remembered for the key, which only this request ever sent, so
// the payment that spent it is this request's: returned, recovered
// (it was the refusal transaction_token_used, which left the caller to
// look the payment up).
func TestARequestRepeatedUnderItsKeyIsRecovered(t *testing.T) {
	env, c := lostUnderKey(t, "ORDER-A", "k-1")
	res, err := c.Purchase(context.Background(), retryPurchase(env, "ORDER-A"), client.IdempotencyKey("k-1"))
	if err != nil || !res.Recovered || res.Purchase.Status != client.StatusApproved || res.Purchase.InvoiceNumber != "ORDER-A" {
		t.Fatalf("the same purchase again under its key: got %+v, %v; want the first attempt's payment, recovered", res, err)
	}
	oneAuthorisation(t, env)
}

// lostUnderKey makes a purchase of order under key whose answer is lost
// (a 503 that releases the key), through a client that does not retry,
// and returns the client for the test's next calls.
func lostUnderKey(t *testing.T, order, key string) (*apitest.Env, *client.Client) {
	t.Helper()
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	c := retryingClient(newProxy(t, env, on("/v5/purchase", 1, paidUnanswered)), m, 0)
	if _, err := c.Purchase(context.Background(), retryPurchase(env, order), client.IdempotencyKey(key)); err == nil {
		t.Fatalf("the purchase of %s: want its answer lost", order)
	}
	return env, c
}
