package paylink

import (
	"context"
	"errors"
)

// validateDebitRefund checks the rules of a direct debit refund that
// need no database: those of any refund, in AUD.
func validateDebitRefund(r *RefundRequest) error {
	f := FieldErrors{}
	checkDebitMoney(f, "refund", r.Amount, r.Currency, MaxTotal)
	checkInvoice(f, "refund.invoice_number", r.InvoiceNumber)
	checkCustomer(f, r.Customer)
	checkMetadata(f, r.Metadata)
	return f.Err()
}

// errNoSuchDirectDebit answers a direct debit refund whose reference
// names no direct debit: it takes the purchase_reference, as the card
// calls do (errNoSuchPurchase), and a card payment is refunded elsewhere.
var errNoSuchDirectDebit = Errorf(KindNotFound, CodeNotFound,
	"no direct debit with that purchase reference (this call takes the purchase_reference paylink answered with, not an invoice number; "+
		"card purchases are refunded with POST /v5/purchase/{purchase_reference}/refund)")

// RefundDirectDebit refunds a cleared (APPROVED) direct debit. The amount
// is reserved first, atomically with the transaction token, so that the
// refunded total never exceeds the debited total even under concurrent
// refunds; the bank is then asked outside any database transaction, and
// a rejected refund releases its reservation. A rejection is a result
// (refund status FAILED), not an error. It returns the refund and the
// debit it refunds.
func (s *Service) RefundDirectDebit(ctx context.Context, m *Merchant, ref string, req RefundRequest) (*Refund, *Transaction, error) {
	if err := s.checkCaller(ctx, m, req.CompanyToken, PermRefund); err != nil {
		return nil, nil, err
	}
	if err := validateDebitRefund(&req); err != nil {
		return nil, nil, err
	}
	refundRef, err := s.reference("rf_")
	if err != nil {
		return nil, nil, Internal("direct debit refund", err)
	}
	r := &Refund{
		Reference: refundRef, MerchantID: m.ID, TransactionReference: ref, InvoiceNumber: req.InvoiceNumber,
		Status: StatusProcessing, Currency: DirectDebitCurrency, Amount: req.Amount, CreatedAt: s.now(),
		Details: RefundDetails{Customer: req.Customer, Metadata: req.Metadata},
	}
	var t *Transaction
	err = s.updateSpending(ctx, m, tokenOf(ctx, m, req.TransactionToken, PermRefund), r.Reference, func(tx Tx) error {
		if err := s.spendToken(ctx, tx, m, req.TransactionToken, PermRefund, r.Reference); err != nil {
			return err
		}
		var err error
		if t, err = reserveDebitRefund(tx, m, r); err != nil {
			return err
		}
		if err := tx.CreateRefund(r); err != nil {
			return err
		}
		return s.refundEvent(tx, r)
	})
	if err != nil {
		return nil, nil, asServiceError("direct debit refund", err)
	}
	if r, err = s.payRefund(ctx, t, r); err != nil {
		return nil, nil, err
	}
	return r, t, nil
}

// reserveDebitRefund checks that r names m's direct debit and reserves
// r on it (reserve).
func reserveDebitRefund(tx Tx, m *Merchant, r *Refund) (*Transaction, error) {
	t, err := tx.Transaction(m.ID, r.TransactionReference)
	if errors.Is(err, ErrNotFound) || (err == nil && t.PaymentType != PaymentTypeBankAccount) {
		return nil, errNoSuchDirectDebit
	}
	if err != nil {
		return nil, err
	}
	return t, reserve(tx, t, r)
}

// payRefund asks the bank to pay a reserved refund, outside any database
// transaction, and records APPROVED, or FAILED with the reservation
// released.
func (s *Service) payRefund(ctx context.Context, t *Transaction, r *Refund) (*Refund, error) {
	number, err := s.vault.Open(t.Secret, debitBinding(t))
	if err != nil {
		return nil, Internal("open account number", err)
	}
	debit := debitOf(t, string(number))
	ctx, call, cancel := s.callContext(ctx, r.CreatedAt)
	defer cancel()
	res, err := ask(call, s.bank.RefundDebit, BankRefund{Reference: r.Reference, DebitReference: t.Reference,
		Account: debit.Account, Amount: Money{Amount: r.Amount, Currency: debit.Amount.Currency},
		DebitAcquirerID: t.Details.AcquirerTransID})
	if answerLost(call, err) {
		s.log.WarnContext(ctx, "bank answer lost: the recovery job will ask the bank", "op", "debit refund", "reference", r.Reference, "err", err)
		r.Details.Message = msgAwaitingInquiry
		return r, nil
	}
	if err != nil { // not sent, or refused unsent: not the bank's rejection
		s.log.ErrorContext(ctx, "bank error on refund", "reference", r.Reference, "err", err)
		r.Status, r.Details.Message = StatusFailed, "The refund could not be sent because the bank could not be reached; nothing was refunded, try again"
	} else {
		applyBankRefund(r, res)
	}
	err = s.store.Update(ctx, func(tx Tx) error { return s.recordRefund(ctx, tx, t, r, StatusProcessing) })
	if errors.Is(err, ErrConflict) {
		return s.lateRefund(ctx, r)
	}
	if err != nil {
		return s.unrecordedRefund(ctx, r, "record direct debit refund", err)
	}
	return r, nil
}

// applyBankRefund moves r on as the bank answered: accepted, or rejected
// (FAILED, with the bank's reason).
func applyBankRefund(r *Refund, res BankRefundResult) {
	r.Status, r.Details.Message = StatusApproved, "The refund was accepted by the bank"
	if !res.Accepted {
		r.Status = StatusFailed
		r.Details.Message = "The bank rejected the refund; nothing was refunded"
		if res.Reason != nil {
			r.Details.Message += ": " + res.Reason.ProcessorMessage
		}
	}
}

// refundEvent records a refund's state in its history (the events table).
func (s *Service) refundEvent(tx Tx, r *Refund) error {
	return s.recordEvent(tx, r.MerchantID, r.TransactionReference, "refund."+string(r.Status), map[string]any{
		"refund_reference": r.Reference, "status": r.Status, "amount": r.Amount, "currency": r.Currency,
	})
}
