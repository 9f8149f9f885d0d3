package recoverytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/storetest"
)

// A declined authorisation whose answer was lost is recorded DECLINED by
// recovery, with its webhook, as the call would have recorded it.
func TestRecoveryRecordsADeclineTheProcessorReports(t *testing.T) {
	engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		op := operations[0]
		ref, got, _, err := op.run(t, env, m, op.hinder(env, false), processor.CardDecline)
		if err != nil || got != paylink.StatusProcessing {
			t.Fatalf("purchase past its deadline: got %s, %v; want PROCESSING", got, err)
		}
		recoverAfterThreshold(t, env)
		if tr := status(t, env, m, ref); tr.Status != paylink.StatusDeclined || tr.Details.Decline == nil || tr.Details.Decline.ProcessorCode != "05" {
			t.Errorf("after recovery: got %s %+v, want DECLINED with the processor's code 05", tr.Status, tr.Details.Decline)
		}
		if got := webhooks(t, env, m, ref); len(got) != 1 || got[paylink.StatusDeclined] != 1 {
			t.Errorf("webhooks: got %v, want one DECLINED", got)
		}
	})
}

// An operation the processor never received (the process died between
// the claim and the call) is recorded as nothing having happened.
func TestRecoveryRecordsWhatTheProcessorNeverReceived(t *testing.T) {
	tests := []struct {
		name string
		// stick stores an item PROCESSING as a crash would leave it and
		// returns a check of what recovery made of it.
		stick func(t *testing.T, env *apitest.Env, m *apitest.Merchant) func(t *testing.T)
	}{
		{"purchase becomes FAILED", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) func(t *testing.T) {
			tr := stuckTransaction(t, env, m, "pr_lost", func(tr *paylink.Transaction) { tr.ProcessedAt = time.Time{} })
			return func(t *testing.T) { wantStatus(t, env, m, tr.Reference, paylink.StatusFailed) }
		}},
		{"hold whose capture was claimed is restored", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) func(t *testing.T) {
			tr := stuckTransaction(t, env, m, "pr_hold", func(tr *paylink.Transaction) {
				tr.PreAuth, tr.PreAuthAmount = true, tr.Total
				tr.Details.Pending = &paylink.PendingOp{Op: "capture", Amount: 500}
			})
			return func(t *testing.T) {
				wantStatus(t, env, m, tr.Reference, paylink.StatusPreAuthorised)
				if got := status(t, env, m, tr.Reference); got.Details.Pending != nil || got.Total != 1000 {
					t.Errorf("restored hold: got pending %+v total %d, want no pending operation and total 1000", got.Details.Pending, got.Total)
				}
			}
		}},
		{"debit becomes FAILED", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) func(t *testing.T) {
			tr := stuckTransaction(t, env, m, "dd_lost", func(tr *paylink.Transaction) {
				tr.PaymentType, tr.Details.BankAccount = paylink.PaymentTypeBankAccount, &paylink.BankAccountInfo{Masked: "*****678", BSB: "062-000"}
			})
			return func(t *testing.T) { wantStatus(t, env, m, tr.Reference, paylink.StatusFailed) }
		}},
		{"refund becomes FAILED and its reservation is released", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) func(t *testing.T) {
			ref := approved(t, env, m, 1000, false)
			r := &paylink.Refund{Reference: "rf_lost", MerchantID: m.ID, TransactionReference: ref,
				Status: paylink.StatusProcessing, Currency: "AUD", Amount: 400, CreatedAt: env.Clock.Now()}
			store(t, env, func(tx paylink.Tx) error {
				if err := tx.AddRefunded(ref, 400, env.Clock.Now()); err != nil {
					return err
				}
				return tx.CreateRefund(r)
			})
			return func(t *testing.T) {
				if got := refundStatus(t, env, m, r.Reference).Status; got != paylink.StatusFailed {
					t.Errorf("refund: got %s, want FAILED", got)
				}
				if got := status(t, env, m, ref).Refunded; got != 0 {
					t.Errorf("refunded total: got %d, want 0 (released)", got)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
				m := onboard(t, env)
				check := tt.stick(t, env, m)
				if n := recoverAfterThreshold(t, env); n != 1 {
					t.Errorf("recovery moved %d items, want 1", n)
				}
				check(t)
				if n, err := env.Service.NeedsReview(ctx); err != nil || n != 0 {
					t.Errorf("NeedsReview: got %d, %v; want 0", n, err)
				}
			})
		})
	}
}

// A client that goes away while the processor works does not leave the
// operation half-done: the answer is recorded all the same.
func TestClientDisconnectDoesNotAbandonTheCall(t *testing.T) {
	engines(t, paylink.Config{}, func(t *testing.T, env *apitest.Env) {
		m := onboard(t, env)
		req := purchase(t, env, m, "4111111111111111", 1000, false)
		env.Sandbox.SetDelay(slow)
		reqCtx, disconnect := context.WithCancel(ctx)
		done := inBackground(func() (*paylink.Transaction, error) { return env.Service.Purchase(reqCtx, m.Merchant, req) })
		received(t, env.Sandbox.Received, paylink.OpAuthorize, 1)
		disconnect()
		got := <-done
		if got.err != nil || got.v.Status != paylink.StatusApproved {
			t.Fatalf("purchase after the client left: got %+v, %v; want APPROVED", got.v, got.err)
		}
		wantStatus(t, env, m, got.v.Reference, paylink.StatusApproved)
	})
}

// stuckTransaction stores a 10.00 card purchase PROCESSING now, adjusted
// by mutate.
func stuckTransaction(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string, mutate func(*paylink.Transaction)) *paylink.Transaction {
	t.Helper()
	tr := storetest.NewTransaction(m.Merchant, ref, "", 1000)
	now := env.Clock.Now()
	tr.Status, tr.CreatedAt, tr.UpdatedAt, tr.ProcessedAt = paylink.StatusProcessing, now, now, now
	mutate(tr)
	store(t, env, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	return tr
}

// store runs fn in a database transaction.
func store(t *testing.T, env *apitest.Env, fn func(paylink.Tx) error) {
	t.Helper()
	if err := env.Store.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

// wantStatus checks a transaction's stored status.
func wantStatus(t *testing.T, env *apitest.Env, m *apitest.Merchant, ref string, want paylink.Status) {
	t.Helper()
	if got := status(t, env, m, ref).Status; got != want {
		t.Errorf("%s: got %s, want %s", ref, got, want)
	}
}

// A hold's capture, cancel or expiry whose answer was lost and that
// recovery records is audited once, as the call would have audited it,
// with the recovery job as its actor (like a recovered refund).
func TestRecoveredHoldOperationIsAudited(t *testing.T) {
	tests := []struct {
		name, action string
		want         paylink.Status
		money        string // the amount the row names
		// run makes a hold and sends its operation to a slow acquirer.
		run func(t *testing.T, env *apitest.Env, m *apitest.Merchant) (ref string, err error)
	}{
		{"capture", paylink.AuditCapture, paylink.StatusApproved, "amount=8.00 currency=AUD", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) (string, error) {
			ref := approved(t, env, m, 1000, true)
			req := capture(t, env, m, 800)
			env.Sandbox.SetDelay(time.Hour)
			_, err := env.Service.Capture(ctx, m.Merchant, ref, req)
			return ref, err
		}},
		{"cancel", paylink.AuditCancel, paylink.StatusPreAuthorisedReversed, "amount=10.00 currency=AUD", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) (string, error) {
			ref := approved(t, env, m, 1000, true)
			req := paylink.CancelRequest{CompanyToken: m.Creds.CompanyToken, TransactionToken: token(t, env, m)}
			env.Sandbox.SetDelay(time.Hour)
			_, err := env.Service.Cancel(ctx, m.Merchant, ref, req)
			return ref, err
		}},
		{"expiry", paylink.AuditExpire, paylink.StatusPreAuthorisedReversed, "amount=10.00 currency=AUD", func(t *testing.T, env *apitest.Env, m *apitest.Merchant) (string, error) {
			ref := approved(t, env, m, 1000, true)
			env.Clock.Advance(env.Service.Config().PreAuthExpiry + time.Minute)
			env.Sandbox.SetDelay(time.Hour)
			n, err := env.Service.ExpirePreAuths(ctx)
			if n != 0 {
				t.Errorf("expiry with the processor's answer lost: %d released, want 0 (the hold waits for recovery)", n)
			}
			return ref, err
		}},
	}
	job := paylink.Actor{Kind: paylink.ActorSystem, ID: "interrupted-transaction-recovery"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			engines(t, paylink.Config{ProcessorTimeout: deadline}, func(t *testing.T, env *apitest.Env) {
				m := onboard(t, env)
				ref, err := tt.run(t, env, m)
				if err != nil {
					t.Fatalf("%s past its deadline: %v", tt.name, err)
				}
				wantStatus(t, env, m, ref, paylink.StatusProcessing)
				if rows := audited(t, env, tt.action, ref); len(rows) != 0 {
					t.Fatalf("audit rows before recovery: got %d, want none (the outcome is not known)", len(rows))
				}
				env.Clock.Advance(paylink.ProcessingTimeout + time.Second)
				if n, err := env.Service.RecoverInterrupted(paylink.WithActor(ctx, job)); err != nil || n != 1 {
					t.Fatalf("recovery: moved %d, %v; want 1", n, err)
				}
				wantStatus(t, env, m, ref, tt.want)
				rows := audited(t, env, tt.action, ref)
				if len(rows) != 1 {
					t.Fatalf("%s audit rows after recovery: got %d, want 1", tt.action, len(rows))
				}
				if e := rows[0]; e.Outcome != paylink.OutcomeSuccess || e.Detail != string(tt.want)+" "+tt.money || e.MerchantID != m.ID ||
					e.ActorKind != job.Kind || e.ActorID != job.ID {
					t.Errorf("audit row: got %+v, want success, detail %s %s, merchant %s, actor %s %s", e, tt.want, tt.money, m.ID, job.Kind, job.ID)
				}
			})
		})
	}
}

// audited is the audit rows of action about the transaction ref.
func audited(t *testing.T, env *apitest.Env, action, ref string) []*paylink.AuditEvent {
	t.Helper()
	rows, err := env.Service.AuditLog(ctx, paylink.AuditFilter{Action: action, Limit: 1000})
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	var out []*paylink.AuditEvent
	for _, e := range rows {
		if e.ObjectType == paylink.ObjectTransaction && e.ObjectID == ref {
			out = append(out, e)
		}
	}
	return out
}
