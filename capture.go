package paylink

import (
	"context"
	"errors"
	"fmt"
)

// CaptureRequest settles a pre-authorisation (spec 4.4).
type CaptureRequest struct {
	CompanyToken     string
	TransactionToken string
	Amount           int64 // sale amount to capture, excluding surcharge
	Currency         string
	ApplySurcharge   bool
	Metadata         map[string]string // channel, merchant_hash
}

// CancelRequest releases a pre-authorisation (spec 4.5).
type CancelRequest struct {
	CompanyToken     string
	TransactionToken string
	Metadata         map[string]string
}

// ExpiryBatch is how many expired holds one pass of ExpirePreAuths reads.
const ExpiryBatch = 100

var errInProgress = Errorf(KindConflict, CodeOperationInProgress,
	"another operation on this transaction is in progress; fetch its status and retry if needed")

// Capture settles a PRE_AUTHORISED hold for an amount up to the held
// amount; the rest of the hold is released. Only one capture per hold.
func (s *Service) Capture(ctx context.Context, m *Merchant, ref string, req CaptureRequest) (*Transaction, error) {
	if err := s.checkCaller(ctx, m, req.CompanyToken, PermCapture); err != nil {
		return nil, err
	}
	f := FieldErrors{}
	checkMoney(f, "capture", req.Amount, req.Currency)
	checkMetadata(f, req.Metadata)
	if err := f.Err(); err != nil {
		return nil, err
	}
	t, err := s.claimHold(ctx, m, ref, req.TransactionToken, "capture", PermCapture, func(t *Transaction) error {
		if !s.HoldActive(t) {
			return errHoldExpired
		}
		plan, err := planCapture(m, t, req)
		if err != nil {
			return err
		}
		addMetadata(t, req.Metadata)
		t.Details.Pending = &PendingOp{Op: opCapture, Amount: plan.amount, Surcharge: plan.surcharge,
			SurchargeRate: plan.rate, ApplySurcharge: req.ApplySurcharge}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.settleHold(ctx, t, tokenOf(ctx, m, req.TransactionToken, PermCapture))
}

// HoldActive reports whether a PRE_AUTHORISED hold can still be captured
// or cancelled: it is not past Config.PreAuthExpiry, by the same clock
// and column as the preauth-expiry job (its last change), which releases
// it within a minute. A capture re-checks it, so an overdue hold is never
// captured in the meantime; the dashboard offers a hold's Capture and
// Cancel only while it is true. A transaction in any other status is
// not an active hold.
func (s *Service) HoldActive(t *Transaction) bool {
	return t.Status == StatusPreAuthorised && !t.UpdatedAt.Before(s.now().Add(-s.cfg.PreAuthExpiry))
}

var errHoldExpired = Errorf(KindConflict, CodeHoldReleased,
	"this hold has expired and its funds are being released; nothing was captured")

// Operations on a claimed hold (PendingOp.Op).
const (
	opCapture = "capture"
	opCancel  = "cancel"
	opExpire  = "expire"
)

// capturePlan is the money of a capture, checked against the hold.
type capturePlan struct {
	amount, surcharge int64
	rate              Percent
}

// planCapture checks the currency and that the captured total (amount
// plus any surcharge) is within the held amount. The surcharge uses the
// rate the purchase used, or the merchant's rate for the card.
func planCapture(m *Merchant, t *Transaction, req CaptureRequest) (capturePlan, error) {
	if req.Currency != t.Currency {
		return capturePlan{}, Errorf(KindInvalid, CodeCurrencyMismatch, "capture.currency must be the hold's currency %s", t.Currency)
	}
	p := capturePlan{amount: req.Amount}
	if req.ApplySurcharge {
		p.rate, p.surcharge = t.Details.SurchargeRate, t.Details.SurchargeRate.Apply(req.Amount)
		if !t.Details.ApplySurcharge && t.Details.Card != nil {
			p.rate, p.surcharge = m.Settings.Surcharge.quoteIn(*t.Details.Card, t.Details.RegionClass, req.Amount)
		}
	}
	if p.amount+p.surcharge > t.PreAuthAmount {
		return capturePlan{}, Errorf(KindInvalid, CodeAmountExceedsAuthorised,
			"the capture total %s %s (amount plus surcharge) is above the pre-authorised amount %s %s; nothing was captured",
			FormatIn(p.amount+p.surcharge, t.Currency), t.Currency, FormatIn(t.PreAuthAmount, t.Currency), t.Currency)
	}
	return p, nil
}

// Cancel releases a PRE_AUTHORISED hold: status PRE_AUTHORISED_REVERSED.
func (s *Service) Cancel(ctx context.Context, m *Merchant, ref string, req CancelRequest) (*Transaction, error) {
	if err := s.checkCaller(ctx, m, req.CompanyToken, PermCancel); err != nil {
		return nil, err
	}
	f := FieldErrors{}
	checkMetadata(f, req.Metadata)
	if err := f.Err(); err != nil {
		return nil, err
	}
	t, err := s.claimHold(ctx, m, ref, req.TransactionToken, opCancel, PermCancel, func(t *Transaction) error {
		addMetadata(t, req.Metadata)
		t.Details.Pending = &PendingOp{Op: opCancel, Message: "The hold was cancelled and the funds released; no money was taken"}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.settleHold(ctx, t, tokenOf(ctx, m, req.TransactionToken, PermCancel))
}

// ExpirePreAuths cancels the holds that have been PRE_AUTHORISED for
// longer than Config.PreAuthExpiry, by the service clock, ExpiryBatch at
// a time until none is left, and returns how many it released. Each hold
// is claimed with a compare-and-set, so several instances running it
// release each hold once. A hold the processor does not release stays
// PRE_AUTHORISED, unchanged, for the next run; each pass starts after the
// last hold the one before it read, so such a hold (it stays the oldest)
// never holds up the others.
func (s *Service) ExpirePreAuths(ctx context.Context) (int, error) {
	var after Position
	return walk(ctx, ExpiryBatch, func(ctx context.Context) (int, int, error) { return s.expirePreAuthBatch(ctx, &after) })
}

// expirePreAuthBatch releases up to ExpiryBatch expired holds after the
// position after, moves after to the last one it read, and says how many
// it read and released. A hold the processor does not release is logged
// and skipped.
func (s *Service) expirePreAuthBatch(ctx context.Context, after *Position) (read, released int, err error) {
	var due []*Transaction
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		due, err = tx.TransactionsInStatus(StatusPreAuthorised, s.now().Add(-s.cfg.PreAuthExpiry), *after, ExpiryBatch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("list expired holds: %w", err)
	}
	for _, t := range due {
		*after = t.position()
		ok, err := s.expireHold(ctx, t)
		if err != nil {
			return len(due), released, err
		}
		if ok {
			released++
		}
	}
	return len(due), released, nil
}

// expireHold claims an expired hold and releases it; false when another
// instance or a capture or cancel got it first, when the processor did
// not release it (the hold is then restored, and the next run tries
// again), or when its answer was lost (the hold waits PROCESSING for the
// recovery job's inquiry).
func (s *Service) expireHold(ctx context.Context, t *Transaction) (bool, error) {
	t.Details.Pending = &PendingOp{Op: opExpire, Message: "The hold expired and was released automatically; no money was taken"}
	err := s.store.Update(ctx, func(tx Tx) error { return s.claim(tx, t, opExpire) })
	if errors.Is(err, errInProgress) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim expired hold %s: %w", t.Reference, err)
	}
	settled, err := s.settleHold(ctx, t, "")
	var e *Error
	if errors.As(err, &e) && e.Code == CodeProcessorUnavailable {
		s.log.WarnContext(ctx, "expired hold not released: the next run tries again", "reference", t.Reference, "err", err)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("release expired hold %s: %w", t.Reference, err)
	}
	return settled.Status == StatusPreAuthorisedReversed, nil
}

// claimHold, in one database transaction, spends the transaction token
// (a dashboard action's staff authority for p stands in for it), loads the merchant's hold, runs check on it and claims it (see claim).
// A failed check or claim rolls everything back, the token included.
func (s *Service) claimHold(ctx context.Context, m *Merchant, ref, token, op string, p Permission, check func(*Transaction) error) (*Transaction, error) {
	var t *Transaction
	err := s.updateSpending(ctx, m, tokenOf(ctx, m, token, p), ref, func(tx Tx) error {
		if err := s.spendToken(ctx, tx, m, token, p, ref); err != nil {
			return err
		}
		var err error
		if t, err = tx.Transaction(m.ID, ref); errors.Is(err, ErrNotFound) {
			return errNoSuchPurchase
		} else if err != nil {
			return err
		}
		if err := holdState(t); err != nil {
			return err
		}
		if err := check(t); err != nil {
			return err
		}
		return s.claim(tx, t, op)
	})
	if err != nil {
		return nil, asServiceError(op, err)
	}
	return t, nil
}

// holdState explains why a transaction cannot be captured or cancelled.
func holdState(t *Transaction) error {
	switch {
	case t.Status == StatusPreAuthorised:
		return nil
	case t.Status == StatusProcessing:
		return errInProgress
	case t.Status == StatusApproved && t.PreAuth:
		return Errorf(KindConflict, CodeAlreadyCaptured, "this hold has already been captured; a hold is captured once")
	case t.Status == StatusPreAuthorisedReversed:
		return Errorf(KindConflict, CodeHoldReleased, "this hold was cancelled or expired and its funds released")
	}
	return Errorf(KindConflict, CodeInvalidState, "only a PRE_AUTHORISED transaction can be captured or cancelled; this one is %s", t.Status.Public())
}

// claim moves t to PROCESSING with a compare-and-set on its version, so
// that of racing operations exactly one wins; the others get
// errInProgress. It records a history event, not an outcome: PROCESSING
// is not a result.
func (s *Service) claim(tx Tx, t *Transaction, op string) error {
	if !CanTransition(t.Status, StatusProcessing) {
		return holdState(t)
	}
	from := t.Status
	t.Status, t.UpdatedAt = StatusProcessing, s.now()
	if err := s.save(tx, t, from); errors.Is(err, ErrConflict) {
		return errInProgress
	} else if err != nil {
		return err
	}
	return s.recordEvent(tx, t.MerchantID, t.Reference, "transaction."+op+".claimed", map[string]any{"version": t.Version})
}

// settleHold asks the processor to do a claimed hold's pending operation
// (capture or void), outside any database transaction, then records the
// answer with a compare-and-set: the operation's outcome, or, on a
// processor error, the hold restored unchanged, the transaction token the
// operation spent given back (token; "" for none), and an error for the
// caller, who may then retry the request unchanged. When the answer is lost (deadline) the hold stays PROCESSING
// for recovery's inquiry.
func (s *Service) settleHold(ctx context.Context, t *Transaction, token string) (*Transaction, error) {
	op := t.Details.Pending.Op
	ctx, call, cancel := s.callContext(ctx, t.UpdatedAt)
	defer cancel()
	res, perr := ask(call, s.holdCall, t)
	if answerLost(call, perr) {
		return s.awaitInquiry(ctx, t, op, perr), nil
	}
	if perr == nil {
		s.applyHoldOp(t, res.AcquirerTransID)
		return s.recordOutcome(ctx, t, op)
	}
	s.log.ErrorContext(ctx, "processor error", "op", op, "reference", t.Reference, "err", perr)
	asked := holdOpAmount(t, op)
	restoreHold(t)
	err := s.store.Update(ctx, func(tx Tx) error {
		if err := s.save(tx, t, StatusProcessing); err != nil {
			return err
		}
		if err := s.releaseToken(tx, t.MerchantID, token, t.Reference); err != nil {
			return err
		}
		if err := s.auditHoldOp(ctx, tx, t, op, asked, perr); err != nil {
			return err
		}
		return s.recordEvent(tx, t.MerchantID, t.Reference, "transaction."+op+".failed", map[string]any{"version": t.Version})
	})
	if errors.Is(err, ErrConflict) {
		return s.lateTransaction(ctx, t, op)
	}
	if err != nil {
		return nil, Internal("record "+op, err)
	}
	return nil, &Error{Kind: KindUnavailable, Code: CodeProcessorUnavailable, Op: op, Err: perr,
		Message: "the payment processor could not be reached; the hold is unchanged, try again"}
}

// holdCall sends a claimed hold's pending operation to the processor.
func (s *Service) holdCall(ctx context.Context, t *Transaction) (OpResult, error) {
	p := t.Details.Pending
	cur, _ := LookupCurrency(t.Currency)
	req := OpRequest{Reference: t.Reference, AcquirerTransID: t.Details.AcquirerTransID,
		Amount: Money{Amount: t.PreAuthAmount, Currency: cur}}
	if p.Op == opCapture {
		req.Amount.Amount = p.Amount + p.Surcharge
		return s.processor.Capture(ctx, req)
	}
	return s.processor.Void(ctx, req)
}

// holdInquiry is the inquiry about a claimed hold's pending operation.
func holdInquiry(t *Transaction) Inquiry {
	if t.Details.Pending.Op == opCapture {
		return Inquiry{Kind: OpCapture, Reference: t.Reference}
	}
	return Inquiry{Kind: OpVoid, Reference: t.Reference}
}

// applyHoldOp moves a claimed hold on as its pending operation did at the
// processor (acquirerID is the processor's id of it): captured, or
// released. The normal path and recovery both use it.
func (s *Service) applyHoldOp(t *Transaction, acquirerID string) {
	p := t.Details.Pending
	if p.Op == opCapture {
		t.Status, t.Amount, t.Surcharge, t.Total = StatusApproved, p.Amount, p.Surcharge, p.Amount+p.Surcharge
		t.Details.SurchargeRate, t.Details.ApplySurcharge = p.SurchargeRate, p.ApplySurcharge
		t.Details.Message = "Transaction processed successfully: the hold was captured"
	} else {
		t.Status, t.Details.Message = StatusPreAuthorisedReversed, p.Message
	}
	now := s.now()
	t.UpdatedAt, t.ProcessedAt = now, now
	t.Details.Extra = withEntry(t.Details.Extra, p.Op+"_acquirer_trans_id", acquirerID)
	t.Details.Pending = nil
}

// restoreHold puts a claimed hold back unchanged, its expiry clock too:
// its operation did not happen.
func restoreHold(t *Transaction) {
	t.Status, t.UpdatedAt, t.Details.Pending = StatusPreAuthorised, t.ProcessedAt, nil
}

// addMetadata keeps the optional metadata of a follow-up call.
func addMetadata(t *Transaction, md map[string]string) {
	for k, v := range md {
		t.Details.Metadata = withEntry(t.Details.Metadata, k, v)
	}
}

// withEntry sets m[k] = v, allocating m when needed.
func withEntry(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// auditHoldOp writes the audit row of a capture, cancel or expiry of a
// hold ("transaction."+op) with its outcome and the amount it moved
// (holdOpAmount), inside the transaction that records it: a failure when
// the processor refused it (perr), else the status it left the hold in.
// Other operations write none.
func (s *Service) auditHoldOp(ctx context.Context, tx Tx, t *Transaction, op string, amount int64, perr error) error {
	var action string
	switch op {
	case opCapture:
		action = AuditCapture
	case opCancel:
		action = AuditCancel
	case opExpire:
		action = AuditExpire
	default:
		return nil
	}
	e := AuditEvent{MerchantID: t.MerchantID, Action: action, ObjectType: ObjectTransaction,
		ObjectID: t.Reference, Outcome: OutcomeSuccess, Detail: auditMoney(string(t.Status), amount, t.Currency)}
	if perr != nil {
		e.Outcome, e.Detail = OutcomeFailure, auditMoney(CodeProcessorUnavailable, amount, t.Currency)
	}
	return s.audit(ctx, tx, e)
}

// holdOpAmount is the money a hold operation op moves: a capture's
// total, surcharge included (asked while the capture is pending, as
// captured once applied); the hold's amount for a cancel or expiry.
func holdOpAmount(t *Transaction, op string) int64 {
	if op != opCapture {
		return t.PreAuthAmount
	}
	if p := t.Details.Pending; p != nil {
		return p.Amount + p.Surcharge
	}
	return t.Total
}
