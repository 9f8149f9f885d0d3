package checkout_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
)

// Service-level tests of a 3-D Secure attempt's lifetime and of the link
// it pays (issue 10), on SQLite and PostgreSQL with a controlled clock.

// engines runs a test on a fresh SQLite file and a fresh PostgreSQL
// database.
func engines(t *testing.T, test func(t *testing.T, env *apitest.Env)) {
	enginesWith(t, func() apitest.Options { return apitest.Options{} }, test)
}

// enginesWith is engines with the options opts returns for each engine.
func enginesWith(t *testing.T, opts func() apitest.Options, test func(t *testing.T, env *apitest.Env)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, apitest.Start(t, opts()))
	})
	t.Run("postgres", func(t *testing.T) {
		o := opts()
		o.DSN = pg.Database(t)
		test(t, apitest.Start(t, o))
	})
}

// openLink opens a link through the Service from its page address.
func openLink(t *testing.T, env *apitest.Env, pageURL string) *paylink.LinkSession {
	t.Helper()
	ls, err := env.Service.OpenLink(context.Background(), pageURL[strings.LastIndex(pageURL, "/")+1:])
	if err != nil {
		t.Fatalf("open link: %v", err)
	}
	return ls
}

// payLinkWith pays a link at the Service, as the hosted page does.
func payLinkWith(t *testing.T, env *apitest.Env, pageURL, number string) (*paylink.Transaction, error) {
	t.Helper()
	card := &paylink.CardDetails{Number: number, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 3, CVC: "123"}
	return env.Service.PayLink(context.Background(), openLink(t, env, pageURL), paylink.LinkPayment{
		PaymentType: paylink.PaymentTypeCard, Customer: paylink.Customer{IPAddress: "203.0.113.7"},
		Card: card, ReturnURL: pageURL + "/3ds",
	})
}

// answerChallenge answers a purchase's challenge as the customer does on
// the issuer's page, and does not return to the merchant.
func answerChallenge(t *testing.T, env *apitest.Env, tr *paylink.Transaction) {
	t.Helper()
	if tr.Status != paylink.StatusRequiresAuthentication {
		t.Fatalf("got %s, want REQUIRES_AUTHENTICATION", tr.Status)
	}
	capability := tr.AuthenticationURL[strings.Index(tr.AuthenticationURL, paylink.ChallengePath)+len(paylink.ChallengePath):]
	if _, err := env.Service.CompleteChallenge(context.Background(), capability, true); err != nil {
		t.Fatalf("answer challenge: %v", err)
	}
}

// answeredLinkAttempt starts a 3-D Secure attempt on a new link and
// answers its challenge; the customer never comes back.
func answeredLinkAttempt(t *testing.T, env *apitest.Env, m *apitest.Merchant) (pageURL, linkID string, first *paylink.Transaction) {
	t.Helper()
	r := link(t, env, m, "10.50", nil)
	first, err := payLinkWith(t, env, r.Str("url"), card3DS)
	if err != nil {
		t.Fatalf("first attempt: %v", err)
	}
	answerChallenge(t, env, first)
	return r.Str("url"), r.Str("id"), first
}

// wantCode checks that err is a paylink error with code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var e *paylink.Error
	if !errors.As(err, &e) || e.Code != code || e.Kind != paylink.KindConflict {
		t.Errorf("%s: got error %v, want a conflict %s", what, err, code)
	}
}

// wantNotCharged checks that a late attempt was never authorised: FAILED,
// no authorisation code.
func wantNotCharged(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) {
	t.Helper()
	tr := transaction(t, env, m, ref)
	if tr.Status != paylink.StatusFailed || tr.Details.AuthCode != "" {
		t.Errorf("late attempt: got %s with auth code %q, want FAILED and never authorised", tr.Status, tr.Details.AuthCode)
	}
}

// TestLateReturnAfterAnotherAttemptPaid: the first customer answers the
// challenge and never returns; once the attempt is over a second one pays
// the link; the first return then charges nothing.
func TestLateReturnAfterAnotherAttemptPaid(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		pageURL, id, first := answeredLinkAttempt(t, env, m)
		_, err := payLinkWith(t, env, pageURL, cardOK)
		wantCode(t, "second attempt while the first holds the link", err, paylink.CodeLinkInProgress)
		env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
		second, err := payLinkWith(t, env, pageURL, cardOK)
		if err != nil || second.Status != paylink.StatusApproved {
			t.Fatalf("second attempt after the first's lifetime: got %+v, %v; want APPROVED", second, err)
		}
		_, err = env.Service.CompleteThreeDS(context.Background(), m.Merchant, first.Reference)
		wantCode(t, "late return", err, paylink.CodeLinkPaid)
		wantNotCharged(t, env, m, first.Reference)
		if st := linkState(t, env, m, id); st.Str("status") != "paid" || st.Str("transaction_reference") != second.Reference {
			t.Errorf("link: got %s, want paid by %s", st.Raw, second.Reference)
		}
	})
}

// TestLateReturnAfterCancel: the merchant cancels the link once the
// attempt is over; the late return neither charges nor reopens the link.
func TestLateReturnAfterCancel(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		_, id, first := answeredLinkAttempt(t, env, m)
		if _, _, err := env.Service.CancelLink(context.Background(), m.Merchant, id); err == nil {
			t.Fatal("cancel while the attempt holds the link: got nil, want refused")
		}
		env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
		if _, _, err := env.Service.CancelLink(context.Background(), m.Merchant, id); err != nil {
			t.Fatalf("cancel after the attempt's lifetime: %v", err)
		}
		_, err := env.Service.CompleteThreeDS(context.Background(), m.Merchant, first.Reference)
		wantCode(t, "late return", err, paylink.CodeLinkCancelled)
		wantNotCharged(t, env, m, first.Reference)
		if st := linkState(t, env, m, id); st.Str("status") != "cancelled" {
			t.Errorf("link: got %s, want still cancelled", st.Raw)
		}
	})
}

// TestLateReturnAfterTheLifetime: nothing else happened to the link, but
// the attempt outlived its lifetime: it fails, and the link is free.
func TestLateReturnAfterTheLifetime(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		pageURL, id, first := answeredLinkAttempt(t, env, m)
		env.Clock.Advance(paylink.DefaultAuthenticationTimeout + time.Second)
		_, err := env.Service.CompleteThreeDS(context.Background(), m.Merchant, first.Reference)
		wantCode(t, "late return", err, paylink.CodeAuthenticationExpired)
		wantNotCharged(t, env, m, first.Reference)
		if st := linkState(t, env, m, id); st.Str("status") != "unpaid" {
			t.Errorf("link: got %s, want unpaid", st.Raw)
		}
		if err := env.Service.CheckLinkPayable(context.Background(), openLink(t, env, pageURL), ""); err != nil {
			t.Errorf("link after the failed attempt: got %v, want free for another attempt", err)
		}
		_, err = env.Service.CompleteThreeDS(context.Background(), m.Merchant, first.Reference)
		wantCode(t, "second late return", err, paylink.CodeAuthenticationComplete)
	})
}

// TestExpiryJobEndsAnsweredAttempts: the challenge expiry job also ends
// an answered attempt whose customer never came back, once its lifetime
// is over; it then frees the link and can never be authorised.
func TestExpiryJobEndsAnsweredAttempts(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		pageURL, _, first := answeredLinkAttempt(t, env, m)
		ctx := context.Background()
		env.Clock.Advance(paylink.ChallengeTTL + time.Second)
		if n, err := env.Service.ExpireChallenges(ctx); err != nil || n != 0 {
			t.Errorf("within the lifetime: ended %d, %v; want 0", n, err)
		}
		env.Clock.Advance(paylink.DefaultAuthenticationTimeout - paylink.ChallengeTTL)
		if n, err := env.Service.ExpireChallenges(ctx); err != nil || n != 1 {
			t.Fatalf("after the lifetime: ended %d, %v; want 1", n, err)
		}
		wantNotCharged(t, env, m, first.Reference)
		_, err := env.Service.CompleteThreeDS(ctx, m.Merchant, first.Reference)
		wantCode(t, "return after the job", err, paylink.CodeAuthenticationComplete)
		if err := env.Service.CheckLinkPayable(context.Background(), openLink(t, env, pageURL), ""); err != nil {
			t.Errorf("link after the job: got %v, want free for another attempt", err)
		}
	})
}

// TestThreeDSRedirectAfterTheLifetime: an API purchase with a multi-use
// card token cannot be completed by 3dsredirect after the attempt's
// lifetime; within it, it can.
func TestThreeDSRedirectAfterTheLifetime(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		ctx := context.Background()
		card, err := env.Service.TokenizeCard(ctx, m.Merchant, paylink.TokenizeRequest{CompanyToken: m.Creds.CompanyToken,
			MultiUse: true, Card: &paylink.CardDetails{Number: card3DS, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 3}})
		if err != nil {
			t.Fatalf("tokenize: %v", err)
		}
		purchase := func() *paylink.Transaction {
			tr, err := env.Service.Purchase(ctx, m.Merchant, paylink.PurchaseRequest{
				CompanyToken: m.Creds.CompanyToken, TransactionToken: env.TransactionToken(m), CardToken: card.Token,
				Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}, Amount: 1234, Currency: "AUD",
				ThreeDS: true, RedirectURL: "https://shop.example.com/3ds/return"})
			if err != nil {
				t.Fatalf("purchase: %v", err)
			}
			answerChallenge(t, env, tr)
			return tr
		}
		tests := []struct {
			name    string
			wait    time.Duration
			want    paylink.Status
			wantErr string
		}{
			{"within the lifetime", paylink.DefaultAuthenticationTimeout - time.Second, paylink.StatusApproved, ""},
			{"after the lifetime", paylink.DefaultAuthenticationTimeout, paylink.StatusFailed, paylink.CodeAuthenticationExpired},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tr := purchase()
				env.Clock.Advance(tt.wait)
				_, err := env.Service.CompleteThreeDS(ctx, m.Merchant, tr.Reference)
				if tt.wantErr != "" {
					wantCode(t, "3dsredirect", err, tt.wantErr)
				} else if err != nil {
					t.Errorf("3dsredirect: got %v, want success", err)
				}
				if got := transaction(t, env, m, tr.Reference); got.Status != tt.want {
					t.Errorf("got %s, want %s", got.Status, tt.want)
				}
			})
		}
	})
}

// lateProcessor is the sandbox acquirer, except that the authorisation
// completing a 3-D Secure attempt runs meanwhile first: an acquirer that
// answers after the link's claim lapsed.
type lateProcessor struct {
	processor.Sandbox
	meanwhile func()
}

func (p *lateProcessor) Authorize(ctx context.Context, req paylink.AuthRequest) (paylink.AuthResult, error) {
	if req.Authenticated != nil && p.meanwhile != nil {
		run := p.meanwhile
		p.meanwhile = nil
		run()
	}
	return p.Sandbox.Authorize(ctx, req)
}

// TestApprovalOnClosedLinkIsNeverSilent: an authorisation that outlives
// its link's claim (an acquirer answering after the authentication
// timeout) still holds the link: meanwhile a second attempt is told a
// payment is in progress, and so is a cancel (checkNotHeld). Should the link
// close all the same (here by a hand edit of its row), the late approval
// is recorded (money moved), the link keeps its state, and the mismatch
// is logged as an error for someone to refund.
func TestApprovalOnClosedLinkIsNeverSilent(t *testing.T) {
	var proc *lateProcessor
	opts := func() apitest.Options {
		proc = &lateProcessor{}
		return apitest.Options{Processor: proc}
	}
	enginesWith(t, opts, func(t *testing.T, env *apitest.Env) {
		m := env.Onboard()
		pageURL, id, first := answeredLinkAttempt(t, env, m)
		proc.meanwhile = func() {
			env.Clock.Advance(paylink.DefaultAuthenticationTimeout)
			_, err := payLinkWith(t, env, pageURL, cardOK)
			wantCode(t, "second attempt while the first is authorised", err, paylink.CodeLinkInProgress)
			if c := env.Post("/v5/payment-links/"+id+"/cancel", m, nil); c.Str("response_code") != paylink.CodeLinkInProgress {
				t.Errorf("cancel while the first attempt is authorised: got %d %s, want payment_link_in_progress", c.Status, c.Raw)
			}
			closeLinkByHand(t, env, m, id)
		}
		late, err := env.Service.CompleteThreeDS(context.Background(), m.Merchant, first.Reference)
		if err != nil || late.Status != paylink.StatusApproved {
			t.Fatalf("late approval: got %+v, %v; want it recorded APPROVED", late, err)
		}
		if st := linkState(t, env, m, id); st.Str("status") != "cancelled" {
			t.Errorf("link: got %s, want it left cancelled", st.Raw)
		}
		if logs := env.LogText(); !strings.Contains(logs, "payment approved on a payment link that no longer accepts payments") ||
			!strings.Contains(logs, first.Reference) {
			t.Errorf("logs lack the error about %s: %s", first.Reference, logs)
		}
	})
}

// closeLinkByHand cancels link id in the database, past every rule of
// the Service, as a hand-written statement would.
func closeLinkByHand(t *testing.T, env *apitest.Env, m *apitest.Merchant, id string) {
	t.Helper()
	err := env.Store.Update(context.Background(), func(tx paylink.Tx) error {
		l, err := tx.PaymentLink(m.ID, id)
		if err != nil {
			return err
		}
		l.Status, l.CancelledAt = paylink.LinkCancelled, env.Clock.Now()
		return tx.UpdatePaymentLink(l)
	})
	if err != nil {
		t.Fatalf("close link %s by hand: %v", id, err)
	}
}

// TestLateReturnRaces: reloads of the return address, a second customer
// and the merchant's cancel race for a link whose attempt is about to
// end (just inside its lifetime, and at its end): whatever wins, the link
// is paid at most once, by the transaction it names, and a cancelled link
// took no payment. Run it with -race.
func TestLateReturnRaces(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		for _, wait := range []time.Duration{paylink.DefaultAuthenticationTimeout - time.Second, paylink.DefaultAuthenticationTimeout} {
			m := env.Onboard()
			pageURL, id, first := answeredLinkAttempt(t, env, m)
			ls := openLink(t, env, pageURL)
			env.Clock.Advance(wait)
			ctx := context.Background()
			refs := make(chan string, 4)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					if tr, err := env.Service.CompleteThreeDS(ctx, m.Merchant, first.Reference); err == nil {
						refs <- tr.Reference
					}
				})
			}
			wg.Go(func() {
				card := &paylink.CardDetails{Number: cardOK, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 3, CVC: "123"}
				if tr, err := env.Service.PayLink(ctx, ls, paylink.LinkPayment{PaymentType: paylink.PaymentTypeCard,
					Customer: paylink.Customer{IPAddress: "203.0.113.9"}, Card: card}); err == nil {
					refs <- tr.Reference
				}
			})
			wg.Go(func() { env.Service.CancelLink(ctx, m.Merchant, id) })
			wg.Wait()
			close(refs)
			var approved []string
			for ref := range refs {
				if transaction(t, env, m, ref).Status == paylink.StatusApproved {
					approved = append(approved, ref)
				}
			}
			st := linkState(t, env, m, id)
			switch st.Str("status") {
			case "paid":
				if len(approved) != 1 || st.Str("transaction_reference") != approved[0] {
					t.Errorf("after %v: link %s with approvals %v, want paid by its one approval", wait, st.Raw, approved)
				}
			case "cancelled", "unpaid":
				if len(approved) != 0 {
					t.Errorf("after %v: link %s with approvals %v, want none", wait, st.Raw, approved)
				}
			default:
				t.Errorf("after %v: link %s", wait, st.Raw)
			}
		}
	})
}

// TestPaymentRacingACancelIsToldWhichWon: a customer pays a link while
// the merchant cancels it. Exactly one wins, and the other is told which
// (the link was paid, or it was cancelled), never that a payment is in
// progress: on PostgreSQL the loser of the link's compare-and-set reads
// the link again.
func TestPaymentRacingACancelIsToldWhichWon(t *testing.T) {
	engines(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		m := env.Onboard()
		for round := range 10 {
			r := link(t, env, m, "10.50", nil)
			ls := openLink(t, env, r.Str("url"))
			card := &paylink.CardDetails{Number: cardOK, ExpiryMonth: 12, ExpiryYear: env.Clock.Now().Year() + 3, CVC: "123"}
			var payErr, cancelErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, payErr = env.Service.PayLink(ctx, ls, paylink.LinkPayment{PaymentType: paylink.PaymentTypeCard,
					Customer: paylink.Customer{IPAddress: "203.0.113.7"}, Card: card})
			}()
			go func() {
				defer wg.Done()
				_, _, cancelErr = env.Service.CancelLink(ctx, ls.Merchant, r.Str("id"))
			}()
			wg.Wait()
			paid := payErr == nil && cancelErr != nil && paylink.AsError(cancelErr).Code == paylink.CodeLinkPaid
			cancelled := cancelErr == nil && payErr != nil && paylink.AsError(payErr).Code == paylink.CodeLinkCancelled
			if !paid && !cancelled {
				t.Errorf("round %d: payment got %v, cancel got %v; want one to win and the other told so", round, payErr, cancelErr)
			}
		}
	})
}
