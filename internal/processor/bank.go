package processor

import (
	"context"

	"github.com/paylink/paylink"
)

// Bank is the deterministic sandbox of the direct-entry (BECS) bank: the
// last four digits of the account number decide how a debit clears and
// whether a refund is paid. Every other account clears and is refunded.
type Bank struct{}

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
func (Bank) SubmitDebit(_ context.Context, req paylink.BankDebit) (paylink.BankSubmission, error) {
	return paylink.BankSubmission{TraceID: acquirerID(req.Reference)}, nil
}

// ClearDebit dishonours the sandbox dishonour accounts and clears the rest.
func (Bank) ClearDebit(_ context.Context, req paylink.BankDebit) (paylink.BankClearing, error) {
	if d, ok := dishonours[ending(req.Account.Number)]; ok {
		return paylink.BankClearing{Dishonour: &d}, nil
	}
	return paylink.BankClearing{Cleared: true}, nil
}

// RefundDebit rejects refunds to the refund-rejected account and pays the rest.
func (Bank) RefundDebit(_ context.Context, req paylink.BankRefund) (paylink.BankRefundResult, error) {
	if ending(req.Account.Number) == AccountRefundRejected {
		return paylink.BankRefundResult{Reason: &paylink.Decline{ProcessorCode: "3", ProcessorMessage: "Account closed"}}, nil
	}
	return paylink.BankRefundResult{Accepted: true}, nil
}

// ending is the last four digits of an account number.
func ending(number string) string {
	if len(number) < 4 {
		return number
	}
	return number[len(number)-4:]
}

var _ paylink.BankProcessor = Bank{}
