package client

import (
	"context"
	"encoding/json"
)

// DirectDebitFee is the merchant's fee for a direct debit of an amount.
type DirectDebitFee struct {
	Result
	Fee struct {
		Amount      json.Number `json:"amount"`
		TotalAmount json.Number `json:"total_amount"`
		FeePercent  json.Number `json:"fee_percent"`
		FeeFixed    json.Number `json:"fee_fixed"`
		FeeCapped   json.Number `json:"fee_capped"`
		Currency    string      `json:"currency"`
	} `json:"fee"`
}

// DirectDebitFee previews the fee of a direct debit (POST /v5/direct_debit_fee).
func (c *Client) DirectDebitFee(ctx context.Context, amount, currency string, opts ...CallOption) (*DirectDebitFee, error) {
	body := map[string]any{
		"token":    map[string]string{"company_token": c.companyToken},
		"purchase": map[string]string{"amount": amount, "currency": currency},
	}
	return lookUp[DirectDebitFee](ctx, c, "/v5/direct_debit_fee", body, opts)
}

// BankAccount is an Australian bank account.
type BankAccount struct {
	Number     string `json:"number"`
	HolderName string `json:"holder_name"`
	BSB        string `json:"bsb"`
}

// DirectDebitDetails is the purchase object of a direct debit.
type DirectDebitDetails struct {
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	InvoiceNumber string `json:"invoice_number,omitempty"`
	ApplyFee      bool   `json:"should_service_apply_fee"`
}

// DirectDebitRequest is POST /v5/direct_debit.
type DirectDebitRequest struct {
	Token       Tokens             `json:"token"`
	BankAccount BankAccount        `json:"bank_account"`
	Customer    Customer           `json:"customer"`
	Purchase    DirectDebitDetails `json:"purchase"`
	Metadata    map[string]string  `json:"metadata,omitempty"`
}

// DirectDebitResult is the answer to a direct debit.
type DirectDebitResult struct {
	Result
	BankAccount BankAccount `json:"bank_account"`
	// Card is an identical copy of BankAccount (the masked number, the
	// holder and the BSB): the spec's sample response has both, and
	// clients written against it read card.
	Card     BankAccount `json:"card"`
	Purchase struct {
		TransactionTimeUTC *string     `json:"transaction_time_utc"`
		Status             string      `json:"status"`
		PurchaseReference  string      `json:"purchase_reference"`
		InvoiceNumber      string      `json:"invoice_number"`
		Amount             json.Number `json:"amount"`
		FeeAmount          json.Number `json:"fee_amount"`
		TotalAmount        json.Number `json:"total_amount"`
		Currency           string      `json:"currency"`
	} `json:"purchase"`
}

// DirectDebit submits a debit; it is PENDING until it clears.
func (c *Client) DirectDebit(ctx context.Context, req DirectDebitRequest, opts ...CallOption) (*DirectDebitResult, error) {
	return spend(ctx, c, "/v5/direct_debit", &req.Token, &req, directDebitFound, opts)
}

// RefundDetails is the refund object of refund requests.
type RefundDetails struct {
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
	InvoiceNumber string `json:"invoice_number,omitempty"`
}

// RefundRequest is a card or direct debit refund.
type RefundRequest struct {
	Token    Tokens            `json:"token"`
	Customer Customer          `json:"customer"`
	Refund   RefundDetails     `json:"refund"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// RefundResult is the refund result object (spec 2.5 and 4.15). When
// Refund.Status is FAILED, Refund.RefundReference and
// Refund.PurchaseReference are "" (spec 2.5, 7.2); RefundStatus with the
// purchase reference or invoice number finds the attempt. A result the
// client recovered (Result.Recovered) is that look-up's, and carries both
// references whatever the status.
type RefundResult struct {
	Result
	BankAccount *BankAccount `json:"bank_account,omitempty"`
	Card        *struct {
		Brand      string `json:"brand"`
		Funding    string `json:"funding"`
		Country    string `json:"country"`
		Number     string `json:"number"`
		HolderName string `json:"holder_name"`
		// BSB is set on a direct debit's refund, whose card is a copy
		// of its bank_account; "" on a card refund.
		BSB string `json:"bsb"`
	} `json:"card,omitempty"`
	Refund struct {
		TransactionTimeUTC *string     `json:"transaction_time_utc"`
		Status             string      `json:"status"`
		PurchaseReference  string      `json:"purchase_reference"`
		RefundReference    string      `json:"refund_reference"`
		InvoiceNumber      string      `json:"invoice_number"`
		Amount             json.Number `json:"amount"`
		Currency           string      `json:"currency"`
	} `json:"refund"`
}

// DirectDebitRefund refunds part or all of a cleared debit.
func (c *Client) DirectDebitRefund(ctx context.Context, purchaseReference string, req RefundRequest, opts ...CallOption) (*RefundResult, error) {
	return spend(ctx, c, "/v5/direct_debit/"+ref(purchaseReference)+"/refund", &req.Token, &req, refundFound, opts)
}
