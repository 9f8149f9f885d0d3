package paylink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProcessingTimeout is how long a transaction may stay PROCESSING (its
// processor call in flight) before the recovery job decides the process
// that owned it died.
const ProcessingTimeout = 2 * time.Minute

// RecoverInterrupted fails transactions left PROCESSING by a crash between
// consuming their token and recording the processor's answer. Each is
// moved with a compare-and-set, so several instances running this job
// fail each transaction once. It returns how many it moved.
func (s *Service) RecoverInterrupted(ctx context.Context) (int, error) {
	var stuck []*Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		stuck, err = tx.TransactionsInStatus(StatusProcessing, s.now().Add(-ProcessingTimeout), 100)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recover interrupted: %w", err)
	}
	moved := 0
	for _, t := range stuck {
		err := s.store.Update(ctx, func(tx Tx) error {
			t.Status, t.ProcessedAt, t.UpdatedAt = StatusFailed, s.now(), s.now()
			t.Details.Message = "The payment was interrupted before the processor answered; no money was taken. Please try again."
			if err := tx.UpdateTransaction(t); err != nil {
				return err
			}
			return s.outcome(tx, t)
		})
		switch {
		case err == nil:
			moved++
		case errors.Is(err, ErrConflict): // another instance or the owner got there first
		default:
			return moved, fmt.Errorf("recover %s: %w", t.Reference, err)
		}
	}
	return moved, nil
}
