package client

import (
	"context"
	"encoding/json"
)

// CaptureDetails is the capture object of a capture request.
type CaptureDetails struct {
	Amount         string `json:"amount"`
	Currency       string `json:"currency"`
	ApplySurcharge bool   `json:"should_service_apply_surcharge"`
}

// CaptureRequest is POST /v5/purchase/{ref}/capture.
type CaptureRequest struct {
	Token    Tokens            `json:"token"`
	Capture  CaptureDetails    `json:"capture"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Capture captures all or part of a hold (a purchase made with
// ApplyPreAuthorisation); the rest of the hold is released.
func (c *Client) Capture(ctx context.Context, purchaseReference string, req CaptureRequest, opts ...CallOption) (*TransactionResult, error) {
	return spend(ctx, c, "/v5/purchase/"+ref(purchaseReference)+"/capture", &req.Token, &req, purchaseFound, opts)
}

// CancelRequest is POST /v5/purchase/{ref}/cancel.
type CancelRequest struct {
	Token    Tokens            `json:"token"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Cancel releases a hold (status PRE_AUTHORISED_REVERSED).
func (c *Client) Cancel(ctx context.Context, purchaseReference string, req CancelRequest, opts ...CallOption) (*TransactionResult, error) {
	return spend(ctx, c, "/v5/purchase/"+ref(purchaseReference)+"/cancel", &req.Token, &req, purchaseFound, opts)
}

// Refund refunds part or all of an approved card purchase. A refund the
// processor could not make is a result with Refund.Status FAILED, not an
// error.
func (c *Client) Refund(ctx context.Context, purchaseReference string, req RefundRequest, opts ...CallOption) (*RefundResult, error) {
	return spend(ctx, c, "/v5/purchase/"+ref(purchaseReference)+"/refund", &req.Token, &req, refundFound, opts)
}

// RefundStatusResult is a refund status look-up.
type RefundStatusResult struct {
	Result
	TransactionTimeUTC string      `json:"transaction_time_utc"`
	Status             string      `json:"status"`
	RefundReference    string      `json:"refund_reference"`
	PurchaseReference  string      `json:"purchase_reference"`
	InvoiceNumber      string      `json:"invoice_number"`
	Amount             json.Number `json:"amount"`
	Currency           string      `json:"currency"`
}

// RefundStatus looks a refund up by refund reference, refund invoice
// number, purchase reference (its newest refund), or purchase invoice
// number (the newest refund of the purchases with it), in that order.
func (c *Client) RefundStatus(ctx context.Context, reference string, opts ...CallOption) (*RefundStatusResult, error) {
	return lookUp[RefundStatusResult](ctx, c, "/v5/refund/"+ref(reference), map[string]string{"company_token": c.companyToken}, opts)
}

// ThreeDSRedirect completes a purchase that required 3-D Secure, once the
// customer has answered the challenge page: APPROVED (PRE_AUTHORISED for
// a hold) after a passed challenge, DECLINED after a failed one. (This
// answer sends pre_authorised_amount as a JSON number, the others as a
// string: Purchase.PreAuthorisedAmount, an Amount, reads both.)
func (c *Client) ThreeDSRedirect(ctx context.Context, purchaseReference string, opts ...CallOption) (*TransactionResult, error) {
	return call[TransactionResult](ctx, c, "/v5/purchase/"+ref(purchaseReference)+"/3dsredirect", map[string]string{"company_token": c.companyToken}, opts...)
}
