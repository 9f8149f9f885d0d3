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
// recorded, exactly once. It works clearingBatch at a time until none is
// left and returns how many debits this call moved. Each pass starts
// after the last debit the one before it read, so a debit the bank does
// not answer about (it stays PENDING, the oldest, for the next run) never
// holds up the others; the run's error then counts them.
func (s *Service) ClearDirectDebits(ctx context.Context) (int, error) {
	var run clearingRun
	moved, err := walk(ctx, clearingBatch, func(ctx context.Context) (int, int, error) { return s.clearDebitBatch(ctx, &run) })
	return moved, errors.Join(err, run.unansweredErr())
}

// clearingRun is how far a run of ClearDirectDebits has got.
type clearingRun struct {
	after      Position // the last debit read
	unanswered int      // debits the bank did not answer about
	first      error    // the first of those, with the bank's error
}

// unansweredErr says how many debits the bank did not answer about, nil
// for none.
func (r *clearingRun) unansweredErr() error {
	if r.unanswered == 0 {
		return nil
	}
	return fmt.Errorf("%d due direct debits left PENDING for the next run, the bank not answering; the first: %w", r.unanswered, r.first)
}

// clearDebitBatch clears up to clearingBatch due debits after the run's
// position, which it moves to the last one it read, and says how many it
// read and moved. A debit the bank does not answer about is counted and
// passed over; any other failure ends the run once the batch is done.
func (s *Service) clearDebitBatch(ctx context.Context, run *clearingRun) (read, moved int, err error) {
	var due []*Transaction
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		due, err = tx.TransactionsInStatus(StatusPending, s.now().Add(-s.cfg.DirectDebitClearing), run.after, clearingBatch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("clear direct debits: %w", err)
	}
	var errs []error
	for _, t := range due {
		run.after = t.position()
		if t.PaymentType != PaymentTypeBankAccount || t.Details.BankAccount == nil {
			continue
		}
		ok, err := s.clearDebit(ctx, t)
		var unanswered *bankError
		switch {
		case errors.As(err, &unanswered):
			if run.unanswered == 0 {
				run.first = fmt.Errorf("direct debit %s: %w", t.Reference, err)
			}
			run.unanswered++
		case err != nil:
			errs = append(errs, fmt.Errorf("clear direct debit %s: %w", t.Reference, err))
		case ok:
			moved++
		}
	}
	return len(due), moved, errors.Join(errs...)
}

// bankError is the bank's failure to answer a clearing query: the debit
// stays PENDING and the next run asks again.
type bankError struct{ err error }

func (e *bankError) Error() string { return "bank: " + e.err.Error() }
func (e *bankError) Unwrap() error { return e.err }

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
		return false, &bankError{err}
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
