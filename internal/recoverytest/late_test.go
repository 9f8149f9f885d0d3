package recoverytest_test

import (
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// slow is how long the slow sandbox takes to answer an operation: well
// under the processor deadline, long enough for recovery to run while
// the call is in flight. (Whichever finishes first, the assertions hold:
// it only decides which path the test exercises.)
const slow = time.Second

// outcome is the result of an operation run in the background.
type outcome[T any] struct {
	v   T
	err error
}

// inBackground runs fn in a goroutine and returns its result channel.
func inBackground[T any](fn func() (T, error)) <-chan outcome[T] {
	done := make(chan outcome[T], 1)
	go func() {
		v, err := fn()
		done <- outcome[T]{v, err}
	}()
	return done
}

// The example: a 10.00 refund of a 10.00 purchase is in flight at
// a slow acquirer when recovery runs. Recovery must not release its
// reservation, so a second 10.00 refund never reaches the acquirer, and
// the late answer of the first is recorded without an error.
func TestRecoveryDuringASlowRefundNeverRefundsTwice(t *testing.T) {
	engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		ref := approved(t, env, m, 1000, false)
		env.Sandbox.SetDelay(slow)
		req := refund(t, env, m, 1000)
		first := inBackground(func() (*paylink.Refund, error) {
			r, _, err := env.Service.Refund(ctx, m.Merchant, ref, req)
			return r, err
		})
		received(t, env.Sandbox.Received, paylink.OpRefund, 1)
		recoverAfterThreshold(t, env)
		_, _, err := env.Service.Refund(ctx, m.Merchant, ref, refund(t, env, m, 1000))
		wantClientError(t, "second refund of the whole amount", err)
		got := <-first
		if got.err != nil || got.v.Status != paylink.StatusApproved {
			t.Fatalf("first refund: got %+v, %v; want APPROVED and no error", got.v, got.err)
		}
		if n := env.Sandbox.Received(paylink.OpRefund); n != 1 {
			t.Errorf("refunds sent to the acquirer: got %d, want 1", n)
		}
		if r := refundStatus(t, env, m, got.v.Reference); r.Status != paylink.StatusApproved {
			t.Errorf("stored refund: got %s, want APPROVED", r.Status)
		}
		if tr := status(t, env, m, ref); tr.Refunded != 1000 {
			t.Errorf("refunded total: got %d, want 1000", tr.Refunded)
		}
	})
}

// A purchase approved by a slow acquirer while recovery runs is recorded
// APPROVED once (one webhook), and its late answer is no error.
func TestRecoveryDuringASlowPurchaseRecordsTheApproval(t *testing.T) {
	engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		env.Sandbox.SetDelay(slow)
		req := purchase(t, env, m, "4111111111111111", 1000, false)
		first := inBackground(func() (*paylink.Transaction, error) { return env.Service.Purchase(ctx, m.Merchant, req) })
		received(t, env.Sandbox.Received, paylink.OpAuthorize, 1)
		recoverAfterThreshold(t, env)
		got := <-first
		if got.err != nil || got.v.Status != paylink.StatusApproved {
			t.Fatalf("purchase: got %+v, %v; want APPROVED and no error", got.v, got.err)
		}
		if tr := status(t, env, m, got.v.Reference); tr.Status != paylink.StatusApproved {
			t.Errorf("stored purchase: got %s, want APPROVED", tr.Status)
		}
		if got, want := webhooks(t, env, m, got.v.Reference), map[paylink.Status]int{paylink.StatusApproved: 1}; len(got) != 1 || got[paylink.StatusApproved] != 1 {
			t.Errorf("webhooks: got %v, want %v", got, want)
		}
	})
}

// A capture in flight at a slow acquirer while recovery runs: the hold is
// not put back, so a second capture never reaches the acquirer.
func TestRecoveryDuringASlowCaptureNeverCapturesTwice(t *testing.T) {
	engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		ref := approved(t, env, m, 1000, true)
		env.Sandbox.SetDelay(slow)
		req := capture(t, env, m, 800)
		first := inBackground(func() (*paylink.Transaction, error) { return env.Service.Capture(ctx, m.Merchant, ref, req) })
		received(t, env.Sandbox.Received, paylink.OpCapture, 1)
		recoverAfterThreshold(t, env)
		_, err := env.Service.Capture(ctx, m.Merchant, ref, capture(t, env, m, 1000))
		wantClientError(t, "second capture", err)
		got := <-first
		if got.err != nil || got.v.Status != paylink.StatusApproved {
			t.Fatalf("capture: got %+v, %v; want APPROVED and no error", got.v, got.err)
		}
		if n := env.Sandbox.Received(paylink.OpCapture); n != 1 {
			t.Errorf("captures sent to the acquirer: got %d, want 1", n)
		}
		if tr := status(t, env, m, ref); tr.Status != paylink.StatusApproved || tr.Total != 800 {
			t.Errorf("stored capture: got %s total %d, want APPROVED 800", tr.Status, tr.Total)
		}
	})
}

// A debit lodged with a slow bank while recovery runs is recorded PENDING
// (lodged), not FAILED, and its late answer is no error.
func TestRecoveryDuringASlowDebitRecordsTheSubmission(t *testing.T) {
	engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		env.Bank.SetDelay(slow)
		req := debit(t, env, m, 1000)
		first := inBackground(func() (*paylink.Transaction, error) { return env.Service.DirectDebit(ctx, m.Merchant, req) })
		received(t, env.Bank.Received, paylink.OpDebit, 1)
		recoverAfterThreshold(t, env)
		got := <-first
		if got.err != nil || got.v.Status != paylink.StatusPending {
			t.Fatalf("debit: got %+v, %v; want PENDING and no error", got.v, got.err)
		}
		if tr := status(t, env, m, got.v.Reference); tr.Status != paylink.StatusPending {
			t.Errorf("stored debit: got %s, want PENDING", tr.Status)
		}
	})
}
