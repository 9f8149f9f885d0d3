package storetest

import (
	"errors"
	"testing"

	"github.com/paylink/paylink"
)

// testRefundSettlement covers the reserve-then-settle store methods of
// direct debit refunds: UpdateRefund is a compare-and-set on the refund's
// status, and ReleaseRefunded gives a reservation back, never below zero.
func testRefundSettlement(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "dd_s"+m.ID, "", 1000)
	tr.PaymentType = paylink.PaymentTypeBankAccount
	r := &paylink.Refund{Reference: "rf_s" + m.ID, MerchantID: m.ID, TransactionReference: tr.Reference,
		Status: paylink.StatusProcessing, Currency: "AUD", Amount: 400, CreatedAt: t0}
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(tr); err != nil {
			return err
		}
		if err := tx.AddRefunded(tr.Reference, r.Amount, t0); err != nil {
			return err
		}
		return tx.CreateRefund(r)
	})
	r.Status, r.Details.Message = paylink.StatusFailed, "rejected"
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.UpdateRefund(r, paylink.StatusProcessing); err != nil {
			return err
		}
		return tx.ReleaseRefunded(tr.Reference, r.Amount, t0)
	})
	err := s.Update(t.Context(), func(tx paylink.Tx) error { return tx.UpdateRefund(r, paylink.StatusProcessing) })
	if !errors.Is(err, paylink.ErrConflict) {
		t.Errorf("settling a settled refund: got %v, want ErrConflict", err)
	}
	err = s.Update(t.Context(), func(tx paylink.Tx) error { return tx.ReleaseRefunded(tr.Reference, 1, t0) })
	if !errors.Is(err, paylink.ErrConflict) {
		t.Errorf("releasing below zero: got %v, want ErrConflict", err)
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Refund(m.ID, r.Reference)
		if err != nil {
			return err
		}
		if got.Status != paylink.StatusFailed || got.Details.Message != "rejected" {
			t.Errorf("refund: got status %s message %q, want FAILED rejected", got.Status, got.Details.Message)
		}
		trGot, err := tx.Transaction(m.ID, tr.Reference)
		if err != nil {
			return err
		}
		if trGot.Refunded != 0 {
			t.Errorf("refunded: got %d, want 0 after the release", trGot.Refunded)
		}
		return nil
	})
}
