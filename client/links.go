package client

import (
	"context"
	"encoding/json"
	"time"
)

// LinkCustomer pre-fills a payment link's hosted page.
type LinkCustomer struct {
	Reference   string `json:"reference,omitempty"`
	Email       string `json:"email,omitempty"`
	FirstName   string `json:"first_name,omitempty"`
	LastName    string `json:"last_name,omitempty"`
	Phone       string `json:"phone,omitempty"`
	Address     string `json:"address,omitempty"`
	Address2    string `json:"address2,omitempty"`
	City        string `json:"city,omitempty"`
	State       string `json:"state,omitempty"`
	Postcode    string `json:"postcode,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
}

// PaymentLinkRequest is POST /v5/payment-links.
type PaymentLinkRequest struct {
	Amount            string // decimal string, "49.50"
	Currency          string
	MerchantReference string // the order reference, required; the payment's invoice number
	Customer          *LinkCustomer
	// WebhookURL is a dynamic webhook for this link's payments; its host
	// must be on the merchant's webhook whitelist.
	WebhookURL string
	// ExpiresAt, when set, is when the link stops taking payments.
	ExpiresAt time.Time
	// NoSurcharge stops the page adding the card surcharge (the amount
	// already includes it).
	NoSurcharge bool
}

// PaymentLink is the payment link object.
type PaymentLink struct {
	Result
	ID                   string      `json:"id"`
	Status               string      `json:"status"` // unpaid, paid, cancelled, expired
	URL                  string      `json:"url"`
	VirtualTerminalURL   string      `json:"virtual_terminal_url"`
	Amount               json.Number `json:"amount"`
	Currency             string      `json:"currency"`
	MerchantReference    string      `json:"merchantReference"`
	WebhookURL           *string     `json:"webhook_url"`
	Attempts             int         `json:"attempts"`
	TransactionReference *string     `json:"transaction_reference"` // the APPROVED payment once paid
	CreatedAt            time.Time   `json:"created_at"`
	ExpiresAt            *time.Time  `json:"expires_at"`
	PaidAt               *time.Time  `json:"paid_at"`
}

// CreatePaymentLink creates a payment link: a hosted payment page (URL)
// and a virtual terminal (VirtualTerminalURL).
func (c *Client) CreatePaymentLink(ctx context.Context, req PaymentLinkRequest, opts ...CallOption) (*PaymentLink, error) {
	body := struct {
		CompanyToken      string        `json:"company_token"`
		Amount            string        `json:"amount"`
		Currency          string        `json:"currency"`
		MerchantReference string        `json:"merchantReference"`
		Customer          *LinkCustomer `json:"customer,omitempty"`
		WebhookURL        string        `json:"webhook_url,omitempty"`
		ExpiresAt         string        `json:"expires_at,omitempty"`
		ApplySurcharge    *bool         `json:"should_service_apply_surcharge,omitempty"`
	}{CompanyToken: c.companyToken, Amount: req.Amount, Currency: req.Currency,
		MerchantReference: req.MerchantReference, Customer: req.Customer, WebhookURL: req.WebhookURL}
	if !req.ExpiresAt.IsZero() {
		body.ExpiresAt = req.ExpiresAt.UTC().Format(time.RFC3339)
	}
	if req.NoSurcharge {
		body.ApplySurcharge = new(bool)
	}
	return call[PaymentLink](ctx, c, "/v5/payment-links", body, opts...)
}

// PaymentLink looks a payment link up by id.
func (c *Client) PaymentLink(ctx context.Context, id string, opts ...CallOption) (*PaymentLink, error) {
	return lookUp[PaymentLink](ctx, c, "/v5/payment-links/"+ref(id), struct{}{}, opts)
}

// CancelPaymentLink cancels an unpaid payment link; cancelling it again
// changes nothing. A paid link is the error payment_link_paid.
func (c *Client) CancelPaymentLink(ctx context.Context, id string, opts ...CallOption) (*PaymentLink, error) {
	return call[PaymentLink](ctx, c, "/v5/payment-links/"+ref(id)+"/cancel", struct{}{}, opts...)
}
