package paylink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// clearingBatch is how many due debits one pass of ClearDirectDebits
// reads.
const clearingBatch = 200

// ClearDirectDebits asks the bank about every PENDING direct debit
// submitted longer than Config.DirectDebitClearing ago and records each
// as APPROVED (cleared) or DECLINED (dishonoured). Several instances may
// run it at once: each outcome is recorded by a compare-and-set on the
// transaction's version, so every debit moves, and has its outcome
// recorded, exactly once. It works clearingBatch at a time until none
// is left (drain) and returns how many debits this call moved.
func (s *Service) ClearDirectDebits(ctx context.Context) (int, error) {
	return drain(ctx, clearingBatch, s.clearDebitBatch)
}

// clearDebitBatch clears up to clearingBatch due debits and says how many
// it read and moved.
func (s *Service) clearDebitBatch(ctx context.Context) (read, moved int, err error) {
	var due []*Transaction
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		due, err = tx.TransactionsInStatus(StatusPending, s.now().Add(-s.cfg.DirectDebitClearing), Position{}, clearingBatch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("clear direct debits: %w", err)
	}
	var errs []error
	for _, t := range due {
		if t.PaymentType != PaymentTypeBankAccount || t.Details.BankAccount == nil {
			continue
		}
		ok, err := s.clearDebit(ctx, t)
		if err != nil {
			errs = append(errs, fmt.Errorf("clear direct debit %s: %w", t.Reference, err))
		}
		if ok {
			moved++
		}
	}
	return len(due), moved, errors.Join(errs...)
}

// clearDebit asks the bank about one PENDING debit, outside any database
// transaction, and records the answer. It reports false without error
// when another instance recorded it first.
func (s *Service) clearDebit(ctx context.Context, t *Transaction) (bool, error) {
	number, err := s.vault.Open(t.Secret, debitBinding(t))
	if err != nil {
		return false, fmt.Errorf("open account number: %w", err)
	}
	call, cancel := context.WithTimeout(ctx, s.cfg.ProcessorTimeout) // a query: on timeout the next run asks again
	res, err := s.bank.ClearDebit(call, debitOf(t, string(number)))
	cancel()
	if err != nil {
		return false, fmt.Errorf("bank: %w", err)
	}
	applyClearing(t, res, s.now())
	err = s.store.Update(ctx, func(tx Tx) error {
		return s.saveOutcome(tx, t, StatusPending, "")
	})
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("record clearing: %w", err)
	}
	return true, nil
}

// applyClearing moves a PENDING debit to the status the bank's answer
// implies; transaction_time_utc becomes the time of clearing.
func applyClearing(t *Transaction, res BankClearing, now time.Time) {
	t.UpdatedAt, t.ProcessedAt = now, now
	if res.Cleared {
		t.Status = StatusApproved
		t.Details.Message = "The direct debit cleared"
		return
	}
	t.Status, t.Details.Decline = StatusDeclined, res.Dishonour
	reason := "no reason given"
	if res.Dishonour != nil {
		reason = res.Dishonour.ProcessorMessage
	}
	t.Details.Message = "The direct debit was dishonoured by the customer's bank: " + reason
}
