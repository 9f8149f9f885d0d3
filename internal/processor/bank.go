package processor

import (
	"context"

	"github.com/paylink/paylink"
)

// Bank is the deterministic sandbox of the direct-entry (BECS) bank: the
// last four digits of the account number decide how a debit clears and
// whether a refund is paid. Every other account clears and is refunded.
// Like Sandbox it remembers submissions and refunds for Inquire and can be
// told to answer slowly or not at all. Use it by pointer.
type Bank struct {
	memory
}

// Sandbox account number endings with special behaviour. The reasons are
// BECS return reason codes.
const (
	AccountInsufficientFunds = "0002" // dishonoured: 6 refer to customer (insufficient funds)
	AccountClosed            = "0003" // dishonoured: 3 account closed
	AccountNotFound          = "0005" // dishonoured: 5 no account or incorrect account number
	AccountRefundRejected    = "0009" // clears, but refunds are rejected: 3 account closed
)

// dishonours maps an account ending to its BECS return reason.
var dishonours = map[string]paylink.Decline{
	AccountInsufficientFunds: {ProcessorCode: "6", ProcessorMessage: "Refer to customer: insufficient funds"},
	AccountClosed:            {ProcessorCode: "3", ProcessorMessage: "Account closed"},
	AccountNotFound:          {ProcessorCode: "5", ProcessorMessage: "No account or incorrect account number"},
}

// SubmitDebit accepts every debit and returns its trace id.
func (b *Bank) SubmitDebit(ctx context.Context, req paylink.BankDebit) (paylink.BankSubmission, error) {
	res := paylink.BankSubmission{TraceID: acquirerID(req.Reference)}
	if err := b.perform(ctx, opKey{kind: paylink.OpDebit, reference: req.Reference}, paylink.InquiryResult{Submission: res, Amount: req.Amount}); err != nil {
		return paylink.BankSubmission{}, err
	}
	return res, nil
}

// ClearDebit dishonours the sandbox dishonour accounts and clears the rest.
func (*Bank) ClearDebit(_ context.Context, req paylink.BankDebit) (paylink.BankClearing, error) {
	if d, ok := dishonours[ending(req.Account.Number)]; ok {
		return paylink.BankClearing{Dishonour: &d}, nil
	}
	return paylink.BankClearing{Cleared: true}, nil
}

// RefundDebit rejects refunds to the refund-rejected account and pays the rest.
func (b *Bank) RefundDebit(ctx context.Context, req paylink.BankRefund) (paylink.BankRefundResult, error) {
	res := paylink.BankRefundResult{Accepted: true}
	if ending(req.Account.Number) == AccountRefundRejected {
		res = paylink.BankRefundResult{Reason: &paylink.Decline{ProcessorCode: "3", ProcessorMessage: "Account closed"}}
	}
	k := opKey{kind: paylink.OpDebitRefund, reference: req.DebitReference, opRef: req.Reference}
	if err := b.perform(ctx, k, paylink.InquiryResult{Refund: res, Amount: req.Amount}); err != nil {
		return paylink.BankRefundResult{}, err
	}
	return res, nil
}

// Inquire answers from the bank's memory: the submission or refund, or
// not found when it never received it.
func (b *Bank) Inquire(ctx context.Context, q paylink.Inquiry) (paylink.InquiryResult, error) {
	return b.inquire(ctx, q)
}

// ending is the last four digits of an account number.
func ending(number string) string {
	if len(number) < 4 {
		return number
	}
	return number[len(number)-4:]
}

var _ paylink.BankProcessor = (*Bank)(nil)
