package paylink

import "context"

// BankProcessor is the direct-entry bank (BECS in Australia): the one
// place that would talk to a sponsor bank about debits from and refunds to
// bank accounts. internal/processor has the deterministic sandbox; a real
// BECS integration replaces it behind this interface.
type BankProcessor interface {
	// SubmitDebit lodges a debit for clearing. An error means it was not
	// lodged and no money will move, except when the call's deadline
	// passed or the error wraps ErrOutcomeUnknown: then recovery asks
	// with Inquire. The same holds for RefundDebit.
	SubmitDebit(ctx context.Context, req BankDebit) (BankSubmission, error)
	// ClearDebit reports whether a lodged debit cleared or was
	// dishonoured. It is a query: asking again gives the same answer, so
	// several instances may ask about the same debit.
	ClearDebit(ctx context.Context, req BankDebit) (BankClearing, error)
	// RefundDebit pays money back to a debited account.
	RefundDebit(ctx context.Context, req BankRefund) (BankRefundResult, error)
	// Inquire asks what became of a debit submission (OpDebit) or a
	// refund (OpDebitRefund) whose answer was lost. An error means the
	// bank could not say.
	Inquire(ctx context.Context, q Inquiry) (InquiryResult, error)
}

// BankAccount is an Australian bank account as a client sends it. The
// number lives only in memory; it is sealed by the vault before it reaches
// a store.
type BankAccount struct {
	BSB        string // normalised to NNN-NNN
	Number     string // 5 to 9 digits
	HolderName string
}

// BankDebit is one debit from a bank account.
type BankDebit struct {
	Reference string
	Account   BankAccount
	Amount    Money
}

// BankSubmission is the bank's acknowledgement of a lodged debit.
type BankSubmission struct {
	TraceID string
}

// BankClearing is the outcome of a lodged debit: cleared, or dishonoured
// with the bank's return reason.
type BankClearing struct {
	Cleared   bool
	Dishonour *Decline // return reason code and text when not cleared
}

// BankRefund is money paid back to the account of a cleared debit.
type BankRefund struct {
	Reference       string // the refund's reference
	DebitReference  string
	Account         BankAccount
	Amount          Money
	DebitAcquirerID string // the debit's trace id
}

// BankRefundResult is the bank's answer to a refund.
type BankRefundResult struct {
	Accepted bool
	Reason   *Decline // why it was rejected
}
