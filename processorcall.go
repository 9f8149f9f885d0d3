package paylink

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// DefaultProcessorTimeout is the deadline of one processor or bank call
// when Config.ProcessorTimeout is not set.
const DefaultProcessorTimeout = 30 * time.Second

// MaxProcessorTimeout is the longest deadline a processor call may have:
// half the recovery threshold, so that every call has ended (answered or
// abandoned) long before recovery asks the processor about its item, even
// with some delay between the claim and the call and some clock skew
// between instances.
const MaxProcessorTimeout = ProcessingTimeout / 2

// CallWindow is how long after its item was claimed a processor call
// may still run: recovery asks the processor about an item
// ProcessingTimeout after its claim, and the call must be over by then,
// with a quarter of that left for recording its answer and for the
// instances' clocks.
const CallWindow = ProcessingTimeout * 3 / 4

// callContext returns the contexts of one processor call about an item
// claimed (made PROCESSING) at claimed: detached, for recording the
// answer, is free of the caller's cancellation, because a client that
// disconnects must not leave a call half-done with its answer
// unrecorded; call adds the processor deadline, cut short to end within
// CallWindow of the claim, so that the call is over before recovery
// looks at its item however long the claim's commit took (a claim that
// committed after the window has ended makes no call at all, ask, and
// its operation is recorded as not done). cancel stops the deadline's
// timer.
func (s *Service) callContext(ctx context.Context, claimed time.Time) (detached, call context.Context, cancel context.CancelFunc) {
	detached = context.WithoutCancel(ctx)
	timeout := min(s.cfg.ProcessorTimeout, claimed.Add(CallWindow).Sub(s.now()))
	call, cancel = context.WithTimeout(detached, timeout)
	return detached, call, cancel
}

// errNotSent answers a call not made (ask): its item's claim committed
// after CallWindow had ended, so nothing was sent, and the operation is
// recorded as not done at once, as after a processor's refusal.
var errNotSent = errors.New("the operation's claim committed after the window its processor call must end in: nothing was sent to the processor")

// ask makes a processor or bank call, op(call, req), unless call's
// window (callContext) ended before it: then nothing is sent, whatever
// op would do with a done context, and the answer is errNotSent. Every
// call of the Service about a claimed item goes through it.
func ask[Q, R any](call context.Context, op func(context.Context, Q) (R, error), req Q) (R, error) {
	if call.Err() != nil {
		var none R
		return none, errNotSent
	}
	return op(call, req)
}

// ErrOutcomeUnknown is what a Processor or BankProcessor returns (wrapped)
// when it cannot tell whether an operation happened: a network timeout or
// a dropped connection after the request was sent. Like the call's own
// deadline, it leaves the item for recovery's inquiry instead of recording
// that nothing happened.
var ErrOutcomeUnknown = errors.New("the processor's answer was lost: the operation may or may not have happened")

// answerLost reports whether a processor call ended without an answer:
// its deadline passed, or the processor says it cannot tell. The
// processor may or may not have done the operation, so nothing may be
// recorded as done or as not done. The item stays PROCESSING and recovery
// asks the processor (Inquire).
func answerLost(callCtx context.Context, err error) bool {
	if err == nil || errors.Is(err, errNotSent) {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOutcomeUnknown) || callCtx.Err() != nil
}

// msgAwaitingInquiry is what a client is told when the processor's answer
// was lost.
const msgAwaitingInquiry = "The payment processor did not answer in time. The outcome is not known yet: paylink asks the processor within a few minutes and records its answer (check the status, or wait for the webhook). Do not retry until then."

// awaitInquiry leaves t PROCESSING after a lost answer, logged, and
// returns it for the client: status PENDING, outcome to follow.
func (s *Service) awaitInquiry(ctx context.Context, t *Transaction, op string, err error) *Transaction {
	s.log.WarnContext(ctx, "processor answer lost: the recovery job will ask the processor", "op", op, "reference", t.Reference, "err", err)
	t.Details.Message = msgAwaitingInquiry
	return t
}

// lateTransaction handles a compare-and-set conflict when recording a
// processor's answer for t: recovery (or another instance) moved t first,
// from the processor's answer to an inquiry, and that state stands. The
// late answer is logged (as an error when it disagrees, for review) and
// the stored transaction returned: no 500, no money moved twice.
func (s *Service) lateTransaction(ctx context.Context, t *Transaction, op string) (*Transaction, error) {
	var cur *Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		cur, err = tx.Transaction(t.MerchantID, t.Reference)
		return err
	})
	if err != nil {
		return nil, Internal("reload "+op, err)
	}
	s.logLate(ctx, op, t.Reference, t.Status, cur.Status)
	return cur, nil
}

// lateRefund is lateTransaction for a refund.
func (s *Service) lateRefund(ctx context.Context, r *Refund) (*Refund, error) {
	var cur *Refund
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		cur, err = tx.Refund(r.MerchantID, r.Reference)
		return err
	})
	if err != nil {
		return nil, Internal("reload refund", err)
	}
	s.logLate(ctx, "refund", r.Reference, r.Status, cur.Status)
	return cur, nil
}

// unrecordedRefund answers a refund whose outcome met an error on its
// way to the database. The refund was reserved (and its token spent) in
// an earlier commit, so it exists: when the database was unreachable
// (err wraps ErrUnavailable), the outcome's commit may have gone through
// with only its answer lost, and the refund read again then shows it;
// otherwise it is still PROCESSING, and the recovery job asks the
// processor and records its answer. Either way the client learns what is
// known, where a 503 would invite a retry that its spent token refuses
// (and a new token would refund twice). Any other error is internal.
func (s *Service) unrecordedRefund(ctx context.Context, r *Refund, op string, err error) (*Refund, error) {
	if !errors.Is(err, ErrUnavailable) {
		return nil, Internal(op, err)
	}
	var stored *Refund
	rerr := s.store.View(ctx, func(tx Tx) error {
		var err error
		stored, err = tx.Refund(r.MerchantID, r.Reference)
		return err
	})
	if rerr == nil && stored.Status == r.Status {
		s.log.WarnContext(ctx, "the database's answer to a commit was lost, and the refund had committed", "reference", r.Reference, "err", err)
		return r, nil
	}
	s.log.WarnContext(ctx, "the refund's outcome could not be recorded: the recovery job will ask the processor", "reference", r.Reference, "err", err)
	r.Status, r.Details.Message = StatusProcessing, msgOutcomeUnrecorded
	return r, nil
}

// msgOutcomeUnrecorded is the message of a refund whose processor (or
// bank) answer could not be written for an unreachable database.
const msgOutcomeUnrecorded = "The refund's outcome could not be recorded yet. paylink asks the payment processor (or bank) within a few minutes and records its answer (look the refund up). Do not retry until then."

// logLate records a processor answer that arrived after its item moved.
func (s *Service) logLate(ctx context.Context, op, ref string, answered, recorded Status) {
	level, msg := slog.LevelWarn, "processor answer arrived after recovery recorded the processor's inquiry answer; kept the recorded state"
	if answered != recorded {
		level, msg = slog.LevelError, "processor answer disagrees with the state recovery recorded: review this item with the processor"
	}
	s.log.Log(ctx, level, msg, "op", op, "reference", ref, "answered", answered, "recorded", recorded)
}
