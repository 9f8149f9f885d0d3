package recoverytest_test

import (
	"errors"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// unknownItem runs op against a silent processor and recovery, leaving
// its item UNKNOWN; it returns the item's and its parent's references.
func unknownItem(t *testing.T, env *apitest.Env, m *apitest.Merchant, op operation) (ref, parent string) {
	t.Helper()
	ref, got, parent, err := op.run(t, env, m, op.hinder(env, true), "4111111111111111")
	if err != nil || got != paylink.StatusProcessing {
		t.Fatalf("call to a silent processor: got %s, %v; want PROCESSING", got, err)
	}
	recoverAfterThreshold(t, env)
	if s := op.stored(t, env, m, ref); s != paylink.StatusUnknown {
		t.Fatalf("after recovery with a silent processor: got %s, want UNKNOWN", s)
	}
	return ref, parent
}

// An operator's answer about an UNKNOWN item is recorded as the
// processor's answer to an inquiry would have been: the status, the
// ledger, a refund's reservation, the webhooks, the history and the audit
// log; the item leaves review, and recovery leaves it alone after.
func TestAnOperatorResolvesAnUnknownItem(t *testing.T) {
	notReceived := map[string]paylink.Status{"purchase": paylink.StatusFailed, "capture": paylink.StatusPreAuthorised,
		"refund": paylink.StatusFailed, "direct debit": paylink.StatusFailed, "direct debit refund": paylink.StatusFailed}
	for _, op := range operations {
		for _, answer := range []paylink.ReviewAnswer{paylink.AnswerApproved, paylink.AnswerNotReceived} {
			t.Run(op.name+"/"+string(answer), func(t *testing.T) {
				engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
					m := onboard(t, env)
					ref, parent := unknownItem(t, env, m, op)
					want, reserved := op.approved, int64(400)
					if answer == paylink.AnswerNotReceived {
						want, reserved = notReceived[op.name], 0
					}
					got, err := env.Service.ResolveReview(ctx, paylink.Resolution{MerchantID: m.ID, Reference: ref,
						Refund: op.refund, Answer: answer, AcquirerID: "acq-123", Note: "confirmed with the acquirer, ticket 42"})
					if err != nil || got != want {
						t.Fatalf("resolve: got %s, %v; want %s", got, err, want)
					}
					if s := op.stored(t, env, m, ref); s != want {
						t.Errorf("stored: got %s, want %s", s, want)
					}
					if n, err := env.Service.NeedsReview(ctx); err != nil || n != 0 {
						t.Errorf("NeedsReview: got %d, %v; want 0", n, err)
					}
					wantReserved(t, env, m, op, parent, reserved)
					wantResolutionAudited(t, env, m, op, ref, answer)
					if found, err := env.Service.VerifyLedger(ctx); err != nil || len(found) != 0 {
						t.Errorf("ledger verify: %v, %v", found, err)
					}
					if !op.refund && want != paylink.StatusPreAuthorised && webhooks(t, env, m, ref)[want] != 1 {
						t.Errorf("webhooks of %s: got %v, want one for %s", ref, webhooks(t, env, m, ref), want)
					}
					_, err = env.Service.ResolveReview(ctx, paylink.Resolution{MerchantID: m.ID, Reference: ref,
						Refund: op.refund, Answer: answer, Note: "again"})
					wantCode(t, "resolving it again", err, paylink.KindConflict)

					hinderable(env, op).SetSilent(false)
					if n := recoverAfterThreshold(t, env); n != 0 {
						t.Errorf("recovery after the resolution moved %d items, want 0", n)
					}
				})
			})
		}
	}
}

// wantResolutionAudited checks the audit row of the resolution of ref.
func wantResolutionAudited(t *testing.T, env *apitest.Env, m *apitest.Merchant, op operation, ref string, answer paylink.ReviewAnswer) {
	t.Helper()
	action := paylink.AuditTransactionResolve
	if op.refund {
		action = paylink.AuditRefundResolve
	}
	rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{MerchantID: m.ID, Action: action, Limit: 10})
	if err != nil || len(rows) != 1 || rows[0].ObjectID != ref || rows[0].Detail != string(answer) {
		t.Errorf("audit rows of %s: got %+v, %v; want one for %s with detail %s", action, rows, err, ref, answer)
	}
}

// wantCode fails unless err is a service error of kind.
func wantCode(t *testing.T, what string, err error, kind paylink.Kind) {
	t.Helper()
	var e *paylink.Error
	if !errors.As(err, &e) || e.Kind != kind {
		t.Errorf("%s: got %v, want an error of kind %v", what, err, kind)
	}
}

// A resolution that does not fit the item, or lacks what it needs, is
// refused and changes nothing.
func TestAResolutionThatDoesNotFitIsRefused(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		fine := approved(t, env, m, 500, false)
		capture, debit := operations[1], operations[3]
		held, _ := unknownItem(t, env, m, capture) // the acquirer stays silent: recovery leaves it UNKNOWN
		lodged, _ := unknownItem(t, env, m, debit)
		note := "checked with the acquirer"
		tests := []struct {
			name string
			r    paylink.Resolution
			kind paylink.Kind
		}{
			{"a capture declined", paylink.Resolution{Reference: held, Answer: paylink.AnswerDeclined, Note: note}, paylink.KindInvalid},
			{"a debit failed", paylink.Resolution{Reference: lodged, Answer: paylink.AnswerFailed, Note: note}, paylink.KindInvalid},
			{"no note", paylink.Resolution{Reference: held, Answer: paylink.AnswerApproved, Note: "  "}, paylink.KindInvalid},
			{"a card number in the note", paylink.Resolution{Reference: held, Answer: paylink.AnswerApproved, Note: "card 4111 1111 1111 1111 ok"}, paylink.KindInvalid},
			{"a control character", paylink.Resolution{Reference: held, Answer: paylink.AnswerApproved, Note: note, AuthCode: "12\n34"}, paylink.KindInvalid},
			{"an unknown answer", paylink.Resolution{Reference: held, Answer: "maybe", Note: note}, paylink.KindInvalid},
			{"no such item", paylink.Resolution{Reference: "pr_nosuch", Answer: paylink.AnswerApproved, Note: note}, paylink.KindNotFound},
			{"a card number as the reference", paylink.Resolution{Reference: "4111111111111111", Answer: paylink.AnswerApproved, Note: note}, paylink.KindInvalid},
			{"a refund by a transaction's reference", paylink.Resolution{Reference: held, Refund: true, Answer: paylink.AnswerApproved, Note: note}, paylink.KindNotFound},
			{"an approved payment", paylink.Resolution{Reference: fine, Answer: paylink.AnswerNotReceived, Note: note}, paylink.KindConflict},
		}
		for _, tc := range tests {
			tc.r.MerchantID = m.ID
			_, err := env.Service.ResolveReview(ctx, tc.r)
			wantCode(t, tc.name, err, tc.kind)
		}
		other := onboard(t, env)
		_, err := env.Service.ResolveReview(ctx, paylink.Resolution{MerchantID: other.ID, Reference: held, Answer: paylink.AnswerApproved, Note: note})
		wantCode(t, "another merchant's item", err, paylink.KindNotFound)
		wantStatus(t, env, m, held, paylink.StatusUnknown)
		wantStatus(t, env, m, lodged, paylink.StatusUnknown)
		wantStatus(t, env, m, fine, paylink.StatusApproved)
	})
}

// A declined authorisation and a refused refund, as the operator learnt
// them: DECLINED with the processor's reason, and FAILED with the
// reservation given back.
func TestAnOperatorRecordsADecline(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		purchase, refund := operations[0], operations[2]
		ref, _ := unknownItem(t, env, m, purchase)
		got, err := env.Service.ResolveReview(ctx, paylink.Resolution{MerchantID: m.ID, Reference: ref, Answer: paylink.AnswerDeclined,
			DeclineCode: "51", DeclineMessage: "Insufficient funds", Note: "acquirer's portal"})
		if err != nil || got != paylink.StatusDeclined {
			t.Fatalf("resolve a decline: got %s, %v", got, err)
		}
		tr := status(t, env, m, ref)
		if tr.Details.Decline == nil || tr.Details.Decline.ProcessorCode != "51" {
			t.Errorf("the decline's reason: got %+v, want code 51", tr.Details.Decline)
		}
		env.Sandbox.SetSilent(false)
		rf, parent := unknownItem(t, env, m, refund)
		got, err = env.Service.ResolveReview(ctx, paylink.Resolution{MerchantID: m.ID, Reference: rf, Refund: true,
			Answer: paylink.AnswerDeclined, DeclineMessage: "merchant balance too low", Note: "acquirer's portal"})
		if err != nil || got != paylink.StatusFailed {
			t.Fatalf("resolve a refused refund: got %s, %v", got, err)
		}
		wantReserved(t, env, m, refund, parent, 0)
		if found, err := env.Service.VerifyLedger(ctx); err != nil || len(found) != 0 {
			t.Errorf("ledger verify: %v, %v", found, err)
		}
	})
}
