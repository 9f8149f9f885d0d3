package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

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
			if _, err := tx.TransactionsInStatus(st, t0, paylink.Position{}, 10); err != nil {
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

// testInStatusPages: waiting transactions and refunds come oldest first,
// ties by reference, and a page after a position holds exactly the items
// after it, even among items changed at the same microsecond.
func testInStatusPages(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	parent := NewTransaction(m, "pr_parent"+m.ID, "", 1000)
	var want []string
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(parent); err != nil {
			return err
		}
		for i, at := range []time.Time{t0, t0, t0, t0.Add(time.Microsecond), t0.Add(time.Microsecond)} {
			ref := fmt.Sprintf("pg%d%s", 4-i, m.ID) // references against the time order
			tr := NewTransaction(m, "pr_"+ref, "", 1000)
			tr.Status, tr.UpdatedAt = paylink.StatusUnknown, at
			r := &paylink.Refund{Reference: "rf_" + ref, MerchantID: m.ID, TransactionReference: parent.Reference,
				Status: paylink.StatusUnknown, Currency: "AUD", Amount: 1, CreatedAt: at}
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
			if err := tx.CreateRefund(r); err != nil {
				return err
			}
		}
		return nil
	})
	// Ordered by time, then reference: pg2 pg3 pg4 (t0), pg0 pg1 (t0+1µs).
	for _, i := range []int{2, 3, 4, 0, 1} {
		want = append(want, fmt.Sprintf("pg%d%s", i, m.ID))
	}
	var gotTx, gotRefunds []string
	var afterTx, afterRefund paylink.Position
	for range 4 { // pages of 2: 2, 2, 1, 0
		view(t, s, func(tx paylink.Tx) error {
			ts, err := tx.TransactionsInStatus(paylink.StatusUnknown, t0.Add(time.Second), afterTx, 2)
			if err != nil {
				return err
			}
			rs, err := tx.RefundsInStatus(paylink.StatusUnknown, t0.Add(time.Second), afterRefund, 2)
			if err != nil {
				return err
			}
			for _, tr := range ts {
				gotTx, afterTx = append(gotTx, strings.TrimPrefix(tr.Reference, "pr_")), paylink.Position{At: tr.UpdatedAt, Reference: tr.Reference}
			}
			for _, r := range rs {
				gotRefunds, afterRefund = append(gotRefunds, strings.TrimPrefix(r.Reference, "rf_")), paylink.Position{At: r.CreatedAt, Reference: r.Reference}
			}
			return nil
		})
	}
	if !slices.Equal(gotTx, want) || !slices.Equal(gotRefunds, want) {
		t.Errorf("paged by 2:\ntransactions %v\nrefunds      %v\nwant         %v", gotTx, gotRefunds, want)
	}
}
