package client

import (
	"context"
	"encoding/json"
	"fmt"
)

// Customer is the payer.
type Customer struct {
	ID                        string `json:"id,omitempty"`
	Reference                 string `json:"reference,omitempty"`
	Email                     string `json:"email,omitempty"`
	FirstName                 string `json:"first_name,omitempty"`
	LastName                  string `json:"last_name,omitempty"`
	Phone                     string `json:"phone,omitempty"`
	IPAddress                 string `json:"ip_address"`
	Timezone                  string `json:"timezone"`
	AcceptedTermsConditions   bool   `json:"accepted_terms_conditions,omitempty"`
	StoreCardPermission       bool   `json:"store_card_permission,omitempty"`
	ShouldServiceApplyAuth    bool   `json:"should_service_apply_authentication,omitempty"`
	AuthenticationRedirectURL string `json:"authentication_redirect_url,omitempty"`
	UserAgent                 string `json:"user_agent,omitempty"`
}

// Card is card details, or a card token alone.
type Card struct {
	Token       string `json:"token,omitempty"`
	Number      string `json:"number,omitempty"`
	ExpiryMonth string `json:"expiry_month,omitempty"`
	ExpiryYear  string `json:"expiry_year,omitempty"`
	CVC         string `json:"cvc,omitempty"`
	HolderName  string `json:"holder_name,omitempty"`
}

// PurchaseDetails is the purchase object of a purchase request.
type PurchaseDetails struct {
	Amount                string `json:"amount"`
	Currency              string `json:"currency"`
	InvoiceNumber         string `json:"invoice_number,omitempty"`
	ApplySurcharge        bool   `json:"should_service_apply_surcharge"`
	ApplyPreAuthorisation bool   `json:"should_service_apply_pre_authorisation"`
}

// PurchaseRequest is POST /v5/purchase.
type PurchaseRequest struct {
	Token    Tokens          `json:"token"`
	Customer Customer        `json:"customer"`
	Card     *Card           `json:"card,omitempty"`
	Purchase PurchaseDetails `json:"purchase"`
}

// CardInfo is a stored card as responses show it: masked number, expiry
// (two digits each), holder and the card's brand (upper case), funding
// (lower case) and issuing country.
type CardInfo struct {
	Number      string `json:"number"`
	ExpiryMonth string `json:"expiry_month"`
	ExpiryYear  string `json:"expiry_year"`
	HolderName  string `json:"holder_name"`
	Brand       string `json:"brand"`
	Funding     string `json:"funding"`
	Country     string `json:"country"`
}

// CardResult is the card part of a transaction result.
type CardResult struct {
	Token    *string `json:"token"`
	MultiUse bool    `json:"multi_use"`
	CardInfo
	FingerPrint string `json:"finger_print"`
}

// TransactionResult is the transaction result object (spec 2.4).
type TransactionResult struct {
	Result
	Card     CardResult `json:"card"`
	Customer struct {
		ID                        *string `json:"id"`
		AuthenticationRedirectURL *string `json:"authentication_redirect_url"`
	} `json:"customer"`
	Purchase struct {
		TransactionTimeUTC  *string      `json:"transaction_time_utc"`
		Status              string       `json:"status"`
		PurchaseReference   string       `json:"purchase_reference"`
		InvoiceNumber       string       `json:"invoice_number"`
		Amount              json.Number  `json:"amount"`
		SurchargeAmount     json.Number  `json:"surcharge_amount"`
		TotalAmount         *json.Number `json:"total_amount"`
		PreAuthorised       bool         `json:"pre_authorised"`
		PreAuthorisedAmount Amount       `json:"pre_authorised_amount"`
		Currency            string       `json:"currency"`
	} `json:"purchase"`
}

// Purchase charges a card (or holds funds with ApplyPreAuthorisation).
func (c *Client) Purchase(ctx context.Context, req PurchaseRequest, opts ...CallOption) (*TransactionResult, error) {
	return spend(ctx, c, "/v5/purchase", &req.Token, &req, purchaseFound, opts)
}

// SurchargeRequest is POST /v5/surcharge.
type SurchargeRequest struct {
	Card     Card   `json:"card"`
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
}

// SurchargeResult is the surcharge preview.
type SurchargeResult struct {
	Result
	Card struct {
		Brand   string `json:"brand"`
		Funding string `json:"funding"`
		Country string `json:"country"`
	} `json:"card"`
	Surcharge struct {
		Amount   json.Number `json:"amount"`
		Percent  json.Number `json:"percent"`
		Currency string      `json:"currency"`
	} `json:"surcharge"`
}

// Surcharge previews the surcharge a purchase would add. It moves no
// money, but takes CallOptions as every POST does (an IdempotencyKey, or
// a header a proxy needs).
func (c *Client) Surcharge(ctx context.Context, req SurchargeRequest, opts ...CallOption) (*SurchargeResult, error) {
	body := struct {
		Token struct {
			Company string `json:"company"`
		} `json:"token"`
		SurchargeRequest
	}{SurchargeRequest: req}
	body.Token.Company = c.companyToken
	return request[SurchargeResult](ctx, c, reads, "/v5/surcharge", body, opts...)
}

// Status is a transaction status look-up.
type Status struct {
	Result
	TransactionTimeUTC *string     `json:"transaction_time_utc"`
	Status             string      `json:"status"`
	PurchaseReference  string      `json:"purchase_reference"`
	InvoiceNumber      string      `json:"invoice_number"`
	Amount             json.Number `json:"amount"`
	Currency           string      `json:"currency"`
}

// PurchaseStatus looks a transaction up by purchase reference or invoice number.
func (c *Client) PurchaseStatus(ctx context.Context, referenceOrInvoice string, opts ...CallOption) (*Status, error) {
	return lookUp[Status](ctx, c, "/v5/purchase/"+ref(referenceOrInvoice), map[string]string{"company_token": c.companyToken}, opts)
}

// Amount is a decimal amount in major units, kept as its exact text
// ("25.50", "1029" JPY, "10.419" KWD), whichever way paylink sent it: a
// JSON string (most answers) or a JSON number (the 3dsredirect answer).
// It marshals as a string.
type Amount string

// String is the amount's decimal text.
func (a Amount) String() string { return string(a) }

// UnmarshalJSON takes a JSON string or number holding a decimal number;
// null leaves a unchanged, as for any JSON value.
func (a *Amount) UnmarshalJSON(b []byte) error {
	text := string(b)
	if text == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
	}
	if !json.Valid([]byte(text)) || len(text) == 0 || (text[0] != '-' && (text[0] < '0' || text[0] > '9')) {
		return fmt.Errorf("paylink: amount %s is not a decimal number", b)
	}
	*a = Amount(text)
	return nil
}
