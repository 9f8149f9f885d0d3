package paylink

import (
	"context"
	"errors"
	"fmt"
)

// RefundRequest returns part or all of a captured payment (spec 4.7).
type RefundRequest struct {
	CompanyToken     string
	TransactionToken string
	Customer         Customer
	InvoiceNumber    string
	Amount           int64
	Currency         string
	Metadata         map[string]string
}

// validate checks the rules of a refund request that need no database.
func (r *RefundRequest) validate() error {
	f := FieldErrors{}
	checkMoneyUpTo(f, "refund", r.Amount, r.Currency, MaxTotal)
	checkCustomer(f, r.Customer)
	checkInvoice(f, "refund.invoice_number", r.InvoiceNumber)
	checkMetadata(f, r.Metadata)
	return f.Err()
}

// Refund refunds amount of an APPROVED transaction. Several partial
// refunds are allowed; their sum never exceeds the captured total, which
// the store enforces with a guarded update, so concurrent refunds cannot
// overdraw it. The refund is reserved before the processor is asked and
// released again if the processor cannot be reached. A dashboard refund
// carries staff authority (StaffContext) in place of the two tokens.
func (s *Service) Refund(ctx context.Context, m *Merchant, ref string, req RefundRequest) (*Refund, *Transaction, error) {
	if err := s.checkCaller(ctx, m, req.CompanyToken, PermRefund); err != nil {
		return nil, nil, err
	}
	if err := req.validate(); err != nil {
		return nil, nil, err
	}
	refundRef, err := s.reference("rf_")
	if err != nil {
		return nil, nil, Internal("refund reference", err)
	}
	r := &Refund{Reference: refundRef, MerchantID: m.ID, InvoiceNumber: req.InvoiceNumber, Status: StatusProcessing,
		Currency: req.Currency, Amount: req.Amount, CreatedAt: s.now(),
		Details: RefundDetails{Customer: req.Customer, Metadata: req.Metadata}}
	var t *Transaction
	err = s.updateSpending(ctx, m, tokenOf(ctx, m, req.TransactionToken, PermRefund), r.Reference, func(tx Tx) error {
		if err := s.spendToken(ctx, tx, m, req.TransactionToken, PermRefund, r.Reference); err != nil {
			return err
		}
		var err error
		if t, err = s.reserveRefund(tx, m, ref, r); err != nil {
			return err
		}
		if err := tx.CreateRefund(r); err != nil {
			return err
		}
		return s.recordEvent(tx, m.ID, r.Reference, "refund.claimed", map[string]any{"purchase_reference": t.Reference, "amount": r.Amount})
	})
	if err != nil {
		return nil, nil, asServiceError("refund", err)
	}
	r, err = s.settleRefund(ctx, t, r)
	return r, t, err
}

// reserveRefund loads the refunded card payment and reserves r on it
// (reserve). A direct debit is refunded by RefundDirectDebit.
func (s *Service) reserveRefund(tx Tx, m *Merchant, ref string, r *Refund) (*Transaction, error) {
	t, err := tx.Transaction(m.ID, ref)
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchPurchase
	}
	if err != nil {
		return nil, err
	}
	if t.PaymentType == PaymentTypeBankAccount {
		return nil, Errorf(KindInvalid, CodeInvalidRequest,
			"this transaction is a direct debit: refund it with POST /v5/direct_debit/{purchase_reference}/refund")
	}
	r.TransactionReference = t.Reference
	return t, reserve(tx, t, r)
}

// reserve adds refund r to payment t's refunded total, the one rule of
// card and direct debit refunds: only an APPROVED payment (captured or
// cleared), in its own currency, and at most what is left to refund, which
// the store enforces with a guarded update so that concurrent refunds
// cannot overdraw it. A payment still being processed (a capture in
// flight, an authorisation not yet answered) is an operation in progress,
// retryable, not a refusal.
func reserve(tx Tx, t *Transaction, r *Refund) error {
	if t.Status == StatusProcessing {
		return errInProgress
	}
	if t.Status != StatusApproved {
		return Errorf(KindConflict, CodeNotRefundable,
			"only an APPROVED (captured or cleared) payment can be refunded; this one is %s", t.Status.Public())
	}
	if r.Currency != t.Currency {
		return Errorf(KindInvalid, CodeCurrencyMismatch, "refund.currency must be the purchase's currency %s", t.Currency)
	}
	err := tx.AddRefunded(t.Reference, r.Amount, r.CreatedAt)
	if errors.Is(err, ErrConflict) {
		return &Error{Kind: KindInvalid, Code: CodeAmountExceedsRefundable,
			Message: fmt.Sprintf("the refund amount is above what can still be refunded (%s %s of %s %s)",
				FormatIn(t.Refundable(), t.Currency), t.Currency, FormatIn(t.Total, t.Currency), t.Currency),
			Fields: map[string]string{"refund.amount": "is more than the amount left to refund"}}
	}
	if err != nil {
		return err
	}
	t.Refunded += r.Amount
	return nil
}

// settleRefund asks the processor for a reserved refund, outside any
// database transaction, and records the answer: APPROVED, or FAILED with
// the reservation released.
func (s *Service) settleRefund(ctx context.Context, t *Transaction, r *Refund) (*Refund, error) {
	cur, _ := LookupCurrency(r.Currency)
	ctx, call, cancel := s.callContext(ctx, r.CreatedAt)
	defer cancel()
	_, perr := ask(call, s.processor.Refund, OpRequest{Reference: t.Reference, AcquirerTransID: t.Details.AcquirerTransID,
		OpReference: r.Reference, Amount: Money{Amount: r.Amount, Currency: cur}})
	if answerLost(call, perr) {
		s.log.WarnContext(ctx, "processor answer lost: the recovery job will ask the processor", "op", "refund", "reference", r.Reference, "err", perr)
		r.Details.Message = msgAwaitingInquiry
		return r, nil
	}
	r.Status, r.Details.Message = StatusApproved, "Refund processed successfully"
	if perr != nil {
		s.log.ErrorContext(ctx, "processor error", "op", "refund", "reference", r.Reference, "err", perr)
		r.Status, r.Details.Message = StatusFailed, "The refund could not be processed because the payment processor could not be reached; nothing was refunded, try again"
	}
	err := s.store.Update(ctx, func(tx Tx) error { return s.recordRefund(ctx, tx, t, r, StatusProcessing) })
	if errors.Is(err, ErrConflict) {
		return s.lateRefund(ctx, r)
	}
	if err != nil {
		if r, err = s.unrecordedRefund(ctx, r, "record refund", err); err != nil {
			return nil, err
		}
	}
	if r.Status == StatusFailed {
		t.Refunded -= r.Amount
	}
	return r, nil
}

// recordRefund saves r, moved on from status from, inside tx, and posts
// it once approved: a FAILED refund gives its reservation back, and the
// audit log gets the refund with its outcome. Card and direct debit
// refunds, the normal path and recovery all record through it.
func (s *Service) recordRefund(ctx context.Context, tx Tx, t *Transaction, r *Refund, from Status) error {
	if err := s.saveRefund(tx, t, r, from); err != nil {
		return err
	}
	if r.Status == StatusFailed {
		if err := tx.ReleaseRefunded(t.Reference, r.Amount, s.now()); err != nil {
			return err
		}
	}
	if err := s.auditRefund(ctx, tx, r); err != nil {
		return err
	}
	status := r.Status
	onCommit(tx, func() { s.observer.RefundOutcome(t.PaymentType, status) })
	if t.PaymentType == PaymentTypeBankAccount {
		return s.refundEvent(tx, r)
	}
	return s.refundOutcome(tx, t, r)
}

// refundOutcome records a card refund's result in its history, in the
// same database transaction as the refund.
func (s *Service) refundOutcome(tx Tx, t *Transaction, r *Refund) error {
	return s.recordEvent(tx, r.MerchantID, r.Reference, "refund."+string(r.Status), map[string]any{
		"purchase_reference": t.Reference, "status": r.Status, "amount": r.Amount, "currency": r.Currency,
	})
}

// auditRefund records a settled refund (card or direct debit) in the
// audit log, with its amount: success when APPROVED, failure otherwise.
func (s *Service) auditRefund(ctx context.Context, tx Tx, r *Refund) error {
	e := AuditEvent{MerchantID: r.MerchantID, Action: AuditRefund, ObjectType: ObjectRefund, ObjectID: r.Reference,
		Outcome: OutcomeSuccess, Detail: auditMoney(string(r.Status), r.Amount, r.Currency)}
	if r.Status != StatusApproved {
		e.Outcome = OutcomeFailure
	}
	return s.audit(ctx, tx, e)
}

var errNoSuchRefund = Errorf(KindNotFound, CodeNotFound, "no refund with that refund reference, invoice number or purchase reference")

// RefundStatus finds a refund of m by refund reference, or else the newest
// with that refund invoice number, purchase reference or purchase invoice
// number, in that order (spec 4.8; Tx.RefundByInvoice).
func (s *Service) RefundStatus(ctx context.Context, m *Merchant, ref string) (*Refund, error) {
	if !lookupRef(ref) {
		return nil, errNoSuchRefund
	}
	var r *Refund
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		r, err = tx.Refund(m.ID, ref)
		if errors.Is(err, ErrNotFound) {
			r, err = tx.RefundByInvoice(m.ID, ref)
		}
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchRefund
	}
	if err != nil {
		return nil, Internal("refund status", err)
	}
	return r, nil
}
