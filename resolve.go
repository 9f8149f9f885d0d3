package paylink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ReviewAnswer is what an operator found out from the acquirer (or bank)
// about an operation in UNKNOWN: the answer an inquiry would have given.
type ReviewAnswer string

// Review answers.
const (
	// AnswerApproved: the operation happened. An authorisation was
	// approved (a hold's: PRE_AUTHORISED), a hold's capture or release
	// went through, a debit was lodged, a refund was paid.
	AnswerApproved ReviewAnswer = "approved"
	// AnswerDeclined: an authorisation the issuer declined, or a refund
	// the processor (or bank) refused: nothing moved.
	AnswerDeclined ReviewAnswer = "declined"
	// AnswerFailed: an authorisation the acquirer could not process.
	AnswerFailed ReviewAnswer = "failed"
	// AnswerNotReceived: the processor never received the operation, so
	// nothing happened (a hold is restored, anything else FAILED).
	AnswerNotReceived ReviewAnswer = "not_received"
)

// Audit actions of an operator's resolution.
const (
	AuditTransactionResolve = "transaction.resolve"
	AuditRefundResolve      = "refund.resolve"
)

// Resolution is an operator's answer about a transaction or refund in
// UNKNOWN, found out from the acquirer or bank by hand (paylink review
// resolve). paylink records it exactly as it records a processor's answer
// to an inquiry: the outcome with its ledger postings and webhooks, a
// link's claim paid or released, a refund's reservation paid or given
// back. Note, AcquirerID, AuthCode and the decline's fields are kept in
// the item's history; none may hold a card number.
type Resolution struct {
	MerchantID string
	Reference  string // the transaction's reference, or the refund's with Refund
	Refund     bool
	Answer     ReviewAnswer
	// AcquirerID is the acquirer's id of the operation (a debit's: the
	// bank's trace id), when it happened.
	AcquirerID string
	// AuthCode is an approved authorisation's code.
	AuthCode string
	// DeclineCode and DeclineMessage are the processor's reason for a
	// decline or a refused refund.
	DeclineCode, DeclineMessage string
	// Note says who confirmed the answer and where (a ticket): required.
	Note string
}

// Lengths of a resolution's fields.
const (
	maxResolutionNote  = 500
	maxResolutionField = 64
)

// ResolveReview records r's answer about an item in UNKNOWN and returns
// the status the item moved to. It refuses an item that is not UNKNOWN
// (recovery recorded the processor's answer first, or it never needed
// review) and an answer that does not fit the operation.
func (s *Service) ResolveReview(ctx context.Context, r Resolution) (Status, error) {
	if err := r.check(); err != nil {
		return "", err
	}
	t, refund, err := s.reviewItem(ctx, r)
	if err != nil {
		return "", err
	}
	also := func(tx Tx) error { return s.recordResolution(ctx, tx, r) }
	var moved bool
	var status Status
	if refund != nil {
		moved, err = s.resolveRefund(ctx, t, refund, r, also)
		status = refund.Status
	} else {
		moved, err = s.resolveTransaction(ctx, t, r, also)
		status = t.Status
	}
	if err != nil {
		return "", err
	}
	if !moved {
		return "", errItemMoved
	}
	s.log.WarnContext(ctx, "an operator resolved an item in review", "reference", r.Reference,
		"refund", r.Refund, "answer", r.Answer, "status", status)
	return status, nil
}

var (
	errNotInReview = Errorf(KindConflict, CodeInvalidState, "only a transaction or refund in UNKNOWN can be resolved by hand")
	errItemMoved   = Errorf(KindConflict, CodeInvalidState, "the item moved while it was being resolved (the processor's answer was recorded first): look it up again")
)

// check validates r's fields, whatever the item.
func (r Resolution) check() error {
	f := FieldErrors{}
	switch r.Answer {
	case AnswerApproved, AnswerDeclined, AnswerFailed, AnswerNotReceived:
	default:
		f["answer"] = "must be approved, declined, failed or not_received"
	}
	for name, v := range map[string]string{"merchant": r.MerchantID, "reference": r.Reference} {
		checkResolutionText(f, name, v, MaxInvoiceLength)
		if v == "" {
			f[name] = "is required"
		}
	}
	checkResolutionText(f, "note", r.Note, maxResolutionNote)
	if strings.TrimSpace(r.Note) == "" {
		f["note"] = "is required: who confirmed the answer with the processor, and where"
	}
	for name, v := range map[string]string{"acquirer_id": r.AcquirerID, "auth_code": r.AuthCode,
		"decline_code": r.DeclineCode, "decline_message": r.DeclineMessage} {
		checkResolutionText(f, name, v, maxResolutionField)
	}
	return f.Err()
}

// checkResolutionText refuses a text over max bytes, with a control
// character, or holding a card number.
func checkResolutionText(f FieldErrors, name, v string, max int) {
	switch {
	case len(v) > max:
		f[name] = fmt.Sprintf("must be at most %d bytes", max)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		f[name] = "must not contain control characters"
	case ContainsCardNumberAnywhere(v):
		f[name] = "must not contain a card number"
	}
}

// reviewItem reads the item r names: the transaction, or the refund and
// its transaction. It must be UNKNOWN.
func (s *Service) reviewItem(ctx context.Context, r Resolution) (*Transaction, *Refund, error) {
	var t *Transaction
	var refund *Refund
	err := s.store.View(ctx, func(tx Tx) error {
		ref := r.Reference
		if r.Refund {
			var err error
			if refund, err = tx.Refund(r.MerchantID, r.Reference); err != nil {
				return err
			}
			ref = refund.TransactionReference
		}
		var err error
		t, err = tx.Transaction(r.MerchantID, ref)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil, Errorf(KindNotFound, CodeNotFound, "merchant %s has no %s %q", r.MerchantID, r.kind(), r.Reference)
	case err != nil:
		return nil, nil, fmt.Errorf("read %s %s: %w", r.kind(), r.Reference, err)
	case refund != nil && refund.Status != StatusUnknown, refund == nil && t.Status != StatusUnknown:
		return nil, nil, errNotInReview
	}
	return t, refund, nil
}

// kind names what r resolves.
func (r Resolution) kind() string {
	if r.Refund {
		return "refund"
	}
	return "transaction"
}

// resolveTransaction records r's answer about t, as an inquiry's.
func (s *Service) resolveTransaction(ctx context.Context, t *Transaction, r Resolution, also func(Tx) error) (bool, error) {
	res, err := transactionAnswer(t, r)
	if err != nil {
		return false, err
	}
	return s.recordAnswer(ctx, t, res, also)
}

// transactionAnswer is the inquiry result r's answer stands for, for the
// operation t was interrupted in.
func transactionAnswer(t *Transaction, r Resolution) (InquiryResult, error) {
	if r.Answer == AnswerNotReceived {
		return InquiryResult{}, nil
	}
	found := InquiryResult{Found: true}
	switch {
	case t.Details.Pending != nil:
		if r.Answer != AnswerApproved {
			return found, wrongAnswer("a hold's capture or release either happened (approved) or not (not_received)")
		}
		found.Op.AcquirerTransID = r.AcquirerID
	case interruptedHold(t):
		return found, wrongAnswer("this hold's operation was claimed before paylink recorded which one it was, so its amounts are not known here: only not_received can be recorded; settle anything else with the acquirer")
	case t.PaymentType == PaymentTypeBankAccount:
		if r.Answer != AnswerApproved {
			return found, wrongAnswer("a debit either was lodged with the bank (approved) or not (not_received)")
		}
		found.Submission.TraceID = r.AcquirerID
	default:
		found.Auth = authAnswer(t, r)
	}
	return found, nil
}

// authAnswer is the authorisation result r's answer stands for, keeping
// t's address and security code checks.
func authAnswer(t *Transaction, r Resolution) AuthResult {
	a := AuthResult{AcquirerTransID: r.AcquirerID, AVSResult: t.Details.AVSResult, CVVResult: t.Details.CVVResult}
	switch r.Answer {
	case AnswerApproved:
		a.Outcome, a.AuthCode = OutcomeApproved, r.AuthCode
	case AnswerDeclined:
		a.Outcome, a.Decline = OutcomeDeclined, r.decline()
		a.Message = orDefault(r.DeclineMessage, "The payment was declined; no money was taken. Ask the customer to pay another way.")
	default:
		a.Outcome, a.Decline = OutcomeFailed, r.decline()
	}
	return a
}

// decline is r's decline reason, nil without one.
func (r Resolution) decline() *Decline {
	if r.DeclineCode == "" && r.DeclineMessage == "" {
		return nil
	}
	return &Decline{ProcessorCode: r.DeclineCode, ProcessorMessage: r.DeclineMessage}
}

// wrongAnswer refuses an answer the operation cannot have had.
func wrongAnswer(why string) error {
	return FieldErrors{"answer": why}.Err()
}

// resolveRefund records r's answer about refund (of t), as an inquiry's.
func (s *Service) resolveRefund(ctx context.Context, t *Transaction, refund *Refund, r Resolution, also func(Tx) error) (bool, error) {
	bank := t.PaymentType == PaymentTypeBankAccount
	from := refund.Status
	switch r.Answer {
	case AnswerApproved:
		applyRefundAnswer(refund, InquiryResult{Found: true, Refund: BankRefundResult{Accepted: true}}, bank)
	case AnswerNotReceived:
		applyRefundAnswer(refund, InquiryResult{}, bank)
	case AnswerDeclined:
		refund.Status, refund.Details.Message = StatusFailed, "The processor refused the refund; nothing was refunded"
		if d := r.decline(); d != nil && d.ProcessorMessage != "" {
			refund.Details.Message += ": " + d.ProcessorMessage
		}
	default:
		return false, wrongAnswer("a refund was paid (approved), refused (declined) or never received (not_received)")
	}
	return s.saveRefundAnswer(ctx, t, refund, from, also)
}

// recordResolution writes r to the item's history and the audit log,
// in the transaction that records its answer.
func (s *Service) recordResolution(ctx context.Context, tx Tx, r Resolution) error {
	action, object := AuditTransactionResolve, ObjectTransaction
	if r.Refund {
		action, object = AuditRefundResolve, ObjectRefund
	}
	err := s.recordEvent(tx, r.MerchantID, r.Reference, r.kind()+".resolved", map[string]string{
		"answer": string(r.Answer), "note": r.Note, "acquirer_id": r.AcquirerID, "auth_code": r.AuthCode,
		"decline_code": r.DeclineCode, "decline_message": r.DeclineMessage,
	})
	if err != nil {
		return err
	}
	return s.audit(ctx, tx, AuditEvent{MerchantID: r.MerchantID, Action: action, ObjectType: object,
		ObjectID: r.Reference, Outcome: OutcomeSuccess, Detail: string(r.Answer)})
}
