package paylink

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Webhook delivery states.
const (
	DeliveryPending   = "pending"   // due at NextAttemptAt (or leased by a dispatcher)
	DeliveryDelivered = "delivered" // the receiver answered HTTP 200
	DeliveryFailed    = "failed"    // the last attempt failed and no retry is due
)

// Webhook targets: the merchant's company webhook, or the dynamic
// webhook_url of the payment link that was paid.
const (
	TargetCompany = "company"
	TargetDynamic = "dynamic"
)

// WebhookDelivery is one outbox row: a payload to POST to one URL, and
// where its delivery stands. Its ID is the Standard Webhooks webhook-id,
// the same for every attempt.
type WebhookDelivery struct {
	ID             string
	MerchantID     string
	Reference      string // transaction reference
	EventStatus    Status // the status the payload reports
	Target         string
	URL            string
	Payload        []byte // the exact JSON body, built at enqueue time
	State          string
	Attempts       int // finished attempts
	NextAttemptAt  time.Time
	LeaseToken     string    // set while a dispatcher holds the row
	LeaseUntil     time.Time // when an abandoned lease (a crash) may be taken over
	LastStatusCode int
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeliveredAt    time.Time
	// HeldFor names the receiver this pending row is held for while that
	// receiver hangs; "" when it is not held. A receiver is the merchant,
	// the target when it is the dynamic webhook, and the URL's scheme,
	// host and port, not its path (a merchant's paths on a host hang
	// together); rows held by older versions name a host and port alone,
	// or the company webhook's receiver for a dynamic row.
	HeldFor string
}

// WebhookAttempt is one entry of the delivery log.
type WebhookAttempt struct {
	DeliveryID string
	Attempt    int
	URL        string
	StatusCode int // 0 when no HTTP response was received
	Latency    time.Duration
	Error      string
	StartedAt  time.Time
	// ResponseExcerpt is the start of the receiver's response body, at
	// most ResponseExcerptBytes, as text (ResponseExcerpt): enough to see
	// why a receiver refused a webhook.
	ResponseExcerpt string
}

// WebhookFinish is a leased delivery's state after an attempt, to be
// written if the lease (LeaseToken) still holds.
type WebhookFinish struct {
	Delivery   *WebhookDelivery
	LeaseToken string
}

// WebhookFilter selects deliveries for the operator's list, the
// merchant's delivery log and a payment's timeline.
type WebhookFilter struct {
	MerchantID string // "" for all merchants
	Reference  string // only deliveries about this transaction, when set
	FailedOnly bool
	// BeforeCreated and BeforeID keep deliveries older than this
	// position (keyset paging); zero for the newest.
	BeforeCreated time.Time
	BeforeID      string
	Limit         int
}

// emitsWebhook reports whether a transaction in status s notifies the
// merchant. The spec fires one webhook per payment attempt, on that
// attempt's outcome (its state table and 6.2.5), so the four webhook
// statuses of the spec do and so does FAILED, the outcome of an attempt
// that could not be processed (docs/webhooks.md says how receivers see
// it). PROCESSING and REQUIRES_AUTHENTICATION are intermediate, and
// PRE_AUTHORISED_REVERSED (cancel or automatic expiry) is not a status
// receivers know. A capture moves the hold to APPROVED, so it emits an
// APPROVED webhook for the captured total.
func emitsWebhook(s Status) bool {
	switch s {
	case StatusApproved, StatusDeclined, StatusPreAuthorised, StatusPending, StatusFailed:
		return true
	}
	return false
}

// enqueueWebhooks inserts the outbox rows of t's new status inside tx:
// one for the company webhook and one for the dynamic webhook, the same
// URL only once. It is called from outcome, so the rows commit with the
// status change or not at all.
func (s *Service) enqueueWebhooks(tx Tx, t *Transaction, om *outcomeMerchant) error {
	if !emitsWebhook(t.Status) {
		return nil
	}
	m, err := om.get()
	if err != nil {
		return fmt.Errorf("webhook merchant: %w", err)
	}
	targets := webhookTargets(m.Settings.Webhook.URL, t.Details.WebhookURL)
	if len(targets) == 0 {
		return nil
	}
	payload, err := WebhookPayload(t, m)
	if err != nil {
		return err
	}
	now := s.now()
	for _, tg := range targets {
		id, err := s.reference("msg_")
		if err != nil {
			return err
		}
		d := &WebhookDelivery{ID: id, MerchantID: m.ID, Reference: t.Reference, EventStatus: t.Status.Public(),
			Target: tg.kind, URL: tg.url, Payload: payload, State: DeliveryPending,
			NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
		if err := tx.CreateWebhookDelivery(d); err != nil {
			return err
		}
	}
	return nil
}

type webhookTarget struct{ kind, url string }

// webhookTargets lists the company and dynamic URLs, the dynamic one
// dropped when it is the same address as the company one.
func webhookTargets(company, dynamic string) []webhookTarget {
	var out []webhookTarget
	if company != "" {
		out = append(out, webhookTarget{TargetCompany, company})
	}
	if dynamic != "" && (company == "" || normalizeURL(dynamic) != normalizeURL(company)) {
		out = append(out, webhookTarget{TargetDynamic, dynamic})
	}
	return out
}

// normalizeURL compares addresses as equal when they differ only in the
// case of scheme and host, in the port's spelling (an explicit default
// port, leading zeros), in an empty query ("/h?"), in a fragment,
// which is never sent, or in percent-encoding (RFC 3986 6.2.2:
// normalizeEscapes). The path and query are taken as written: url.URL
// rebuilds a path holding a character it would escape from the decoded
// one, which made an escaped '/' a separator.
func normalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Opaque != "" {
		return raw
	}
	scheme := strings.ToLower(u.Scheme)
	host := normalizeAuthority(scheme, u.Hostname(), u.Port())
	if u.User != nil {
		host = u.User.String() + "@" + host
	}
	path := u.RawPath // the path as written, when it is not url's own escaping of u.Path
	if path == "" {
		path = u.EscapedPath()
	}
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + host + normalizeEscapes(path)
	if u.RawQuery != "" {
		out += "?" + normalizeEscapes(u.RawQuery)
	}
	return out
}

// normalizeAuthority is the host and port of a URL of scheme as
// normalizeURL compares them: the host lower case (an IPv6 literal in
// brackets; an internationalised name is not its "xn--" form here, as in
// the whitelist), the port as its number, or none when it is the
// scheme's default ("http://h:080" is "http://h").
func normalizeAuthority(scheme, hostname, port string) string {
	host := strings.ToLower(hostname)
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p, isDefault := URLPort(scheme, port); !isDefault && p != "" {
		return host + ":" + p
	}
	return host
}

// WebhookOrigin is a webhook address's scheme and host, "the receiver"
// when it has none: what logs and pages every role sees tell of it, since
// its path or query may hold the receiver's own secret.
func WebhookOrigin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the receiver"
	}
	return u.Scheme + "://" + u.Host
}

// URLPort is the port a URL of scheme sends to, written as its number
// (":0443" is "443"), the scheme's default when the URL names none (80
// for http, 443 for https, "" for another scheme), and whether it is that
// default: the one reading of a webhook URL's port, for comparing two
// addresses (normalizeURL) and naming a receiver (the dispatcher). A port
// that is no 16-bit number is returned as written.
func URLPort(scheme, port string) (string, bool) {
	def := ""
	switch scheme {
	case "http":
		def = "80"
	case "https":
		def = "443"
	}
	if port == "" {
		return def, def != ""
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return port, false
	}
	p := strconv.FormatUint(n, 10)
	return p, p == def
}

// normalizeEscapes normalises the percent-encoding of a URL's path or
// query as written (RFC 3986 6.2.2.2): an escape of an unreserved
// character (ALPHA, DIGIT, '-', '.', '_', '~') is decoded, the hex digits
// of any other are upper-cased, and a byte a URL may not hold as it is
// (a space, '|', a UTF-8 letter's bytes) is escaped, so that "x|y" and
// "x%7cy" are one address; a '%' not followed by two hex digits is kept.
func normalizeEscapes(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				if unreserved(byte(v)) {
					b.WriteByte(byte(v))
				} else {
					b.WriteString("%" + strings.ToUpper(s[i+1:i+3]))
				}
				i += 2
				continue
			}
		}
		if c == '%' || unreserved(c) || strings.IndexByte("!$&'()*+,;=:@/?", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// unreserved reports whether c is an unreserved character of RFC 3986
// (2.3), which percent-encoding never changes the meaning of.
func unreserved(c byte) bool {
	switch {
	case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~'
}

// WebhookPayload renders the JSON body of a payment-outcome webhook (spec
// 2.2): the full form, or the older 16-field form when the merchant asked
// for it.
func WebhookPayload(t *Transaction, m *Merchant) ([]byte, error) {
	var v any = fullPayload(t, m)
	if m.Settings.Webhook.Legacy {
		v = legacyPayload(t, m)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode webhook payload: %w", err)
	}
	return b, nil
}

// legacyWebhook is the older payload form: exactly its 16 fields.
type legacyWebhook struct {
	TransactionReference string `json:"transaction_reference"`
	CustomerReference    string `json:"customer_reference"`
	InvoiceNumber        string `json:"invoice_number"`
	TransactionTimeUTC   string `json:"transaction_time_utc"`
	Status               string `json:"status"`
	Amount               string `json:"amount"`
	Currency             string `json:"currency"`
	MaskedCardNumber     string `json:"masked_card_number"`
	CardBrand            string `json:"card_brand"`
	CardExpiry           string `json:"card_expiry"`
	EmailAddress         string `json:"email_address"`
	MID                  string `json:"mid"`
	TradingName          string `json:"trading_name"`
	SaleAmount           string `json:"sale_amount"`
	Surcharge            string `json:"surcharge"`
	WebhookType          string `json:"webhook_type"`
}

// fullWebhook is the full payload; field order follows the spec table.
type fullWebhook struct {
	TransactionReference      string     `json:"transaction_reference"`
	CustomerReference         string     `json:"customer_reference"`
	InvoiceNumber             string     `json:"invoice_number"`
	TransactionTimeUTC        string     `json:"transaction_time_utc"`
	Status                    string     `json:"status"`
	Amount                    string     `json:"amount"`
	Currency                  string     `json:"currency"`
	MaskedCardNumber          string     `json:"masked_card_number"`
	CardBrand                 string     `json:"card_brand"`
	CardFundingType           string     `json:"card_funding_type"`
	CardConsumerType          string     `json:"card_consumer_type"`
	CardIssuerCountry         string     `json:"card_issuer_country"`
	CardRegionClass           string     `json:"card_region_class"`
	CardHolderName            string     `json:"card_holder_name"`
	CardExpiry                string     `json:"card_expiry"`
	CardToken                 *string    `json:"card_token"`
	EmailAddress              string     `json:"email_address"`
	CustomerEmail             string     `json:"customer_email"`
	CustomerFirstName         string     `json:"customer_first_name"`
	CustomerLastName          string     `json:"customer_last_name"`
	CustomerPhone             string     `json:"customer_phone"`
	CustomerAddress           string     `json:"customer_address"`
	CustomerAddress2          string     `json:"customer_address2"`
	CustomerCity              string     `json:"customer_city"`
	CustomerState             string     `json:"customer_state"`
	CustomerPostcode          string     `json:"customer_postcode"`
	CustomerCountryCode       string     `json:"customer_country_code"`
	MID                       string     `json:"mid"`
	TradingName               string     `json:"trading_name"`
	SaleAmount                string     `json:"sale_amount"`
	Surcharge                 string     `json:"surcharge"`
	WebhookType               string     `json:"webhook_type"`
	PaymentType               string     `json:"payment_type"`
	Booking                   *string    `json:"booking"`
	BusinessUnit              *string    `json:"business_unit"`
	PaymentLink               *string    `json:"payment_link"`
	PaymentSchedule           *string    `json:"payment_schedule"`
	PresentmentAmount         *string    `json:"presentment_amount"`
	PresentmentCurrency       *string    `json:"presentment_currency"`
	TransactionAuthCode       *string    `json:"transaction_auth_code"`
	AVSResult                 *string    `json:"avs_result"`
	CVVResult                 *string    `json:"cvv_result"`
	ThreeDSResult             *string    `json:"threeds_result"`
	ThreeDSResultReason       *string    `json:"threeds_result_reason"`
	ThreeDSVersion            *string    `json:"threeds_version"`
	ThreeDSECI                *string    `json:"threeds_eci"`
	ThreeDSDSTransID          *string    `json:"threeds_ds_trans_id"`
	ThreeDSChallengeIndicator *string    `json:"threeds_challenge_indicator"`
	ProcessorErrorCode        *string    `json:"processor_error_code"`
	ProcessorErrorMessage     *string    `json:"processor_error_message"`
	NetworkAdviceCode         *string    `json:"network_advice_code"`
	NetworkDeclineCode        *string    `json:"network_decline_code"`
	AcquirerTransID           *string    `json:"acquirer_trans_id"`
	FeeDetail                 feeDetailJ `json:"fee_detail"`
}

type feeDetailJ struct {
	TotalFeeSummary    feeSummaryJ `json:"total_fee_summary"`
	DeductedFeeSummary feeSummaryJ `json:"deducted_fee_summary"`
	BillableFeeSummary feeSummaryJ `json:"billable_fee_summary"`
	FeeLines           []feeLineJ  `json:"fee_lines"`
}

type feeSummaryJ struct {
	TotalAmount     string `json:"total_amount"`
	Currency        string `json:"currency"`
	CalculationMode string `json:"calculation_mode"`
	LineCount       int    `json:"line_count"`
}

type feeLineJ struct {
	FeeCode         string `json:"fee_code"`
	FeeAmount       string `json:"fee_amount"`
	Currency        string `json:"currency"`
	SettlementType  string `json:"settlement_type"`
	CalculationMode string `json:"calculation_mode"`
}

// opt is a nullable string: nil (JSON null) when empty.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// webhookTime is transaction_time_utc: when the outcome was processed,
// or for an outcome without a processing time (a submitted direct
// debit) when the transaction last changed.
func webhookTime(t *Transaction) string {
	if !t.ProcessedAt.IsZero() {
		return FormatSpecTime(t.ProcessedAt)
	}
	return FormatSpecTime(t.UpdatedAt)
}

// amounts returns sale_amount, surcharge and amount. A direct debit fee
// passed on to the payer (Fee) counts as surcharge, so that amount, the
// sum of the other two, is always what the payer was charged.
func amounts(t *Transaction) (sale, surcharge, total string) {
	extra := t.PayerSurcharge()
	return FormatIn(t.Amount, t.Currency), FormatIn(extra, t.Currency), FormatIn(t.Amount+extra, t.Currency)
}

// instrument is the payment instrument part of a payload: the card, or
// for a bank account its obfuscated number and holder in the
// masked_card_number and card_holder_name fields with the card-only
// fields "". An alternative payment method without a card (Zip) names
// itself in card_brand, as the spec allows. The spec marks none of these
// fields nullable and sends every other scalar as a string, so a field
// that does not apply is "" rather than null.
type instrument struct {
	masked, brand, funding, consumer, country, region, holder, expiry string
}

func instrumentOf(t *Transaction) instrument {
	d := t.Details
	switch {
	case d.Card != nil:
		c := d.Card
		return instrument{
			masked: c.Masked, brand: strings.ToLower(c.Brand), funding: c.Funding,
			consumer: c.ConsumerType, country: c.Country, region: d.RegionClass,
			holder: c.HolderName, expiry: c.ExpiryString(),
		}
	case d.BankAccount != nil:
		return instrument{masked: d.BankAccount.Masked, holder: d.BankAccount.HolderName}
	case t.PaymentType != PaymentTypeCard && t.PaymentType != "":
		return instrument{brand: strings.ToLower(t.PaymentType)}
	}
	return instrument{}
}

func legacyPayload(t *Transaction, m *Merchant) legacyWebhook {
	sale, surcharge, total := amounts(t)
	in := instrumentOf(t)
	return legacyWebhook{
		TransactionReference: t.Reference, CustomerReference: t.Details.Customer.Reference,
		InvoiceNumber: t.InvoiceNumber, TransactionTimeUTC: webhookTime(t), Status: string(t.Status.Public()),
		Amount: total, Currency: t.Currency, MaskedCardNumber: in.masked, CardBrand: in.brand, CardExpiry: in.expiry,
		EmailAddress: t.Details.Customer.Email, MID: m.ID, TradingName: m.TradingName,
		SaleAmount: sale, Surcharge: surcharge, WebhookType: t.Channel,
	}
}

func fullPayload(t *Transaction, m *Merchant) fullWebhook {
	sale, surcharge, total := amounts(t)
	in := instrumentOf(t)
	d, c := t.Details, t.Details.Customer
	w := fullWebhook{
		TransactionReference: t.Reference, CustomerReference: c.Reference, InvoiceNumber: t.InvoiceNumber,
		TransactionTimeUTC: webhookTime(t), Status: string(t.Status.Public()), Amount: total, Currency: t.Currency,
		MaskedCardNumber: in.masked, CardBrand: in.brand, CardFundingType: in.funding, CardConsumerType: in.consumer,
		CardIssuerCountry: in.country, CardRegionClass: in.region, CardHolderName: in.holder, CardExpiry: in.expiry,
		EmailAddress: c.Email, CustomerEmail: c.Email, CustomerFirstName: c.FirstName, CustomerLastName: c.LastName,
		CustomerPhone: c.Phone, CustomerAddress: c.Address, CustomerAddress2: c.Address2, CustomerCity: c.City,
		CustomerState: c.State, CustomerPostcode: c.Postcode, CustomerCountryCode: c.CountryCode,
		MID: m.ID, TradingName: m.TradingName, SaleAmount: sale, Surcharge: surcharge,
		WebhookType: t.Channel, PaymentType: t.PaymentType, PaymentLink: opt(t.PaymentLinkID),
		TransactionAuthCode: opt(d.AuthCode), AVSResult: opt(d.AVSResult), CVVResult: opt(d.CVVResult),
		AcquirerTransID: opt(d.AcquirerTransID), FeeDetail: feeDetail(t, PricingOf(m)),
	}
	if d.ReturnCardToken {
		w.CardToken = opt(t.CardToken)
	}
	if x := d.ThreeDS; x != nil {
		w.ThreeDSResult, w.ThreeDSResultReason, w.ThreeDSVersion = opt(x.Result), opt(x.Reason), opt(x.Version)
		w.ThreeDSECI, w.ThreeDSDSTransID, w.ThreeDSChallengeIndicator = opt(x.ECI), opt(x.DSTransID), opt(x.ChallengeIndicator)
	}
	if x := d.Decline; x != nil {
		w.ProcessorErrorCode, w.ProcessorErrorMessage = opt(x.ProcessorCode), opt(x.ProcessorMessage)
		w.NetworkAdviceCode, w.NetworkDeclineCode = opt(x.NetworkAdvice), opt(x.NetworkDecline)
	}
	return w
}

// feeDetail renders fee_detail (spec 2.3) for t under p.
func feeDetail(t *Transaction, p Pricing) feeDetailJ {
	lines := p.FeeLines(t)
	summary := func(keep func(FeeLine) bool) feeSummaryJ {
		s := SummarizeFees(lines, t.Currency, keep)
		return feeSummaryJ{TotalAmount: FormatMicros(s.TotalMicros), Currency: s.Currency,
			CalculationMode: s.Calculation, LineCount: s.LineCount}
	}
	out := feeDetailJ{
		TotalFeeSummary:    summary(func(FeeLine) bool { return true }),
		DeductedFeeSummary: summary(func(l FeeLine) bool { return l.Settlement == SettlementDeducted }),
		BillableFeeSummary: summary(func(l FeeLine) bool { return l.Settlement == SettlementBillable }),
		FeeLines:           []feeLineJ{},
	}
	for _, l := range lines {
		out.FeeLines = append(out.FeeLines, feeLineJ{FeeCode: l.Code, FeeAmount: FormatMicros(l.Micros),
			Currency: l.Currency, SettlementType: l.Settlement, CalculationMode: l.Calculation})
	}
	return out
}
