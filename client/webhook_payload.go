package client

import (
	"encoding/json"
	"fmt"
)

// Webhook is the payload of a paylink webhook (docs/webhooks.md,
// "Payload"). A merchant on the legacy form gets only its first 16
// fields; the others are then zero. Fields paylink sends as JSON null
// when they do not apply are pointers; every other field that does not
// apply is "".
type Webhook struct {
	// ID is the webhook-id header: the same on every attempt of one
	// delivery, so deduplicate on it (delivery is at least once).
	// ReadWebhook fills it in; DecodeWebhook, which sees only the body,
	// leaves it "".
	ID string `json:"-"`

	TransactionReference string `json:"transaction_reference"`
	CustomerReference    string `json:"customer_reference"`
	InvoiceNumber        string `json:"invoice_number"`
	// TransactionTimeUTC is "YYYY-MM-DD hh:mm:ss AM|PM", UTC.
	TransactionTimeUTC string `json:"transaction_time_utc"`
	// Status is StatusApproved, StatusDeclined, StatusPreAuthorised,
	// StatusPending or StatusFailed; ignore one you do not know rather
	// than fail the delivery. Webhooks are not ordered: keep a payment's
	// furthest status (APPROVED, DECLINED and FAILED are final), not the
	// latest to arrive.
	Status           string `json:"status"`
	Amount           Amount `json:"amount"` // SaleAmount + Surcharge
	Currency         string `json:"currency"`
	MaskedCardNumber string `json:"masked_card_number"`
	CardBrand        string `json:"card_brand"`
	CardExpiry       string `json:"card_expiry"`
	// EmailAddress is deprecated: the same value as CustomerEmail.
	EmailAddress string `json:"email_address"`
	MID          string `json:"mid"`
	TradingName  string `json:"trading_name"`
	SaleAmount   Amount `json:"sale_amount"`
	Surcharge    Amount `json:"surcharge"`
	// WebhookType is API, HPP (a payment link) or VT (the virtual
	// terminal).
	WebhookType string `json:"webhook_type"`

	CardFundingType     string  `json:"card_funding_type"`
	CardConsumerType    string  `json:"card_consumer_type"`
	CardIssuerCountry   string  `json:"card_issuer_country"`
	CardRegionClass     string  `json:"card_region_class"`
	CardHolderName      string  `json:"card_holder_name"`
	CardToken           *string `json:"card_token"`
	CustomerEmail       string  `json:"customer_email"`
	CustomerFirstName   string  `json:"customer_first_name"`
	CustomerLastName    string  `json:"customer_last_name"`
	CustomerPhone       string  `json:"customer_phone"`
	CustomerAddress     string  `json:"customer_address"`
	CustomerAddress2    string  `json:"customer_address2"`
	CustomerCity        string  `json:"customer_city"`
	CustomerState       string  `json:"customer_state"`
	CustomerPostcode    string  `json:"customer_postcode"`
	CustomerCountryCode string  `json:"customer_country_code"`
	// PaymentType is CreditCard for cards, BankAccount for direct debits.
	PaymentType string `json:"payment_type"`
	// Booking, BusinessUnit, PaymentSchedule, PresentmentAmount and
	// PresentmentCurrency are always null: paylink has none of them.
	Booking                   *string   `json:"booking"`
	BusinessUnit              *string   `json:"business_unit"`
	PaymentLink               *string   `json:"payment_link"`
	PaymentSchedule           *string   `json:"payment_schedule"`
	PresentmentAmount         *string   `json:"presentment_amount"`
	PresentmentCurrency       *string   `json:"presentment_currency"`
	TransactionAuthCode       *string   `json:"transaction_auth_code"`
	AVSResult                 *string   `json:"avs_result"`
	CVVResult                 *string   `json:"cvv_result"`
	ThreeDSResult             *string   `json:"threeds_result"`
	ThreeDSResultReason       *string   `json:"threeds_result_reason"`
	ThreeDSVersion            *string   `json:"threeds_version"`
	ThreeDSECI                *string   `json:"threeds_eci"`
	ThreeDSDSTransID          *string   `json:"threeds_ds_trans_id"`
	ThreeDSChallengeIndicator *string   `json:"threeds_challenge_indicator"`
	ProcessorErrorCode        *string   `json:"processor_error_code"`
	ProcessorErrorMessage     *string   `json:"processor_error_message"`
	NetworkAdviceCode         *string   `json:"network_advice_code"`
	NetworkDeclineCode        *string   `json:"network_decline_code"`
	AcquirerTransID           *string   `json:"acquirer_trans_id"`
	FeeDetail                 FeeDetail `json:"fee_detail"`
}

// FeeDetail is a webhook's fees: a summary of all its lines, of those
// deducted from the payout and of those billed separately, and the lines.
type FeeDetail struct {
	TotalFeeSummary    FeeSummary `json:"total_fee_summary"`
	DeductedFeeSummary FeeSummary `json:"deducted_fee_summary"`
	BillableFeeSummary FeeSummary `json:"billable_fee_summary"`
	FeeLines           []FeeLine  `json:"fee_lines"`
}

// FeeSummary totals fee lines. CalculationMode is EXACT, ESTIMATED or
// MIXED.
type FeeSummary struct {
	TotalAmount     Amount `json:"total_amount"`
	Currency        string `json:"currency"`
	CalculationMode string `json:"calculation_mode"`
	LineCount       int    `json:"line_count"`
}

// FeeLine is one fee of a payment. Amounts keep 2 to 6 decimals in every
// currency; SettlementType is DEDUCTED or BILLABLE.
type FeeLine struct {
	FeeCode         string `json:"fee_code"`
	FeeAmount       Amount `json:"fee_amount"`
	Currency        string `json:"currency"`
	SettlementType  string `json:"settlement_type"`
	CalculationMode string `json:"calculation_mode"`
}

// DecodeWebhook decodes a webhook body. Verify it first
// (WebhookVerifier.ReadWebhook does both): anyone can post a body.
func DecodeWebhook(body []byte) (*Webhook, error) {
	var w Webhook
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("paylink: decode webhook: %w", err)
	}
	return &w, nil
}
