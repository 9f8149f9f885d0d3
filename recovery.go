package paylink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ProcessingTimeout is how long a transaction or refund may stay
// PROCESSING (its processor call in flight) before the recovery job asks
// the processor what happened to it. Every processor call ends within
// CallWindow of its item's claim (callContext), so by then the call is
// over.
const ProcessingTimeout = 2 * time.Minute

// RecoveryBatch is how many transactions and how many refunds one
// recovery run looks at, of each status (PROCESSING, UNKNOWN).
const RecoveryBatch = 100

// reviewCursor is where the recovery job's next run goes on through the
// UNKNOWN items. Items the processor still cannot say about stay
// UNKNOWN, unchanged, so each run starts after the last one the previous
// run asked about, and starts over once it asked about the last one:
// with more than RecoveryBatch of them, or with one whose inquiry always
// goes unanswered (which stops the run's other inquiries of that
// processor), each is asked about in turn instead of the oldest blocking
// the rest. Per process: another instance keeps its own.
type reviewCursor struct {
	mu                  sync.Mutex
	transaction, refund Position
}

// from is where the next run starts.
func (c *reviewCursor) from() (transaction, refund Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.transaction, c.refund
}

// advance records where a run got to.
func (c *reviewCursor) advance(transaction, refund Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.transaction, c.refund = transaction, refund
}

// turn follows one kind of UNKNOWN item through a run: after is the
// position the run started from, and moves to each item the run got to
// (see recoverEach); the run reached the end when it got to the last item
// of a page shorter than RecoveryBatch.
type turn struct {
	after Position
	asked bool // the run got to the last item of the page
	items int  // the page's length
}

// next is where the next run starts: from the oldest once this one asked
// about the last item there is, else after the last one it asked about.
func (tn turn) next() Position {
	if tn.items < RecoveryBatch && (tn.asked || tn.items == 0) {
		return Position{}
	}
	return tn.after
}

// RecoverInterrupted repairs work whose processor answer was lost: left
// PROCESSING past ProcessingTimeout by a crash or a call that outlasted
// its deadline, or UNKNOWN from an earlier run. It never guesses: it asks
// the processor (or bank) about the operation by its idempotent id and
// records the answer exactly as the interrupted call would have:
//
//   - done: the purchase, capture, release, debit or refund is recorded
//     with its outcome and webhooks;
//   - declined: recorded as declined;
//   - never received: nothing happened, so a purchase or debit becomes
//     FAILED, a hold is restored to PRE_AUTHORISED, a refund becomes
//     FAILED and its reservation is released;
//   - no answer (error, deadline): the item moves to UNKNOWN, visible in
//     status look-ups and counted by NeedsReview, with no webhook and a
//     refund's reservation kept; later runs ask again.
//
// Every move is a compare-and-set, so several instances running this job
// repair each item once. It returns how many items it moved.
func (s *Service) RecoverInterrupted(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-ProcessingTimeout)
	fromTx, fromRefund := s.review.from()
	var stuck, unknown []*Transaction
	var refunds, unknownRefunds []*Refund
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if stuck, err = tx.TransactionsInStatus(StatusProcessing, cutoff, Position{}, RecoveryBatch); err != nil {
			return err
		}
		if refunds, err = tx.RefundsInStatus(StatusProcessing, cutoff, Position{}, RecoveryBatch); err != nil {
			return err
		}
		if unknown, err = tx.TransactionsInStatus(StatusUnknown, cutoff, fromTx, RecoveryBatch); err != nil {
			return err
		}
		unknownRefunds, err = tx.RefundsInStatus(StatusUnknown, cutoff, fromRefund, RecoveryBatch)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recover interrupted: %w", err)
	}
	in := &inquirer{s: s, silent: map[bool]error{}}
	transaction := func(t *Transaction) (bool, error) { return s.recoverTransaction(ctx, in, t) }
	refund := func(r *Refund) (bool, error) { return s.recoverRefund(ctx, in, r) }
	txTurn, refundTurn := turn{after: fromTx}, turn{after: fromRefund}
	moved := 0
	for _, pass := range []func() (int, error){
		func() (int, error) { return recoverEach(in, stuck, nil, transaction) },
		func() (int, error) { return recoverEach(in, refunds, nil, refund) },
		func() (int, error) { return recoverEach(in, unknown, &txTurn, transaction) },
		func() (int, error) { return recoverEach(in, unknownRefunds, &refundTurn, refund) },
	} {
		n, err := pass()
		if moved += n; err != nil {
			return moved, err
		}
	}
	s.review.advance(txTurn.next(), refundTurn.next())
	return moved, nil
}

// recoverEach recovers items in order with one and returns how many
// moved. With a turn (UNKNOWN items), it notes the items the run got to:
// all but those whose inquiry was not made because their processor fell
// silent earlier in the run (an item nobody can be asked about counts as
// got to).
func recoverEach[T positioned](in *inquirer, items []T, tn *turn, one func(T) (bool, error)) (int, error) {
	moved := 0
	if tn != nil {
		tn.items = len(items)
	}
	for i, it := range items {
		before := in.skipped
		ok, err := one(it)
		if ok {
			moved++
		}
		if err != nil {
			return moved, err
		}
		if tn != nil && in.skipped == before {
			tn.after, tn.asked = it.position(), i == len(items)-1
		}
	}
	return moved, nil
}

// positioned is an item waiting in a status, with its place among them.
type positioned interface{ position() Position }

// position is a transaction's place among those waiting: by its last
// change, then reference (TransactionsInStatus).
func (t *Transaction) position() Position { return Position{At: t.UpdatedAt, Reference: t.Reference} }

// position is a refund's place among those waiting: by its creation,
// then reference (RefundsInStatus).
func (r *Refund) position() Position { return Position{At: r.CreatedAt, Reference: r.Reference} }

// errNoInquiry: the payment method's provider has no inquiry (a hosted
// page's alternative method), so nobody can say.
var errNoInquiry = errors.New("this payment method's provider cannot be asked about an operation")

// inquirer asks the processor and the bank during one recovery run. Once
// one of them leaves an inquiry unanswered past its deadline, the rest of
// the run does not ask it again: each silent inquiry costs a whole
// deadline, and the items move to UNKNOWN all the same, to be asked about
// again on the next run.
type inquirer struct {
	s       *Service
	silent  map[bool]error // by bank (true) or card processor (false)
	skipped int            // inquiries not made, for an earlier silence
}

// ask asks the processor (or the bank) about q, with the processor
// deadline.
func (in *inquirer) ask(ctx context.Context, bank bool, q Inquiry) (InquiryResult, error) {
	if err := in.silent[bank]; err != nil {
		in.skipped++
		return InquiryResult{}, fmt.Errorf("not asked: an earlier inquiry of this run went unanswered: %w", err)
	}
	call, cancel := context.WithTimeout(ctx, in.s.cfg.ProcessorTimeout)
	defer cancel()
	var res InquiryResult
	var err error
	if bank {
		res, err = in.s.bank.Inquire(call, q)
	} else {
		res, err = in.s.processor.Inquire(call, q)
	}
	if answerLost(call, err) {
		in.silent[bank] = err
	}
	return res, err
}

// transactionInquiry is the inquiry about t's interrupted operation:
// a hold's capture or release, a debit's submission, or an authorisation.
func (s *Service) transactionInquiry(ctx context.Context, in *inquirer, t *Transaction) (InquiryResult, error) {
	switch {
	case t.Details.Pending != nil:
		return in.ask(ctx, false, holdInquiry(t))
	case t.PaymentType == PaymentTypeBankAccount:
		return in.ask(ctx, true, Inquiry{Kind: OpDebit, Reference: t.Reference})
	case interruptedHold(t):
		return s.unrecordedHoldOp(ctx, in, t)
	case t.PaymentType == PaymentTypeCard || t.PaymentType == PaymentTypeApplePay || t.PaymentType == PaymentTypeGooglePay:
		return in.ask(ctx, false, Inquiry{Kind: OpAuthorize, Reference: t.Reference})
	}
	return InquiryResult{}, errNoInquiry
}

// interruptedHold: a hold authorised earlier, so a capture or release was
// in flight.
func interruptedHold(t *Transaction) bool { return t.PreAuth && !t.ProcessedAt.IsZero() }

// errUnrecordedOp: the processor did a capture or void of a hold claimed
// without a PendingOp (before paylink recorded which operation was in
// flight), so its amounts are not known here.
var errUnrecordedOp = errors.New("the processor did an operation on this hold that was not recorded with its claim")

// unrecordedHoldOp asks about both a capture and a void of a hold claimed
// without a PendingOp: neither found means nothing happened; either found
// (or no answer) needs review.
func (s *Service) unrecordedHoldOp(ctx context.Context, in *inquirer, t *Transaction) (InquiryResult, error) {
	for _, k := range []OpKind{OpCapture, OpVoid} {
		res, err := in.ask(ctx, false, Inquiry{Kind: k, Reference: t.Reference})
		if err != nil {
			return InquiryResult{}, err
		}
		if res.Found {
			return InquiryResult{}, errUnrecordedOp
		}
	}
	return InquiryResult{}, nil
}

// recoverTransaction asks about t and records the answer (a hold's
// capture, cancel or expiry with its audit row, by the recovery job);
// false when another instance or the original call got there first, or
// when the processor still cannot say about an item already UNKNOWN.
func (s *Service) recoverTransaction(ctx context.Context, in *inquirer, t *Transaction) (bool, error) {
	res, err := s.transactionInquiry(ctx, in, t)
	if ctx.Err() != nil {
		return false, fmt.Errorf("recover %s: %w", t.Reference, ctx.Err()) // shutting down: not the processor's silence
	}
	if err != nil {
		return s.needsReview(ctx, t, err)
	}
	return s.recordAnswer(ctx, t, res, nil)
}

// recordAnswer records res, the processor's answer about t's interrupted
// operation, exactly as the interrupted call would have (a hold's capture,
// cancel or expiry with its audit row). also, when not nil, writes more
// in the same database transaction: an operator's resolution's rows.
func (s *Service) recordAnswer(ctx context.Context, t *Transaction, res InquiryResult, also func(Tx) error) (bool, error) {
	from, op := t.Status, ""
	switch {
	case !res.Found:
		return s.neverHappened(ctx, t, from, also)
	case t.Details.Pending != nil:
		op = t.Details.Pending.Op
		s.applyHoldOp(t, res.Op.AcquirerTransID)
	case t.PaymentType == PaymentTypeBankAccount:
		applySubmission(t, res.Submission, s.now())
	case res.Auth.Outcome == OutcomeChallenge:
		// The customer never saw the challenge: nothing was authorised.
		t.Status, t.ProcessedAt, t.UpdatedAt = StatusFailed, s.now(), s.now()
		t.Details.Message = "The interrupted payment was not authorised (the issuer asked for 3-D Secure authentication, never completed); no money was taken. Please try again."
	default:
		s.applyAuth(t, res.Auth, t.PreAuth)
	}
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := s.saveOutcome(tx, t, from, op); err != nil {
			return err
		}
		if err := s.auditHoldOp(ctx, tx, t, op, holdOpAmount(t, op), nil); err != nil { // a hold's capture, cancel or expiry, as the call would have
			return err
		}
		return writeAlso(tx, also)
	})
	return recovered(err, "recover "+t.Reference)
}

// neverHappened records that the processor never received t's operation:
// a hold is restored, anything else FAILED with no money taken (also as
// in recordAnswer).
func (s *Service) neverHappened(ctx context.Context, t *Transaction, from Status, also func(Tx) error) (bool, error) {
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := s.recordNeverHappened(tx, t, from); err != nil {
			return err
		}
		return writeAlso(tx, also)
	})
	return recovered(err, "recover "+t.Reference)
}

// recordNeverHappened is neverHappened's writes inside tx.
func (s *Service) recordNeverHappened(tx Tx, t *Transaction, from Status) error {
	if t.Details.Pending != nil || interruptedHold(t) {
		restoreHold(t)
		if err := s.save(tx, t, from); err != nil {
			return err
		}
		return s.recordEvent(tx, t.MerchantID, t.Reference, "transaction.claim.recovered", map[string]any{"version": t.Version})
	}
	t.Status, t.ProcessedAt, t.UpdatedAt = StatusFailed, s.now(), s.now()
	t.Details.Message = "The payment was interrupted before the processor received it; no money was taken. Please try again."
	return s.saveOutcome(tx, t, from, "")
}

// writeAlso runs also in tx when there is one.
func writeAlso(tx Tx, also func(Tx) error) error {
	if also == nil {
		return nil
	}
	return also(tx)
}

// msgNeedsReview is the message of an UNKNOWN transaction or refund.
const msgNeedsReview = "The payment processor has not confirmed what happened to this operation; it needs review. Its status changes when the processor answers (paylink keeps asking). Do not ship, retry or refund it until then."

// needsReview moves t to UNKNOWN when the processor cannot say (cause);
// an item already UNKNOWN stays as it is. No outcome, no webhook: nothing
// is claimed about the money.
func (s *Service) needsReview(ctx context.Context, t *Transaction, cause error) (bool, error) {
	s.logUnanswered(ctx, t.Reference, t.Status, cause)
	if t.Status == StatusUnknown {
		return false, nil
	}
	from := t.Status
	t.Status, t.UpdatedAt, t.Details.Message = StatusUnknown, s.now(), msgNeedsReview
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := s.save(tx, t, from); err != nil {
			return err
		}
		return s.recordEvent(tx, t.MerchantID, t.Reference, "transaction.needs_review", map[string]any{"version": t.Version})
	})
	return recovered(err, "mark "+t.Reference+" for review")
}

// logUnanswered logs an inquiry without an answer: an error when the
// item moves to UNKNOWN, a warning when it already is.
func (s *Service) logUnanswered(ctx context.Context, ref string, status Status, cause error) {
	level := slog.LevelError
	if status == StatusUnknown {
		level = slog.LevelWarn
	}
	s.log.Log(ctx, level, "the processor could not say what happened to an interrupted operation: it needs review",
		"reference", ref, "status", status, "err", cause)
}

// applySubmission moves a debit on as the bank lodged it: PENDING until
// it clears.
func applySubmission(t *Transaction, sub BankSubmission, now time.Time) {
	t.UpdatedAt, t.ProcessedAt = now, now
	t.Status, t.Details.AcquirerTransID = StatusPending, sub.TraceID
	t.Details.Message = "The direct debit was submitted and is pending clearing"
}

// recoverRefund asks about r and records the answer: approved, FAILED
// with its reservation released, or UNKNOWN with it kept.
func (s *Service) recoverRefund(ctx context.Context, in *inquirer, r *Refund) (bool, error) {
	var t *Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		t, err = tx.Transaction(r.MerchantID, r.TransactionReference)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("recover refund %s: %w", r.Reference, err)
	}
	bank := t.PaymentType == PaymentTypeBankAccount
	kind := OpRefund
	if bank {
		kind = OpDebitRefund
	}
	res, err := in.ask(ctx, bank, Inquiry{Kind: kind, Reference: t.Reference, OpReference: r.Reference})
	if ctx.Err() != nil {
		return false, fmt.Errorf("recover refund %s: %w", r.Reference, ctx.Err())
	}
	from := r.Status
	if err != nil {
		s.logUnanswered(ctx, r.Reference, r.Status, err)
		if r.Status == StatusUnknown {
			return false, nil
		}
		r.Status, r.Details.Message = StatusUnknown, msgNeedsReview
	} else {
		applyRefundAnswer(r, res, bank)
	}
	return s.saveRefundAnswer(ctx, t, r, from, nil)
}

// applyRefundAnswer moves r on as the processor (bank) answered an
// inquiry about it: FAILED when it never received the refund.
func applyRefundAnswer(r *Refund, res InquiryResult, bank bool) {
	switch {
	case !res.Found:
		r.Status = StatusFailed
		r.Details.Message = "The refund was interrupted before the processor received it; nothing was refunded. Please try again."
	case bank:
		applyBankRefund(r, res.Refund)
	default:
		r.Status, r.Details.Message = StatusApproved, "Refund processed successfully"
	}
}

// saveRefundAnswer records r, moved on from status from by an inquiry's
// answer, and also's rows (as in recordAnswer) in one transaction.
func (s *Service) saveRefundAnswer(ctx context.Context, t *Transaction, r *Refund, from Status, also func(Tx) error) (bool, error) {
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := s.recordRefund(ctx, tx, t, r, from); err != nil {
			return err
		}
		return writeAlso(tx, also)
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

// NeedsReview counts the transactions and refunds in UNKNOWN: operations
// whose outcome the processor has not confirmed. An integrator registers
// it as an alert gauge; anything above zero needs a person.
func (s *Service) NeedsReview(ctx context.Context) (int, error) {
	var n int
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		n, err = tx.CountInStatus(StatusUnknown)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count items needing review: %w", err)
	}
	return n, nil
}

// ReviewItems lists up to limit transactions and limit refunds in
// UNKNOWN, oldest first, in all merchants: what an operator settles with
// the processor (paylink review). Each stays UNKNOWN until an inquiry gets
// an answer; recovery keeps asking.
func (s *Service) ReviewItems(ctx context.Context, limit int) ([]*Transaction, []*Refund, error) {
	everything := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) // no cutoff
	var ts []*Transaction
	var rs []*Refund
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if ts, err = tx.TransactionsInStatus(StatusUnknown, everything, Position{}, limit); err != nil {
			return err
		}
		rs, err = tx.RefundsInStatus(StatusUnknown, everything, Position{}, limit)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list items needing review: %w", err)
	}
	return ts, rs, nil
}
