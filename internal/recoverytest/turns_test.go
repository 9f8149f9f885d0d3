package recoverytest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// More UNKNOWN items than a run asks about, all older than one the
// processor can answer for: the runs go on through them in turn, so the
// newer item is asked about (and settled) on the second run instead of
// waiting behind the older ones for ever.
func TestRecoveryAsksAboutEveryUnknownItemInTurn(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		debitRef := clearedDebit(t, env, m, 100_000)
		env.Bank.SetSilent(true) // the older refunds' inquiries go unanswered
		for i := range paylink.RecoveryBatch {
			// A hosted page's Zip payment: nobody can be asked about it.
			stuckTransaction(t, env, m, fmt.Sprintf("pr_zip%03d", i), func(tr *paylink.Transaction) {
				tr.Status, tr.PaymentType = paylink.StatusUnknown, paylink.PaymentTypeZip
			})
			unknownRefund(t, env, m, debitRef, fmt.Sprintf("rf_bank%03d", i), 100)
		}
		env.Clock.Advance(time.Second)
		card := stuckTransaction(t, env, m, "pr_newer", func(tr *paylink.Transaction) {
			tr.Status, tr.ProcessedAt = paylink.StatusUnknown, time.Time{}
		})
		cardRefund := unknownRefund(t, env, m, approved(t, env, m, 1000, false), "rf_newer", 400)

		if n := recoverAfterThreshold(t, env); n != 0 {
			t.Errorf("first run: moved %d, want 0 (the %d oldest of each kind stay UNKNOWN)", n, paylink.RecoveryBatch)
		}
		wantStatus(t, env, m, card.Reference, paylink.StatusUnknown)
		if n := recoverAfterThreshold(t, env); n != 2 {
			t.Errorf("second run: moved %d, want 2 (the newer transaction and refund)", n)
		}
		wantStatus(t, env, m, card.Reference, paylink.StatusFailed)
		if got := refundStatus(t, env, m, cardRefund).Status; got != paylink.StatusFailed {
			t.Errorf("newer refund: got %s, want FAILED (the processor never received it)", got)
		}
		wantStatus(t, env, m, "pr_zip000", paylink.StatusUnknown)
		if n, err := env.Service.NeedsReview(ctx); err != nil || n != 2*paylink.RecoveryBatch {
			t.Errorf("NeedsReview: got %d, %v; want %d", n, err, 2*paylink.RecoveryBatch)
		}
	})
}

// unknownRefund stores an UNKNOWN refund of amount cents of the purchase
// ref, its amount reserved, as an unanswered recovery leaves it.
func unknownRefund(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref, refundRef string, amount int64) string {
	t.Helper()
	r := &paylink.Refund{Reference: refundRef, MerchantID: m.ID, TransactionReference: ref,
		Status: paylink.StatusUnknown, Currency: "AUD", Amount: amount, CreatedAt: env.Clock.Now()}
	store(t, env, func(tx paylink.Tx) error {
		if err := tx.AddRefunded(ref, amount, env.Clock.Now()); err != nil {
			return err
		}
		return tx.CreateRefund(r)
	})
	return refundRef
}

// An UNKNOWN item whose inquiry goes unanswered stops the run's other
// inquiries of that bank; the next run starts after it, so the items
// behind it are asked about then, and it waits for the run after.
func TestRecoveryGoesOnAfterAnUnansweredInquiry(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		debitRef := clearedDebit(t, env, m, 10_000)
		var refs []string
		for i := range 3 {
			refs = append(refs, unknownRefund(t, env, m, debitRef, fmt.Sprintf("rf_turn%d", i), 100))
			env.Clock.Advance(time.Second)
		}
		env.Bank.SetSilent(true)
		if n := recoverAfterThreshold(t, env); n != 0 {
			t.Errorf("bank silent: moved %d, want 0", n)
		}
		env.Bank.SetSilent(false)
		if n := recoverAfterThreshold(t, env); n != 2 {
			t.Errorf("bank back: moved %d, want the 2 refunds after the one asked last run", n)
		}
		for i, want := range []paylink.Status{paylink.StatusUnknown, paylink.StatusFailed, paylink.StatusFailed} {
			if got := refundStatus(t, env, m, refs[i]).Status; got != want {
				t.Errorf("refund %d: got %s, want %s", i, got, want)
			}
		}
		if n := recoverAfterThreshold(t, env); n != 1 {
			t.Errorf("next run: moved %d, want the first refund's turn", n)
		}
		if got := refundStatus(t, env, m, refs[0]).Status; got != paylink.StatusFailed {
			t.Errorf("refund 0 on its turn: got %s, want FAILED", got)
		}
	})
}
