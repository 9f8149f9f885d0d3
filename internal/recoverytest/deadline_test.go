package recoverytest_test

import (
	"maps"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// deadline is the processor timeout of these tests: the slow sandbox
// answers only after an hour, the silent one never.
const deadline = 100 * time.Millisecond

// operation is one kind of money movement, run against a processor that
// the test slows down.
type operation struct {
	name string
	// run prepares what the operation needs, calls hinder (which makes
	// the acquirer or bank slow or silent) and runs the operation. It
	// returns the reference of the new item, its status as the caller
	// got it, and the parent transaction's reference (a refund's).
	run func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), number string) (ref string, got paylink.Status, parent string, err error)
	// bank: the operation goes to the bank, not the card acquirer.
	bank bool
	// refund: the item is a refund (its parent keeps the reservation).
	refund bool
	// approved is the item's status once the processor's approval is
	// recorded.
	approved paylink.Status
	// earlier are the webhooks the item had before the operation (a
	// hold's).
	earlier map[paylink.Status]int
}

// operations are the four kinds of the issue, and a debit's refund.
var operations = []operation{
	{name: "purchase", approved: paylink.StatusApproved,
		run: func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), number string) (string, paylink.Status, string, error) {
			req := purchase(t, env, m, number, 1000, false)
			hinder()
			tr, err := env.Service.Purchase(ctx, m.Merchant, req)
			if err != nil {
				return "", "", "", err
			}
			return tr.Reference, tr.Status, "", nil
		}},
	{name: "capture", approved: paylink.StatusApproved, earlier: map[paylink.Status]int{paylink.StatusPreAuthorised: 1},
		run: func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), _ string) (string, paylink.Status, string, error) {
			ref := approved(t, env, m, 1000, true)
			req := capture(t, env, m, 800)
			hinder()
			tr, err := env.Service.Capture(ctx, m.Merchant, ref, req)
			if err != nil {
				return "", "", "", err
			}
			return tr.Reference, tr.Status, "", nil
		}},
	{name: "refund", refund: true, approved: paylink.StatusApproved,
		run: func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), _ string) (string, paylink.Status, string, error) {
			ref := approved(t, env, m, 1000, false)
			req := refund(t, env, m, 400)
			hinder()
			r, _, err := env.Service.Refund(ctx, m.Merchant, ref, req)
			if err != nil {
				return "", "", "", err
			}
			return r.Reference, r.Status, ref, nil
		}},
	{name: "direct debit", bank: true, approved: paylink.StatusPending,
		run: func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), _ string) (string, paylink.Status, string, error) {
			req := debit(t, env, m, 1000)
			hinder()
			tr, err := env.Service.DirectDebit(ctx, m.Merchant, req)
			if err != nil {
				return "", "", "", err
			}
			return tr.Reference, tr.Status, "", nil
		}},
	{name: "direct debit refund", bank: true, refund: true, approved: paylink.StatusApproved,
		run: func(t *testing.T, env *apitest.Env, m *apitest.Merchant, hinder func(), _ string) (string, paylink.Status, string, error) {
			ref := clearedDebit(t, env, m, 1000)
			req := refund(t, env, m, 400)
			hinder()
			r, _, err := env.Service.RefundDirectDebit(ctx, m.Merchant, ref, req)
			if err != nil {
				return "", "", "", err
			}
			return r.Reference, r.Status, ref, nil
		}},
}

// clearedDebit is a direct debit of amount cents that has cleared.
func clearedDebit(t *testing.T, env *apitest.Env, m *apitest.Merchant, amount int64) string {
	t.Helper()
	tr, err := env.Service.DirectDebit(ctx, m.Merchant, debit(t, env, m, amount))
	if err != nil {
		t.Fatalf("direct debit: %v", err)
	}
	env.Clock.Advance(env.Service.Config().DirectDebitClearing + time.Second)
	if n, err := env.Service.ClearDirectDebits(ctx); err != nil || n != 1 {
		t.Fatalf("clearing: %d, %v", n, err)
	}
	return tr.Reference
}

// stored is the item's stored status.
func (op operation) stored(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) paylink.Status {
	t.Helper()
	if op.refund {
		return refundStatus(t, env, m, ref).Status
	}
	return status(t, env, m, ref).Status
}

// hinder returns the function that makes op's processor slow or silent.
func (op operation) hinder(env *apitest.Env, silent bool) func() {
	type hinderable interface {
		SetDelay(time.Duration)
		SetSilent(bool)
	}
	var p hinderable = env.Sandbox
	if op.bank {
		p = env.Bank
	}
	if silent {
		return func() { p.SetSilent(true) }
	}
	return func() { p.SetDelay(time.Hour) }
}

// A call that outlasts its deadline (the acquirer did the operation but
// its answer is slow) is abandoned without an error: the item stays
// PROCESSING, shown PENDING, its money reserved, and no webhook claims
// anything. Recovery then asks the processor and records the approval
// exactly as the call would have.
func TestCallOutlastingItsDeadlineIsResolvedByInquiry(t *testing.T) {
	for _, op := range operations {
		t.Run(op.name, func(t *testing.T) {
			engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
				m := onboard(t, env)
				ref, got, parent, err := op.run(t, env, m, op.hinder(env, false), "4111111111111111")
				if err != nil || got != paylink.StatusProcessing || got.Public() != paylink.StatusPending {
					t.Fatalf("call past its deadline: got %s, %v; want PROCESSING (shown PENDING) and no error", got, err)
				}
				if s := op.stored(t, env, m, ref); s != paylink.StatusProcessing {
					t.Errorf("stored after the deadline: got %s, want PROCESSING", s)
				}
				wantReserved(t, env, m, op, parent, 400)
				op.wantNoNewWebhook(t, env, m, ref)
				if n := recoverAfterThreshold(t, env); n != 1 {
					t.Errorf("recovery moved %d items, want 1", n)
				}
				if s := op.stored(t, env, m, ref); s != op.approved {
					t.Errorf("after recovery: got %s, want %s", s, op.approved)
				}
				wantReserved(t, env, m, op, parent, 400)
			})
		})
	}
}

// A silent processor (it may have done the operation, and does not answer
// inquiries either) leaves the item UNKNOWN: counted by NeedsReview, no
// webhook, a refund's amount still reserved. When the processor answers
// again, the next recovery run records its answer.
func TestSilentProcessorLeavesTheItemForReview(t *testing.T) {
	for _, op := range operations {
		t.Run(op.name, func(t *testing.T) {
			engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
				m := onboard(t, env)
				ref, got, parent, err := op.run(t, env, m, op.hinder(env, true), "4111111111111111")
				if err != nil || got != paylink.StatusProcessing {
					t.Fatalf("call to a silent processor: got %s, %v; want PROCESSING and no error", got, err)
				}
				if n := recoverAfterThreshold(t, env); n != 1 {
					t.Errorf("recovery moved %d items, want 1", n)
				}
				if s := op.stored(t, env, m, ref); s != paylink.StatusUnknown {
					t.Errorf("after recovery with a silent processor: got %s, want UNKNOWN", s)
				}
				if n, err := env.Service.NeedsReview(ctx); err != nil || n != 1 {
					t.Errorf("NeedsReview: got %d, %v; want 1", n, err)
				}
				op.wantNoNewWebhook(t, env, m, ref)
				wantReserved(t, env, m, op, parent, 400)
				if n := recoverAfterThreshold(t, env); n != 0 {
					t.Errorf("recovery with the processor still silent moved %d items, want 0", n)
				}

				hinderable(env, op).SetSilent(false)
				if n := recoverAfterThreshold(t, env); n != 1 {
					t.Errorf("recovery with the processor back moved %d items, want 1", n)
				}
				if s := op.stored(t, env, m, ref); s != op.approved {
					t.Errorf("after the processor answered: got %s, want %s", s, op.approved)
				}
				if n, err := env.Service.NeedsReview(ctx); err != nil || n != 0 {
					t.Errorf("NeedsReview once resolved: got %d, %v; want 0", n, err)
				}
				wantReserved(t, env, m, op, parent, 400)
			})
		})
	}
}

// hinderable is op's processor, for switching silence off.
func hinderable(env *apitest.Env, op operation) interface{ SetSilent(bool) } {
	if op.bank {
		return env.Bank
	}
	return env.Sandbox
}

// wantReserved checks that a refund's parent still has amount refunded
// (reserved or paid); other operations have no reservation.
func wantReserved(t *testing.T, env *apitest.Env, m *apitest.Merchant, op operation, parent string, amount int64) {
	t.Helper()
	if !op.refund {
		return
	}
	if got := status(t, env, m, parent).Refunded; got != amount {
		t.Errorf("refunded (reserved) total of %s: got %d, want %d", parent, got, amount)
	}
}

// wantNoNewWebhook checks that the operation enqueued no webhook for the
// item (refunds have none).
func (op operation) wantNoNewWebhook(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string) {
	t.Helper()
	if got := webhooks(t, env, m, ref); !op.refund && !maps.Equal(got, op.earlier) {
		t.Errorf("webhooks while the outcome is not known: got %v, want %v", got, op.earlier)
	}
}

// With the processor silent, every stuck item of a run moves to UNKNOWN,
// those after the first unanswered inquiry without waiting for another.
func TestSilentProcessorMovesEveryStuckItemToReview(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		reqs := []paylink.PurchaseRequest{purchase(t, env, m, "4111111111111111", 1000, false), purchase(t, env, m, "5555555555554444", 2000, false)}
		env.Sandbox.SetSilent(true)
		var refs []string
		for _, req := range reqs {
			tr, err := env.Service.Purchase(ctx, m.Merchant, req)
			if err != nil {
				t.Fatalf("purchase: %v", err)
			}
			refs = append(refs, tr.Reference)
		}
		if n := recoverAfterThreshold(t, env); n != 2 {
			t.Errorf("recovery moved %d items, want 2", n)
		}
		for _, ref := range refs {
			wantStatus(t, env, m, ref, paylink.StatusUnknown)
		}
		if n, err := env.Service.NeedsReview(ctx); err != nil || n != 2 {
			t.Errorf("NeedsReview: got %d, %v; want 2", n, err)
		}
	})
}
