package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paylink/paylink"
)

// Card lifecycle: the unscoped lookup of the challenge page and
// the refund status compare-and-set.

func testTransactionByReference(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_ref"+m.ID, "", 1000)
	tr.Status = paylink.StatusRequiresAuthentication
	tr.Details.ThreeDS = &paylink.ThreeDS{Requested: true, ChallengeHash: "abc", ChallengeExpiresAt: t0.Unix() + 600}
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.TransactionByReference(tr.Reference)
		if err != nil || got.MerchantID != m.ID || got.Details.ThreeDS == nil || got.Details.ThreeDS.ChallengeHash != "abc" {
			t.Errorf("by reference: got %+v, %v; want the transaction with its challenge hash", got, err)
		}
		if _, err := tx.TransactionByReference("pr_missing" + m.ID); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("unknown reference: got %v, want ErrNotFound", err)
		}
		return nil
	})
}

func testRefundCompletionCAS(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_rc"+m.ID, "", 1000)
	r := &paylink.Refund{Reference: "rf_rc" + m.ID, MerchantID: m.ID, TransactionReference: tr.Reference,
		Status: paylink.StatusProcessing, Currency: "AUD", Amount: 400, CreatedAt: t0}
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(tr); err != nil {
			return err
		}
		return tx.CreateRefund(r)
	})
	var wins atomic.Int64
	var wg sync.WaitGroup
	for _, to := range []paylink.Status{paylink.StatusApproved, paylink.StatusFailed, paylink.StatusApproved, paylink.StatusFailed} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := *r
			mine.Status, mine.Details.Message = to, string(to)
			err := s.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdateRefund(&mine, paylink.StatusProcessing) })
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, paylink.ErrConflict) {
				t.Errorf("update refund: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("got %d refund completions, want 1", wins.Load())
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Refund(m.ID, r.Reference)
		if err != nil || got.Status == paylink.StatusProcessing || got.Details.Message != string(got.Status) {
			t.Errorf("completed refund: got %+v, %v; want one winner's status and message", got, err)
		}
		return nil
	})
}

func testReleaseRefundedGivesTheReservationBack(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_rel"+m.ID, "", 1000)
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	update(t, s, func(tx paylink.Tx) error { return tx.AddRefunded(tr.Reference, 1000, t0) })
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.AddRefunded(tr.Reference, -1000, t0); !errors.Is(err, paylink.ErrConflict) {
			t.Errorf("a negative AddRefunded: got %v, want ErrConflict (releases go through ReleaseRefunded)", err)
		}
		return tx.ReleaseRefunded(tr.Reference, 1000, t0)
	})
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Transaction(m.ID, tr.Reference)
		if err != nil || got.Refunded != 0 {
			t.Errorf("refunded after release: got %+v, %v; want 0", got, err)
		}
		return nil
	})
}
