package paylink

import "context"

// Processor is the acquirer: the one place that would talk to a card
// network. internal/processor has the deterministic sandbox. A call's
// context carries its deadline (callContext), which ends before recovery
// asks about the item: an implementation must not send a request once
// the context is done (an HTTP client does not). The Service never hands
// it a context already done (ask).
type Processor interface {
	// Authorize asks the issuer to approve (and, unless Hold, capture) a
	// card payment.
	Authorize(ctx context.Context, req AuthRequest) (AuthResult, error)

	// Card lifecycle: follow-up operations on an approved
	// authorisation. An error means the operation did not happen, except
	// when the call's deadline passed or the error wraps
	// ErrOutcomeUnknown: then nobody knows, and recovery asks with
	// Inquire. The same holds for Authorize.

	// Capture settles a hold for an amount up to the held amount and
	// releases the rest.
	Capture(ctx context.Context, req OpRequest) (OpResult, error)
	// Void releases a hold without taking any money.
	Void(ctx context.Context, req OpRequest) (OpResult, error)
	// Refund returns part or all of a settled payment.
	Refund(ctx context.Context, req OpRequest) (OpResult, error)

	// Inquire asks what became of an operation whose answer was lost
	// (timed out, or its process died): the recovery job applies the
	// answer instead of guessing. An error means the acquirer could not
	// say; the operation then waits for review.
	Inquire(ctx context.Context, q Inquiry) (InquiryResult, error)
}

// InProcessProcessor is implemented by a Processor that lives wholly in
// this process and answers without waiting on anything outside it (the
// sandbox, unless told to be slow or silent). Nothing outside the process
// can then hold an authorisation paylink has not recorded: a crash loses
// the request and the processor's memory of it together. A purchase
// through such a processor asks it inside the purchase's own database
// transaction and records the answer there, instead of recording the
// transaction PROCESSING first and the answer in a second commit, as
// recovery needs for a remote acquirer.
type InProcessProcessor interface {
	// AnswersInProcess reports whether the processor can answer in
	// process now; it is asked once per purchase.
	AnswersInProcess() bool
	// AuthorizeInProcess is Authorize for a purchase asked inside its
	// database transaction. Nothing is left PROCESSING for it, so no
	// inquiry will ever ask about it and the processor need not remember
	// it. It must not use the store.
	AuthorizeInProcess(ctx context.Context, req AuthRequest) (AuthResult, error)
}

// OpRequest is a capture, void or refund of the authorisation Reference
// (with the acquirer's id of it). OpReference is the refund's own
// reference ("" for capture and void).
type OpRequest struct {
	Reference       string
	AcquirerTransID string
	OpReference     string
	Amount          Money
}

// OpResult is the acquirer's id of a completed follow-up operation.
type OpResult struct {
	AcquirerTransID string
}

// Outcome is the processor's verdict on an authorisation.
type Outcome string

// Outcomes.
const (
	OutcomeApproved  Outcome = "approved"
	OutcomeDeclined  Outcome = "declined"
	OutcomeFailed    Outcome = "failed"
	OutcomeChallenge Outcome = "challenge" // 3-D Secure challenge required
)

// AuthRequest is one authorisation.
type AuthRequest struct {
	Reference string
	Card      CardDetails
	Amount    Money
	Hold      bool // pre-authorisation: hold funds, capture later
	// ThreeDS asks for 3-D Secure; Authenticated carries a completed
	// challenge's result when the authorisation follows one.
	ThreeDS       bool
	Authenticated *ThreeDS
}

// AuthResult is the processor's answer.
type AuthResult struct {
	Outcome         Outcome
	AuthCode        string
	AcquirerTransID string
	AVSResult       string
	CVVResult       string
	ThreeDS         *ThreeDS
	Decline         *Decline
	Message         string
}

// OpKind names a processor operation for an inquiry.
type OpKind string

// Operation kinds. Card operations are identified by the authorisation
// reference (and, for a refund, the refund's reference); bank operations by
// the debit's or the refund's reference.
const (
	OpAuthorize   OpKind = "authorize"
	OpCapture     OpKind = "capture"
	OpVoid        OpKind = "void"
	OpRefund      OpKind = "refund"
	OpDebit       OpKind = "debit"
	OpDebitRefund OpKind = "debit_refund"
)

// Inquiry asks the acquirer or bank what became of one operation, by its
// idempotent operation id: Reference is the authorisation (or debit)
// reference, OpReference the refund's reference for OpRefund and
// OpDebitRefund.
type Inquiry struct {
	Kind        OpKind
	Reference   string
	OpReference string
}

// InquiryResult is the acquirer's record of an operation. Found false
// means it never received it: nothing happened, no money moved. When
// Found, Auth is the answer it gave to an authorisation, Op the completed
// capture, void or card refund, Submission the lodged debit and Refund
// the bank's answer to a debit refund.
type InquiryResult struct {
	Found      bool
	Amount     Money
	Auth       AuthResult
	Op         OpResult
	Submission BankSubmission
	Refund     BankRefundResult
}
