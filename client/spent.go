package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// finder looks up, by its reference, what a money-moving call's earlier
// attempt made, as that call's result (see spentByThisCall).
type finder[T any] func(ctx context.Context, c *Client, reference string, opts []CallOption) (*T, error)

// spentBy is the reference of the operation that paylink's
// transaction_token_used refusal, err's last answer, names as the
// token's spender: its field token.transaction_token ("spent by REF"),
// or its message ("already been used, by REF: ..."); "" when err is
// another answer or names none.
func spentBy(err error) string {
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeTransactionTokenUsed {
		return ""
	}
	if by, ok := strings.CutPrefix(e.Fields["token.transaction_token"], "spent by "); ok {
		return strings.TrimSpace(by)
	}
	if _, rest, ok := strings.Cut(e.Message, "already been used, by "); ok {
		by, _, _ := strings.Cut(rest, ":")
		return strings.TrimSpace(by)
	}
	return ""
}

// spentByThisCall answers a money-moving call refused because its
// transaction token was spent, err, when the client fetched that token
// and only this request sent it (this call, or the caller's earlier call
// of the same request under its key): nobody else had it, so the
// operation that spent it is an earlier attempt of this request whose
// answer was lost (a 503 while paylink's database stopped, a
// connection closed). It looks that operation up with find and returns
// it as the call's result, marked Recovered and Replayed. When the
// refusal names no spender, or the look-up fails, err stands (with the
// look-up's error).
func spentByThisCall[T any](ctx context.Context, c *Client, err error, find finder[T], opts []CallOption) (*T, error) {
	by := spentBy(err)
	if by == "" {
		return nil, err
	}
	out, lerr := find(ctx, c, by, opts)
	if lerr != nil {
		return nil, fmt.Errorf("%w; the token was spent by %s, an earlier attempt of this call, which could not be looked up: %w", err, by, lerr)
	}
	return out, nil
}

// recovered is r, a status look-up's, as the result of the earlier
// attempt it found: marked Recovered and Replayed, and with the outcome
// code of the status it found (a look-up always says "success": it found
// the payment), so that a caller deciding on ResponseCode never ships a
// declined or pending order.
func (r Result) recovered(status string) Result {
	r.Replayed, r.Recovered = true, true
	r.ResponseCode = outcomeCode(status)
	return r
}

// outcomeCode is the response_code of a recovered payment or refund in
// status: the one paylink's answer to the call that made it had, except
// that PENDING is always "pending". A look-up shows a card payment whose
// processor's answer is awaited, a direct debit lodged and awaiting
// clearing (answered "success" when it was made), and one whose bank has
// not acknowledged it yet (answered "pending"), all as PENDING: the
// status cannot tell which, and none of them is money received, so the
// caller is told to look it up later, never that it succeeded.
func outcomeCode(status string) string {
	switch status {
	case StatusDeclined:
		return CodeDeclined
	case StatusFailed:
		return CodeFailed
	case StatusPending:
		return CodePending
	case StatusUnknown:
		return CodeUnknown
	}
	return CodeSuccess
}

// errAwaitsAuthentication is the look-up of an earlier attempt that
// awaits its 3-D Secure challenge, whose address only its lost answer
// carried.
var errAwaitsAuthentication = errors.New("it awaits its 3-D Secure challenge, whose address was in the lost answer: look it up, or pay again with a new transaction token")

// purchaseFound is a purchase, capture or cancel (whose token is spent
// under the hold's reference) looked up with PurchaseStatus.
func purchaseFound(ctx context.Context, c *Client, reference string, opts []CallOption) (*TransactionResult, error) {
	st, err := c.PurchaseStatus(ctx, reference, opts...)
	if err != nil {
		return nil, err
	}
	if st.Status == StatusRequiresAuthentication {
		// The challenge's address was in the lost answer alone: no use
		// to the caller without it.
		return nil, errAwaitsAuthentication
	}
	out := &TransactionResult{Result: st.Result.recovered(st.Status)}
	p := &out.Purchase
	p.TransactionTimeUTC, p.Status, p.PurchaseReference = st.TransactionTimeUTC, st.Status, st.PurchaseReference
	p.InvoiceNumber, p.Currency, p.TotalAmount = st.InvoiceNumber, st.Currency, &st.Amount
	return out, nil
}

// directDebitFound is a direct debit looked up with PurchaseStatus.
func directDebitFound(ctx context.Context, c *Client, reference string, opts []CallOption) (*DirectDebitResult, error) {
	st, err := c.PurchaseStatus(ctx, reference, opts...)
	if err != nil {
		return nil, err
	}
	out := &DirectDebitResult{Result: st.Result.recovered(st.Status)}
	p := &out.Purchase
	p.TransactionTimeUTC, p.Status, p.PurchaseReference = st.TransactionTimeUTC, st.Status, st.PurchaseReference
	p.InvoiceNumber, p.Currency, p.TotalAmount = st.InvoiceNumber, st.Currency, st.Amount
	return out, nil
}

// refundFound is a card or direct debit refund looked up with
// RefundStatus by its refund reference.
func refundFound(ctx context.Context, c *Client, reference string, opts []CallOption) (*RefundResult, error) {
	st, err := c.RefundStatus(ctx, reference, opts...)
	if err != nil {
		return nil, err
	}
	out := &RefundResult{Result: st.Result.recovered(st.Status)}
	r := &out.Refund
	r.TransactionTimeUTC, r.Status, r.PurchaseReference, r.RefundReference = &st.TransactionTimeUTC, st.Status, st.PurchaseReference, st.RefundReference
	r.InvoiceNumber, r.Amount, r.Currency = st.InvoiceNumber, st.Amount, st.Currency
	return out, nil
}
