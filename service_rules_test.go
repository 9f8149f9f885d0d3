package paylink_test

// Business rules tested at the Service level, on both store engines:
// state transitions, capture and refund limits, transaction token use,
// expiry and the link rules. The API tests (internal/api) check the HTTP
// contract of the same calls.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// engines runs fn against a fresh Service on SQLite and on PostgreSQL.
func engines(t *testing.T, fn func(t *testing.T, r *rig)) {
	enginesWith(t, func() apitest.Options { return apitest.Options{} }, fn)
}

// enginesWith is engines with the options opts returns for each engine.
func enginesWith(t *testing.T, opts func() apitest.Options, fn func(t *testing.T, r *rig)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			o := opts()
			if engine == "postgres" {
				o.DSN = pg.Database(t)
			}
			env := apitest.Start(t, o)
			fn(t, &rig{t: t, env: env, svc: env.Service, m: env.Onboard()})
		})
	}
}

// rig is one engine's Service with an onboarded merchant.
type rig struct {
	t   *testing.T
	env *apitest.Env
	svc *paylink.Service
	m   *apitest.Merchant
}

var ctx = context.Background()

// token issues a transaction token for the rig's merchant.
func (r *rig) token() string {
	r.t.Helper()
	tok, err := r.svc.IssueTransactionToken(ctx, r.m.Merchant, r.m.Creds.CompanyToken)
	if err != nil {
		r.t.Fatalf("issue transaction token: %v", err)
	}
	return tok
}

// purchaseRequest is a valid card purchase of amount AUD cents.
func (r *rig) purchaseRequest(pan string, amount int64, preAuth bool) paylink.PurchaseRequest {
	return paylink.PurchaseRequest{
		CompanyToken: r.m.Creds.CompanyToken, TransactionToken: r.token(),
		Customer: paylink.Customer{IPAddress: "192.0.2.10", Timezone: "UTC"},
		Card:     &paylink.CardDetails{Number: pan, ExpiryMonth: 12, ExpiryYear: r.env.Clock.Now().Year() + 2, CVC: "123"},
		Amount:   amount, Currency: "AUD", PreAuth: preAuth,
	}
}

// pay makes a purchase and requires it to end in want.
func (r *rig) pay(pan string, amount int64, preAuth bool, want paylink.Status) *paylink.Transaction {
	r.t.Helper()
	tr, err := r.svc.Purchase(ctx, r.m.Merchant, r.purchaseRequest(pan, amount, preAuth))
	if err != nil {
		r.t.Fatalf("purchase: %v", err)
	}
	if tr.Status != want {
		r.t.Fatalf("purchase: got status %s, want %s", tr.Status, want)
	}
	return tr
}

func (r *rig) capture(ref string, amount int64) (*paylink.Transaction, error) {
	return r.svc.Capture(ctx, r.m.Merchant, ref, paylink.CaptureRequest{CompanyToken: r.m.Creds.CompanyToken,
		TransactionToken: r.token(), Amount: amount, Currency: "AUD"})
}

func (r *rig) cancel(ref string) (*paylink.Transaction, error) {
	return r.svc.Cancel(ctx, r.m.Merchant, ref, paylink.CancelRequest{CompanyToken: r.m.Creds.CompanyToken,
		TransactionToken: r.token()})
}

func (r *rig) refund(ref string, amount int64) (*paylink.Refund, error) {
	rf, _, err := r.svc.Refund(ctx, r.m.Merchant, ref, paylink.RefundRequest{CompanyToken: r.m.Creds.CompanyToken,
		TransactionToken: r.token(), Customer: paylink.Customer{IPAddress: "192.0.2.10", Timezone: "UTC"},
		Amount: amount, Currency: "AUD"})
	return rf, err
}

// status is the stored status of ref, through the Service's look-up.
func (r *rig) status(ref string) paylink.Status {
	r.t.Helper()
	tr, err := r.svc.TransactionStatus(ctx, r.m.Merchant, ref)
	if err != nil {
		r.t.Fatalf("transaction status: %v", err)
	}
	return tr.Status
}

// wantCode requires err to be a paylink.Error with code (nil for success).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var perr *paylink.Error
	switch {
	case code == "" && err != nil:
		t.Errorf("got error %v, want success", err)
	case code != "" && (!errors.As(err, &perr) || perr.Code != code):
		t.Errorf("got error %v, want code %s", err, code)
	}
}

// TestHoldTransitions: what may follow a pre-authorisation, and what
// each step leaves behind.
func TestHoldTransitions(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		tests := []struct {
			name       string
			steps      func(ref string) error // the last step's error is checked
			wantCode   string
			wantStatus paylink.Status
		}{
			{"capture the whole hold", func(ref string) error { _, err := r.capture(ref, 5000); return err }, "", paylink.StatusApproved},
			{"capture part of the hold", func(ref string) error { _, err := r.capture(ref, 1200); return err }, "", paylink.StatusApproved},
			{"capture more than held", func(ref string) error { _, err := r.capture(ref, 5001); return err },
				paylink.CodeAmountExceedsAuthorised, paylink.StatusPreAuthorised},
			{"cancel", func(ref string) error { _, err := r.cancel(ref); return err }, "", paylink.StatusPreAuthorisedReversed},
			{"capture twice", func(ref string) error {
				if _, err := r.capture(ref, 1000); err != nil {
					return err
				}
				_, err := r.capture(ref, 1000)
				return err
			}, paylink.CodeAlreadyCaptured, paylink.StatusApproved},
			{"capture after cancel", func(ref string) error {
				if _, err := r.cancel(ref); err != nil {
					return err
				}
				_, err := r.capture(ref, 1000)
				return err
			}, paylink.CodeHoldReleased, paylink.StatusPreAuthorisedReversed},
			{"cancel after capture", func(ref string) error {
				if _, err := r.capture(ref, 1000); err != nil {
					return err
				}
				_, err := r.cancel(ref)
				return err
			}, paylink.CodeAlreadyCaptured, paylink.StatusApproved},
			{"refund a hold", func(ref string) error { _, err := r.refund(ref, 100); return err },
				paylink.CodeNotRefundable, paylink.StatusPreAuthorised},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ref := r.pay("4111111111111111", 5000, true, paylink.StatusPreAuthorised).Reference
				wantCode(t, tt.steps(ref), tt.wantCode)
				if got := r.status(ref); got != tt.wantStatus {
					t.Errorf("got status %s, want %s", got, tt.wantStatus)
				}
			})
		}
	})
}

// TestNotAHold: a sale, a decline and a failure cannot be captured or
// cancelled; only an approved sale is refundable.
func TestNotAHold(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		tests := []struct {
			name, pan string
			want      paylink.Status
		}{
			{"approved sale", "4111111111111111", paylink.StatusApproved},
			{"declined", "4000000000000002", paylink.StatusDeclined},
			{"failed", "4000000000000119", paylink.StatusFailed},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ref := r.pay(tt.pan, 2000, false, tt.want).Reference
				_, err := r.capture(ref, 2000)
				wantCode(t, err, paylink.CodeInvalidState)
				_, err = r.cancel(ref)
				wantCode(t, err, paylink.CodeInvalidState)
				if tt.want != paylink.StatusApproved {
					_, err = r.refund(ref, 100)
					wantCode(t, err, paylink.CodeNotRefundable)
				}
				if got := r.status(ref); got != tt.want {
					t.Errorf("got status %s, want %s", got, tt.want)
				}
			})
		}
	})
}

// TestRefundLimits: refunds add up to at most the captured total, in the
// transaction's currency.
func TestRefundLimits(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		t.Run("partial refunds up to the total", func(t *testing.T) {
			ref := r.pay("4111111111111111", 3000, false, paylink.StatusApproved).Reference
			for _, step := range []struct {
				amount   int64
				wantCode string
			}{{1000, ""}, {2001, paylink.CodeAmountExceedsRefundable}, {2000, ""}, {1, paylink.CodeAmountExceedsRefundable}} {
				_, err := r.refund(ref, step.amount)
				wantCode(t, err, step.wantCode)
			}
			tr, err := r.svc.TransactionStatus(ctx, r.m.Merchant, ref)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Refunded != 3000 {
				t.Errorf("got refunded %d, want 3000", tr.Refunded)
			}
		})
		t.Run("a captured hold refunds only what was captured", func(t *testing.T) {
			ref := r.pay("4111111111111111", 5000, true, paylink.StatusPreAuthorised).Reference
			if _, err := r.capture(ref, 1500); err != nil {
				t.Fatal(err)
			}
			_, err := r.refund(ref, 1501)
			wantCode(t, err, paylink.CodeAmountExceedsRefundable)
			_, err = r.refund(ref, 1500)
			wantCode(t, err, "")
		})
		t.Run("another currency", func(t *testing.T) {
			ref := r.pay("4111111111111111", 3000, false, paylink.StatusApproved).Reference
			_, _, err := r.svc.Refund(ctx, r.m.Merchant, ref, paylink.RefundRequest{CompanyToken: r.m.Creds.CompanyToken,
				TransactionToken: r.token(), Customer: paylink.Customer{IPAddress: "192.0.2.10", Timezone: "UTC"},
				Amount: 100, Currency: "NZD"})
			wantCode(t, err, paylink.CodeCurrencyMismatch)
		})
	})
}

// TestTransactionTokenUse: a transaction token authorises one operation
// of its own merchant, within its lifetime; a refused request does not
// spend it or store anything.
func TestTransactionTokenUse(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		t.Run("used once", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			if _, err := r.svc.Purchase(ctx, r.m.Merchant, req); err != nil {
				t.Fatal(err)
			}
			_, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			wantCode(t, err, paylink.CodeTransactionTokenUsed)
		})
		// On PostgreSQL the spending is sent with the operation's next
		// round trip (a read, or the commit), so the refusal comes back
		// from the store late; every operation answers it the same way.
		t.Run("used once, whatever the operation", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			paid, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			if err != nil {
				t.Fatal(err)
			}
			held := r.pay("4111111111111111", 1000, true, paylink.StatusPreAuthorised)
			spent := req.TransactionToken
			_, _, err = r.svc.Refund(ctx, r.m.Merchant, paid.Reference, paylink.RefundRequest{CompanyToken: r.m.Creds.CompanyToken,
				TransactionToken: spent, Customer: req.Customer, Amount: 100, Currency: "AUD"})
			wantCode(t, err, paylink.CodeTransactionTokenUsed)
			_, err = r.svc.Capture(ctx, r.m.Merchant, held.Reference, paylink.CaptureRequest{CompanyToken: r.m.Creds.CompanyToken,
				TransactionToken: spent, Amount: 1000, Currency: "AUD"})
			wantCode(t, err, paylink.CodeTransactionTokenUsed)
			_, err = r.svc.Cancel(ctx, r.m.Merchant, held.Reference, paylink.CancelRequest{CompanyToken: r.m.Creds.CompanyToken,
				TransactionToken: spent})
			wantCode(t, err, paylink.CodeTransactionTokenUsed)
			if got := r.status(held.Reference); got != paylink.StatusPreAuthorised {
				t.Errorf("the hold after refused captures and cancels: got %s, want %s", got, paylink.StatusPreAuthorised)
			}
		})
		t.Run("raced", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			const racers = 8
			errs := make([]error, racers)
			var wg sync.WaitGroup
			for i := range racers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine, card := req, *req.Card // each request its own card, as decoded from its own body
					mine.Card, mine.InvoiceNumber = &card, fmt.Sprintf("RACE-%d", i)
					_, errs[i] = r.svc.Purchase(ctx, r.m.Merchant, mine)
				}()
			}
			wg.Wait()
			var won int
			for i, err := range errs {
				_, lookErr := r.svc.TransactionStatus(ctx, r.m.Merchant, fmt.Sprintf("RACE-%d", i))
				if err == nil {
					won++
					if lookErr != nil {
						t.Errorf("the winner's payment: %v", lookErr)
					}
					continue
				}
				wantCode(t, err, paylink.CodeTransactionTokenUsed)
				wantCode(t, lookErr, paylink.CodeNotFound) // a refused purchase stores nothing
			}
			if won != 1 {
				t.Errorf("got %d purchases with one token, want 1", won)
			}
		})
		t.Run("another merchant's", func(t *testing.T) {
			other := r.env.Onboard()
			req := r.purchaseRequest("4111111111111111", 1000, false)
			req.CompanyToken = other.Creds.CompanyToken
			_, err := r.svc.Purchase(ctx, other.Merchant, req)
			wantCode(t, err, paylink.CodeTransactionTokenInvalid)
		})
		t.Run("unknown", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			req.TransactionToken = strings.Repeat("x", paylink.TokenLength)
			_, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			wantCode(t, err, paylink.CodeTransactionTokenInvalid)
		})
		t.Run("altered", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			for _, at := range []int{1, 20, paylink.TokenLength - 1} { // expiry, nonce, MAC
				b := []byte(req.TransactionToken)
				b[at] = map[bool]byte{true: 'a', false: 'b'}[b[at] != 'a']
				bad := req
				bad.TransactionToken = string(b)
				_, err := r.svc.Purchase(ctx, r.m.Merchant, bad)
				wantCode(t, err, paylink.CodeTransactionTokenInvalid)
			}
			if _, err := r.svc.Purchase(ctx, r.m.Merchant, req); err != nil {
				t.Errorf("the unaltered token after refused copies: got %v, want it usable", err)
			}
		})
		// Hex decoding takes either case, so the MAC's letters could be
		// respelled into tokens that pass the MAC but are spent under
		// another hash: each token has one spelling only.
		t.Run("respelled", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			if _, err := r.svc.Purchase(ctx, r.m.Merchant, req); err != nil {
				t.Fatal(err)
			}
			signed, mac := req.TransactionToken[:paylink.TokenLength-64], req.TransactionToken[paylink.TokenLength-64:]
			again := req
			again.TransactionToken = signed + strings.ToUpper(mac)
			if again.TransactionToken == req.TransactionToken {
				t.Fatal("the MAC has no letter to respell")
			}
			_, err := r.svc.Purchase(ctx, r.m.Merchant, again)
			wantCode(t, err, paylink.CodeTransactionTokenInvalid)
		})
		t.Run("expired", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			r.env.Clock.Advance(paylink.DefaultTransactionTokenTTL + time.Second)
			_, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			wantCode(t, err, paylink.CodeTransactionTokenExpired)
		})
		t.Run("forgotten only after its expiry", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			if _, err := r.svc.Purchase(ctx, r.m.Merchant, req); err != nil {
				t.Fatal(err)
			}
			if n, err := r.svc.CleanupTransactionTokens(ctx); err != nil || n != 0 {
				t.Errorf("clean-up before expiry: got %d, %v; want 0", n, err)
			}
			r.env.Clock.Advance(paylink.DefaultTransactionTokenTTL + time.Hour + time.Second)
			if n, err := r.svc.CleanupTransactionTokens(ctx); err != nil || n < 1 {
				t.Errorf("clean-up after expiry: got %d, %v; want at least 1", n, err)
			}
			_, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			wantCode(t, err, paylink.CodeTransactionTokenExpired)
		})
		t.Run("not spent by a refused request", func(t *testing.T) {
			req := r.purchaseRequest("4111111111111111", 1000, false)
			bad := req
			bad.Currency, bad.InvoiceNumber = "XXX", "REFUSED-1"
			_, err := r.svc.Purchase(ctx, r.m.Merchant, bad)
			wantCode(t, err, paylink.CodeInvalidRequest)
			_, err = r.svc.TransactionStatus(ctx, r.m.Merchant, bad.InvoiceNumber)
			wantCode(t, err, paylink.CodeNotFound)
			tr, err := r.svc.Purchase(ctx, r.m.Merchant, req)
			if err != nil || tr.Status != paylink.StatusApproved {
				t.Errorf("got %v, %v after a refused request, want the token still usable", tr, err)
			}
		})
	})
}

// TestPreAuthExpiry: a hold older than the expiry is released by the job
// and can no longer be captured; a younger one is kept.
func TestPreAuthExpiry(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		old := r.pay("4111111111111111", 5000, true, paylink.StatusPreAuthorised).Reference
		r.env.Clock.Advance(paylink.DefaultPreAuthExpiry - time.Hour)
		young := r.pay("4111111111111111", 5000, true, paylink.StatusPreAuthorised).Reference
		r.env.Clock.Advance(2 * time.Hour)
		// Overdue, and the job has not run yet: a capture is refused all
		// the same, and nothing changes.
		_, err := r.capture(old, 1000)
		wantCode(t, err, paylink.CodeHoldReleased)
		if got := r.status(old); got != paylink.StatusPreAuthorised {
			t.Errorf("overdue hold after the refused capture: got %s, want it left to the job", got)
		}
		n, err := r.svc.ExpirePreAuths(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("got %d holds expired, want 1", n)
		}
		if got := r.status(old); got != paylink.StatusPreAuthorisedReversed {
			t.Errorf("old hold: got %s, want %s", got, paylink.StatusPreAuthorisedReversed)
		}
		if got := r.status(young); got != paylink.StatusPreAuthorised {
			t.Errorf("young hold: got %s, want %s", got, paylink.StatusPreAuthorised)
		}
		_, err = r.capture(old, 1000)
		wantCode(t, err, paylink.CodeHoldReleased)
	})
}

// voidRefuser is the sandbox acquirer, except that it refuses to void
// the holds it is told to (an authorisation it no longer knows), and
// counts its refusals.
type voidRefuser struct {
	processor.Sandbox
	mu       sync.Mutex
	refusing map[string]bool
	refusals int
}

// refuse starts (on) or stops refusing to void the hold ref.
func (p *voidRefuser) refuse(ref string, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refusing == nil {
		p.refusing = map[string]bool{}
	}
	p.refusing[ref] = on
}

// refused is how many voids it has refused.
func (p *voidRefuser) refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusals
}

func (p *voidRefuser) Void(ctx context.Context, req paylink.OpRequest) (paylink.OpResult, error) {
	p.mu.Lock()
	refuse := p.refusing[req.Reference]
	if refuse {
		p.refusals++
	}
	p.mu.Unlock()
	if refuse {
		return paylink.OpResult{}, errors.New("acquirer: void refused (authorisation not found)")
	}
	return p.Sandbox.Void(ctx, req)
}

// TestPreAuthExpiryGoesOnPastAHoldItCannotRelease: the oldest expired
// hold, which the processor will not void, is left PRE_AUTHORISED and
// the job still releases the younger ones in the same run, more than a
// batch of them; later runs try the refused one again and release it
// once the processor does.
func TestPreAuthExpiryGoesOnPastAHoldItCannotRelease(t *testing.T) {
	var proc *voidRefuser
	opts := func() apitest.Options {
		proc = &voidRefuser{}
		return apitest.Options{Processor: proc}
	}
	enginesWith(t, opts, func(t *testing.T, r *rig) {
		stuck := r.pay("4111111111111111", 5000, true, paylink.StatusPreAuthorised).Reference
		proc.refuse(stuck, true)
		r.env.Clock.Advance(time.Second)
		const younger = paylink.ExpiryBatch + 3
		var others []string
		for range younger {
			others = append(others, r.pay("4111111111111111", 1000, true, paylink.StatusPreAuthorised).Reference)
		}
		r.env.Clock.Advance(paylink.DefaultPreAuthExpiry + time.Minute)
		if n, err := r.svc.ExpirePreAuths(ctx); err != nil || n != younger {
			t.Fatalf("first run: released %d, %v; want the %d younger holds and no error", n, err, younger)
		}
		for _, ref := range others {
			if got := r.status(ref); got != paylink.StatusPreAuthorisedReversed {
				t.Fatalf("younger hold %s: got %s, want %s", ref, got, paylink.StatusPreAuthorisedReversed)
			}
		}
		if got := r.status(stuck); got != paylink.StatusPreAuthorised {
			t.Errorf("refused hold: got %s, want it left %s", got, paylink.StatusPreAuthorised)
		}
		if got := proc.refused(); got != 1 {
			t.Errorf("first run asked to void the refused hold %d times, want 1", got)
		}
		r.env.Clock.Advance(time.Minute)
		if n, err := r.svc.ExpirePreAuths(ctx); err != nil || n != 0 {
			t.Errorf("second run, still refused: released %d, %v; want 0", n, err)
		}
		if got := proc.refused(); got != 2 {
			t.Errorf("after the second run: asked to void the refused hold %d times, want 2 (tried again)", got)
		}
		proc.refuse(stuck, false)
		if n, err := r.svc.ExpirePreAuths(ctx); err != nil || n != 1 {
			t.Errorf("run once the processor voids it: released %d, %v; want 1", n, err)
		}
		if got := r.status(stuck); got != paylink.StatusPreAuthorisedReversed {
			t.Errorf("refused hold once voided: got %s, want %s", got, paylink.StatusPreAuthorisedReversed)
		}
	})
}

// TestLinkRules: a link is paid once, a cancelled or expired link takes
// no payment, and a paid link cannot be cancelled.
func TestLinkRules(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		newLink := func(t *testing.T, expires time.Time) (*paylink.PaymentLink, *paylink.LinkSession) {
			t.Helper()
			l, urls, err := r.svc.CreateLink(ctx, r.m.Merchant, paylink.NewLink{Amount: 4950, Currency: "AUD",
				MerchantReference: "ORDER-1", ExpiresAt: expires})
			if err != nil {
				t.Fatal(err)
			}
			ls, err := r.svc.OpenLink(ctx, urls.Page[strings.LastIndex(urls.Page, "/")+1:])
			if err != nil {
				t.Fatal(err)
			}
			return l, ls
		}
		payLink := func(ls *paylink.LinkSession, pan string) (*paylink.Transaction, error) {
			return r.svc.PayLink(ctx, ls, paylink.LinkPayment{PaymentType: paylink.PaymentTypeCard,
				Customer: paylink.Customer{IPAddress: "192.0.2.10"},
				Card:     &paylink.CardDetails{Number: pan, ExpiryMonth: 12, ExpiryYear: r.env.Clock.Now().Year() + 2, CVC: "123"}})
		}
		t.Run("a link's money errors name amount and currency", func(t *testing.T) {
			_, _, err := r.svc.CreateLink(ctx, r.m.Merchant, paylink.NewLink{Amount: 0, Currency: "XXX", MerchantReference: "ORDER-0"})
			var e *paylink.Error
			if !errors.As(err, &e) || e.Fields["amount"] == "" || e.Fields["currency"] == "" {
				t.Errorf("got %v, want fields amount and currency", err)
			}
		})
		t.Run("a decline leaves the link payable, an approval pays it once", func(t *testing.T) {
			l, ls := newLink(t, time.Time{})
			if tr, err := payLink(ls, "4000000000000002"); err != nil || tr.Status != paylink.StatusDeclined {
				t.Fatalf("got %v, %v, want DECLINED", tr, err)
			}
			if tr, err := payLink(ls, "4111111111111111"); err != nil || tr.Status != paylink.StatusApproved {
				t.Fatalf("got %v, %v, want APPROVED", tr, err)
			}
			_, err := payLink(ls, "4111111111111111")
			wantCode(t, err, paylink.CodeLinkPaid)
			_, _, err = r.svc.CancelLink(ctx, r.m.Merchant, l.ID)
			wantCode(t, err, paylink.CodeLinkPaid)
		})
		t.Run("cancelled", func(t *testing.T) {
			l, ls := newLink(t, time.Time{})
			if _, _, err := r.svc.CancelLink(ctx, r.m.Merchant, l.ID); err != nil {
				t.Fatal(err)
			}
			_, err := payLink(ls, "4111111111111111")
			wantCode(t, err, paylink.CodeLinkCancelled)
		})
		t.Run("expired", func(t *testing.T) {
			_, ls := newLink(t, r.env.Clock.Now().Add(time.Hour))
			r.env.Clock.Advance(time.Hour)
			_, err := payLink(ls, "4111111111111111")
			wantCode(t, err, paylink.CodeLinkExpired)
		})
		t.Run("attempt limit", func(t *testing.T) {
			_, ls := newLink(t, time.Time{})
			for range paylink.LinkAttemptLimit {
				if _, err := payLink(ls, "4000000000000002"); err != nil {
					t.Fatal(err)
				}
			}
			_, err := payLink(ls, "4111111111111111")
			wantCode(t, err, paylink.CodeRateLimited)
			r.env.Clock.Advance(paylink.LinkAttemptWindow)
			if tr, err := payLink(ls, "4111111111111111"); err != nil || tr.Status != paylink.StatusApproved {
				t.Errorf("after the window: got %v, %v, want APPROVED", tr, err)
			}
		})
	})
}

// TestCardTokenUse: a single-use card token pays once, a multi-use one
// until it is invalidated. The answer to another merchant's token is the
// card-token error contract, tested in internal/api/cards_test.go (and
// being unified across calls separately).
func TestCardTokenUse(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		tokenize := func(t *testing.T, multiUse bool) string {
			t.Helper()
			c, err := r.svc.TokenizeCard(ctx, r.m.Merchant, paylink.TokenizeRequest{CompanyToken: r.m.Creds.CompanyToken,
				Card:     &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: r.env.Clock.Now().Year() + 2},
				MultiUse: multiUse})
			if err != nil {
				t.Fatal(err)
			}
			return c.Token
		}
		payWith := func(m *apitest.Merchant, cardToken string) error {
			req := r.purchaseRequest("", 1000, false)
			req.Card, req.CardToken = nil, cardToken
			tr, err := r.svc.Purchase(ctx, m.Merchant, req)
			if err == nil && tr.Status != paylink.StatusApproved {
				t.Errorf("got status %s, want APPROVED", tr.Status)
			}
			return err
		}
		t.Run("single use", func(t *testing.T) {
			tok := tokenize(t, false)
			wantCode(t, payWith(r.m, tok), "")
			wantCode(t, payWith(r.m, tok), paylink.CodeCardTokenUsed)
		})
		t.Run("multi use until invalidated", func(t *testing.T) {
			tok := tokenize(t, true)
			wantCode(t, payWith(r.m, tok), "")
			wantCode(t, payWith(r.m, tok), "")
			if _, err := r.svc.InvalidateCardToken(ctx, r.m.Merchant, r.m.Creds.CompanyToken, tok); err != nil {
				t.Fatal(err)
			}
			wantCode(t, payWith(r.m, tok), paylink.CodeCardTokenInvalid)
		})
	})
}
