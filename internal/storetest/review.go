package storetest

import (
	"context"
	"testing"

	"github.com/paylink/paylink"
)

// testCountInStatus: the needs-review gauge counts transactions and
// refunds in a status, and nothing else.
func testCountInStatus(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	count := func() int {
		var n int
		view(t, s, func(tx paylink.Tx) error {
			var err error
			n, err = tx.CountInStatus(paylink.StatusUnknown)
			return err
		})
		return n
	}
	if got := count(); got != 0 {
		t.Errorf("empty store: got %d, want 0", got)
	}
	unknown := NewTransaction(m, "pr_unknown"+m.ID, "", 1000)
	unknown.Status = paylink.StatusUnknown
	approved := NewTransaction(m, "pr_approved"+m.ID, "", 1000)
	update(t, s, func(tx paylink.Tx) error {
		for _, tr := range []*paylink.Transaction{unknown, approved} {
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
		}
		for i, st := range []paylink.Status{paylink.StatusUnknown, paylink.StatusApproved} {
			r := &paylink.Refund{Reference: "rf_" + string(rune('a'+i)) + m.ID, MerchantID: m.ID,
				TransactionReference: approved.Reference, Status: st, Currency: "AUD", Amount: 100, CreatedAt: t0}
			if err := tx.CreateRefund(r); err != nil {
				return err
			}
		}
		return nil
	})
	if got := count(); got != 2 {
		t.Errorf("one UNKNOWN transaction and one UNKNOWN refund: got %d, want 2", got)
	}
	// Only the statuses work waits in are indexed (transactions_waiting):
	// the others are refused rather than scanned for.
	for _, st := range []paylink.Status{paylink.StatusPending, paylink.StatusProcessing, paylink.StatusUnknown,
		paylink.StatusRequiresAuthentication, paylink.StatusPreAuthorised, paylink.StatusApproved, paylink.StatusDeclined} {
		waiting := st != paylink.StatusApproved && st != paylink.StatusDeclined
		err := s.View(context.Background(), func(tx paylink.Tx) error {
			if _, err := tx.TransactionsInStatus(st, t0, 10); err != nil {
				return err
			}
			_, err := tx.CountInStatus(st)
			return err
		})
		if (err == nil) != waiting {
			t.Errorf("status %s: got error %v, want one only for a status nothing waits in", st, err)
		}
	}
}
