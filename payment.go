package paylink

import (
	"time"
)

// Status is the state of a transaction.
type Status string

// Transaction statuses. PROCESSING is internal: a transaction sits in it
// only between consuming its transaction token and the processor's answer,
// and is shown to clients as PENDING.
const (
	StatusProcessing             Status = "PROCESSING"
	StatusApproved               Status = "APPROVED"
	StatusDeclined               Status = "DECLINED"
	StatusFailed                 Status = "FAILED"
	StatusRequiresAuthentication Status = "REQUIRES_AUTHENTICATION"
	StatusPreAuthorised          Status = "PRE_AUTHORISED"
	StatusPreAuthorisedReversed  Status = "PRE_AUTHORISED_REVERSED"
	StatusPending                Status = "PENDING"
	// StatusUnknown needs review: a processor call's answer was lost and
	// the processor could not say what happened when recovery asked. It
	// is shown as is; no webhook claims success or failure, a refund's
	// reservation stays reserved, and every recovery run asks again.
	StatusUnknown Status = "UNKNOWN"
)

// transitions is the one state machine of a transaction: from -> allowed next.
var transitions = map[Status][]Status{
	StatusProcessing: {StatusApproved, StatusDeclined, StatusFailed,
		StatusRequiresAuthentication, StatusPreAuthorised, StatusPending, StatusPreAuthorisedReversed, StatusUnknown},
	// Needs review: only the processor's answer to a later inquiry moves
	// it on, to what the interrupted operation would have recorded.
	StatusUnknown: {StatusApproved, StatusDeclined, StatusFailed,
		StatusPreAuthorised, StatusPending, StatusPreAuthorisedReversed},
	StatusRequiresAuthentication: {StatusProcessing, StatusDeclined, StatusFailed},
	// Card lifecycle: a capture or cancel first claims the hold by moving
	// it to PROCESSING (one winner), then records the processor's answer.
	StatusPreAuthorised: {StatusApproved, StatusPreAuthorisedReversed, StatusProcessing},
	StatusPending:       {StatusApproved, StatusDeclined},
}

// CanTransition reports whether the state machine allows from -> to. A
// write that keeps the status (recording a challenge's answer) is not a
// transition and is always allowed.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Public is the status shown to clients.
func (s Status) Public() Status {
	if s == StatusProcessing {
		return StatusPending
	}
	return s
}

// Payment types (webhook payment_type).
const (
	PaymentTypeCard        = "CreditCard"
	PaymentTypeApplePay    = "ApplePay"
	PaymentTypeGooglePay   = "GooglePay"
	PaymentTypeBankAccount = "BankAccount"
	PaymentTypeZip         = "Zip"
)

// Channels (webhook webhook_type).
const (
	ChannelAPI = "API"
	ChannelHPP = "HPP"
	ChannelVT  = "VT"
)

// Transaction is one payment attempt: a card purchase, a hold, or a
// direct debit. Amounts are minor units of Currency.
type Transaction struct {
	Reference     string
	MerchantID    string
	InvoiceNumber string
	PaymentType   string
	Channel       string
	Status        Status
	Version       int64 // incremented by every update; the compare-and-set guard
	Currency      string
	Amount        int64 // sale amount, excluding surcharge and fee
	Surcharge     int64
	Fee           int64 // direct debit fee added to the total
	Total         int64 // amount charged: sale + surcharge + fee (captured total after capture)
	PreAuth       bool
	PreAuthAmount int64 // amount held
	Refunded      int64 // sum of refunds approved or awaiting their answer (reserved at PROCESSING, given back if FAILED): what can no longer be refunded
	CardToken     string
	PaymentLinkID string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	ProcessedAt   time.Time // transaction_time_utc; zero while authentication is required
	// Secret is a sealed instrument number kept with the transaction
	// (a direct debit's account number); empty for cards, which live in
	// the card vault.
	Secret  SealedSecret
	Details TransactionDetails

	// AuthenticationURL is not stored: it is set on the result of an
	// operation that requires 3-D Secure, and holds the challenge page
	// address with its one-time secret.
	AuthenticationURL string
}

// TransactionDetails holds the parts of a transaction that are carried, not queried.
// It is stored as one JSON document.
type TransactionDetails struct {
	Card            *CardInfo         `json:"card,omitempty"`
	RegionClass     string            `json:"region_class,omitempty"`
	CardMultiUse    bool              `json:"card_multi_use,omitempty"`
	ReturnCardToken bool              `json:"return_card_token,omitempty"`
	Customer        Customer          `json:"customer"`
	SurchargeRate   Percent           `json:"surcharge_rate,omitempty"`
	ApplySurcharge  bool              `json:"apply_surcharge,omitempty"`
	ThreeDS         *ThreeDS          `json:"threeds,omitempty"`
	AVSResult       string            `json:"avs_result,omitempty"`
	CVVResult       string            `json:"cvv_result,omitempty"`
	AuthCode        string            `json:"auth_code,omitempty"`
	AcquirerTransID string            `json:"acquirer_trans_id,omitempty"`
	Decline         *Decline          `json:"decline,omitempty"`
	Message         string            `json:"message,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	BankAccount     *BankAccountInfo  `json:"bank_account,omitempty"`
	// DirectDebitFee is the merchant's direct debit fee for this debit in
	// minor units, whether or not it was added to the total (Fee); the
	// webhook's DD_FEE fee line carries it.
	DirectDebitFee int64 `json:"direct_debit_fee,omitempty"`
	// WebhookURL is the dynamic webhook of the payment link this
	// transaction paid, delivered in addition to the company webhook.
	WebhookURL string            `json:"webhook_url,omitempty"`
	Extra      map[string]string `json:"extra,omitempty"`
	// BrowserHash is the hash of the page cookie of the browser that
	// started a payment link attempt (LinkPayment.Browser: the hosted
	// page or the virtual terminal, any payment method): a second payment
	// from that browser while this one is answered (a double click, a
	// reload of the form's POST) waits for its outcome, and only that
	// browser's open 3-D Secure attempt gives way to a new one. Attempts
	// stored before it have their hash in ThreeDS.BrowserHash alone
	// (startedBy).
	BrowserHash []byte `json:"browser_hash,omitempty"`
	// Pending is the follow-up operation (capture or release of a hold)
	// whose processor call is in flight, stored with the claim so that
	// recovery can ask about it and record it exactly as the caller would.
	Pending *PendingOp `json:"pending,omitempty"`
}

// PendingOp is a claimed hold's operation: a capture of Amount plus
// Surcharge, or a release (cancel or expiry) with its Message.
type PendingOp struct {
	Op             string  `json:"op"` // capture, cancel or expire
	Amount         int64   `json:"amount,omitempty"`
	Surcharge      int64   `json:"surcharge,omitempty"`
	SurchargeRate  Percent `json:"surcharge_rate,omitempty"`
	ApplySurcharge bool    `json:"apply_surcharge,omitempty"`
	Message        string  `json:"message,omitempty"`
}

// Customer is the payer as the request described them.
type Customer struct {
	ID            string `json:"id,omitempty"`
	Reference     string `json:"reference,omitempty"`
	Email         string `json:"email,omitempty"`
	FirstName     string `json:"first_name,omitempty"`
	LastName      string `json:"last_name,omitempty"`
	Phone         string `json:"phone,omitempty"`
	Address       string `json:"address,omitempty"`
	Address2      string `json:"address2,omitempty"`
	City          string `json:"city,omitempty"`
	State         string `json:"state,omitempty"`
	Postcode      string `json:"postcode,omitempty"`
	CountryCode   string `json:"country_code,omitempty"`
	IPAddress     string `json:"ip_address,omitempty"`
	Timezone      string `json:"timezone,omitempty"`
	UserAgent     string `json:"user_agent,omitempty"`
	AcceptedTerms bool   `json:"accepted_terms,omitempty"`
}

// ThreeDS is the 3-D Secure record of a transaction (webhook threeds_*).
type ThreeDS struct {
	Requested          bool   `json:"requested"`
	RedirectURL        string `json:"redirect_url,omitempty"` // the merchant's return address
	ChallengeHash      string `json:"challenge_hash,omitempty"`
	ChallengeExpiresAt int64  `json:"challenge_expires_at,omitempty"` // unix seconds
	// AttemptExpiresAt ends the authentication attempt (unix seconds):
	// after it the transaction can never be authorised, answered or not.
	AttemptExpiresAt   int64  `json:"attempt_expires_at,omitempty"`
	ChallengeDone      bool   `json:"challenge_done,omitempty"`
	Result             string `json:"result,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Version            string `json:"version,omitempty"`
	ECI                string `json:"eci,omitempty"`
	DSTransID          string `json:"ds_trans_id,omitempty"`
	ChallengeIndicator string `json:"challenge_indicator,omitempty"`
	// BrowserHash is TransactionDetails.BrowserHash of a hosted page's attempt,
	// kept here too for builds that read it only here (a rolling
	// upgrade); newer builds read TransactionDetails.BrowserHash first.
	BrowserHash []byte `json:"browser_hash,omitempty"`
}

// Decline carries processor and network decline details.
type Decline struct {
	ProcessorCode    string `json:"processor_code,omitempty"`
	ProcessorMessage string `json:"processor_message,omitempty"`
	NetworkAdvice    string `json:"network_advice,omitempty"`
	NetworkDecline   string `json:"network_decline,omitempty"`
}

// BankAccountInfo describes a debited bank account without its number.
type BankAccountInfo struct {
	Masked     string `json:"masked"`
	BSB        string `json:"bsb"`
	HolderName string `json:"holder_name"`
}

// PayerSurcharge is what the payer paid above the sale amount: a card
// surcharge, or a direct debit fee passed on to the payer. It is the
// "surcharge" of webhooks, settlement reports and payment exports alike,
// so that sale amount plus surcharge is always what the payer was
// charged.
func (t *Transaction) PayerSurcharge() int64 { return t.Surcharge + t.Fee }

// Taken is the money t took: its total once APPROVED (a sale approved,
// a hold captured, a direct debit cleared), refunds not deducted; 0 for
// any other status (declined, failed, pending, held and not captured, a
// hold released, unknown).
func (t *Transaction) Taken() int64 {
	if t.Status != StatusApproved {
		return 0
	}
	return t.Total
}

// Refundable is what can still be refunded of a transaction: what it
// took less its refunds (the taken_net_of_refunds of the payments CSV).
func (t *Transaction) Refundable() int64 {
	if t.Status != StatusApproved {
		return 0
	}
	return t.Total - t.Refunded
}

// HoldApproved reports whether t is a pre-authorisation whose hold the
// issuer approved: held now (PRE_AUTHORISED), captured (APPROVED),
// released (PRE_AUTHORISED_REVERSED), or being captured or released
// (PROCESSING or UNKNOWN with the hold's approval code). A hold that was
// declined or failed, or still awaits 3-D Secure or the processor's first
// answer, never held anything.
func (t *Transaction) HoldApproved() bool {
	if !t.PreAuth {
		return false
	}
	switch t.Status {
	case StatusPreAuthorised, StatusApproved, StatusPreAuthorisedReversed:
		return true
	case StatusProcessing, StatusUnknown:
		return t.Details.AuthCode != ""
	}
	return false
}

// Refund is a return of funds against an approved transaction.
type Refund struct {
	Reference            string
	MerchantID           string
	TransactionReference string
	InvoiceNumber        string
	Status               Status
	Currency             string
	Amount               int64
	CreatedAt            time.Time
	Details              RefundDetails
}

// RefundDetails holds the carried parts of a refund.
type RefundDetails struct {
	Customer Customer          `json:"customer"`
	Message  string            `json:"message,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// SpecTimeLayout is the spec's time shape, YYYY-MM-DD hh:mm:ss AM|PM, in UTC.
const SpecTimeLayout = "2006-01-02 03:04:05 PM"

// FormatSpecTime renders t in the spec's shape, "" for the zero time.
func FormatSpecTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(SpecTimeLayout)
}
