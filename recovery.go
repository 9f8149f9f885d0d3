package paylink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProcessingTimeout is how long a transaction or refund may stay
// PROCESSING (its processor call in flight) before the recovery job
// decides that the process that owned it died.
const ProcessingTimeout = 2 * time.Minute

// RecoverInterrupted repairs work left PROCESSING by a crash between a
// claim and the processor's answer:
//
//   - a purchase, debit or 3-D Secure completion that was never answered
//     becomes FAILED (no money was taken);
//   - a hold whose capture or cancel was interrupted is restored to
//     PRE_AUTHORISED, unchanged, so it can be captured or cancelled again;
//   - a refund that was never answered becomes FAILED and its reserved
//     amount is released.
//
// Every move is a compare-and-set, so several instances running this job
// repair each item once. It returns how many items it moved.
func (s *Service) RecoverInterrupted(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-ProcessingTimeout)
	var stuck []*Transaction
	var refunds []*Refund
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if stuck, err = tx.TransactionsInStatus(StatusProcessing, cutoff, 100); err != nil {
			return err
		}
		refunds, err = tx.RefundsInStatus(StatusProcessing, cutoff, 100)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recover interrupted: %w", err)
	}
	moved := 0
	for _, t := range stuck {
		ok, err := s.recoverTransaction(ctx, t)
		if err != nil {
			return moved, err
		}
		if ok {
			moved++
		}
	}
	for _, r := range refunds {
		ok, err := s.recoverRefund(ctx, r)
		if err != nil {
			return moved, err
		}
		if ok {
			moved++
		}
	}
	return moved, nil
}

// recoverTransaction fails an unanswered transaction or restores an
// interrupted hold; false when another instance got there first.
func (s *Service) recoverTransaction(ctx context.Context, t *Transaction) (bool, error) {
	hold := t.PreAuth && !t.ProcessedAt.IsZero() // authorised earlier: a capture or cancel was in flight
	err := s.store.Update(ctx, func(tx Tx) error {
		if hold {
			t.Status, t.UpdatedAt = StatusPreAuthorised, t.ProcessedAt // keeps its expiry clock
			if err := s.save(tx, t, StatusProcessing); err != nil {
				return err
			}
			return s.recordEvent(tx, t.MerchantID, t.Reference, "transaction.claim.recovered", map[string]any{"version": t.Version})
		}
		t.Status, t.ProcessedAt, t.UpdatedAt = StatusFailed, s.now(), s.now()
		t.Details.Message = "The payment was interrupted before the processor answered; no money was taken. Please try again."
		if err := s.save(tx, t, StatusProcessing); err != nil {
			return err
		}
		return s.outcome(tx, t)
	})
	return recovered(err, "recover "+t.Reference)
}

// recoverRefund fails an unanswered refund and releases its reservation.
func (s *Service) recoverRefund(ctx context.Context, r *Refund) (bool, error) {
	err := s.store.Update(ctx, func(tx Tx) error {
		t, err := tx.Transaction(r.MerchantID, r.TransactionReference)
		if err != nil {
			return err
		}
		r.Status = StatusFailed
		r.Details.Message = "The refund was interrupted before the processor answered; nothing was refunded. Please try again."
		if err := s.saveRefund(tx, t, r, StatusProcessing); err != nil {
			return err
		}
		if err := tx.ReleaseRefunded(t.Reference, r.Amount, s.now()); err != nil {
			return err
		}
		return s.refundOutcome(ctx, tx, t, r)
	})
	return recovered(err, "recover refund "+r.Reference)
}

// recovered maps a recovery's result: a conflict means another instance
// or the original owner finished first.
func recovered(err error, op string) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrConflict):
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", op, err)
}
