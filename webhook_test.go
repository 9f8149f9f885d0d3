package paylink

import (
	"encoding/json"
	"testing"
	"time"
)

// notNullable are the scalar webhook fields that spec 2.2 does not mark
// nullable: "all scalar values are sent as strings unless marked
// nullable".
var notNullable = []string{"transaction_reference", "customer_reference", "invoice_number", "transaction_time_utc",
	"status", "amount", "currency", "masked_card_number", "card_brand", "card_funding_type", "card_consumer_type",
	"card_issuer_country", "card_region_class", "card_holder_name", "card_expiry", "email_address", "customer_email",
	"customer_first_name", "customer_last_name", "customer_phone", "customer_address", "customer_address2",
	"customer_city", "customer_state", "customer_postcode", "customer_country_code", "mid", "trading_name",
	"sale_amount", "surcharge", "webhook_type", "payment_type"}

func TestWebhookPayloadFields(t *testing.T) {
	m := &Merchant{ID: "MTEST", TradingName: "Acme"}
	at := time.Date(2026, 11, 21, 13, 4, 5, 0, time.UTC)
	bank := &Transaction{Reference: "pr_dd", Status: StatusPending, PaymentType: PaymentTypeBankAccount, Channel: ChannelAPI,
		Currency: "AUD", Amount: 5000, Fee: 100, UpdatedAt: at,
		Details: TransactionDetails{BankAccount: &BankAccountInfo{Masked: "*****678", BSB: "062000", HolderName: "Jo Citizen"}, DirectDebitFee: 100}}
	card := &Transaction{Reference: "pr_3ds", Status: StatusPreAuthorised, PaymentType: PaymentTypeCard, Channel: ChannelHPP,
		Currency: "AUD", Amount: 1000, ProcessedAt: at, CardToken: "tok", PaymentLinkID: "pl_1",
		Details: TransactionDetails{Card: &CardInfo{Masked: "400000******3220", Brand: "VISA", ExpiryMonth: 3, ExpiryYear: 2031},
			ReturnCardToken: true, AuthCode: "123456",
			ThreeDS: &ThreeDS{Result: "authenticated", Version: "2.2.0", ECI: "05", DSTransID: "ds-1", ChallengeIndicator: "challenge"}}}
	zip := &Transaction{Reference: "pr_zip", Status: StatusApproved, PaymentType: PaymentTypeZip, Channel: ChannelHPP,
		Currency: "AUD", Amount: 1050, ProcessedAt: at, Details: TransactionDetails{AuthCode: "a1b2c3"}}
	jpy := &Transaction{Reference: "pr_jpy", Status: StatusApproved, PaymentType: PaymentTypeCard, Channel: ChannelAPI,
		Currency: "JPY", Amount: 1000, Surcharge: 12, ProcessedAt: at}
	kwd := &Transaction{Reference: "pr_kwd", Status: StatusApproved, PaymentType: PaymentTypeCard, Channel: ChannelAPI,
		Currency: "KWD", Amount: 1234, ProcessedAt: at}
	// A 3-D Secure decline has no processor answer: the reason is in
	// threeds_result / threeds_result_reason (docs/webhooks.md).
	abandoned := &Transaction{Reference: "pr_3ds_abandoned", Status: StatusDeclined, PaymentType: PaymentTypeCard, Channel: ChannelHPP,
		Currency: "AUD", Amount: 1000, ProcessedAt: at,
		Details: TransactionDetails{Card: &CardInfo{Masked: "400000******3220", Brand: "VISA", ExpiryMonth: 3, ExpiryYear: 2031},
			ThreeDS: &ThreeDS{Requested: true, Result: ThreeDSFailed, Reason: ThreeDSAbandoned, Version: "2.2.0", ChallengeIndicator: "challenge"}}}
	tests := []struct {
		name string
		t    *Transaction
		want map[string]any
	}{
		// Amounts carry the currency's own decimals (docs/api.md, "Where
		// paylink differs from the spec").
		{name: "JPY amounts without decimals", t: jpy, want: map[string]any{"amount": "1012", "sale_amount": "1000", "surcharge": "12"}},
		{name: "KWD amounts with 3 decimals", t: kwd, want: map[string]any{"amount": "1.234", "sale_amount": "1.234", "surcharge": "0.000"}},
		{name: "Zip", t: zip, want: map[string]any{
			"status": "APPROVED", "payment_type": "Zip", "card_brand": "zip", "masked_card_number": "", "card_holder_name": "",
			"card_expiry": "", "card_funding_type": "", "card_consumer_type": "", "card_issuer_country": "", "card_region_class": "",
			"card_token": nil, "amount": "10.50",
		}},
		{name: "bank account", t: bank, want: map[string]any{
			"status": "PENDING", "masked_card_number": "*****678", "card_holder_name": "Jo Citizen", "card_brand": "",
			"card_expiry": "", "card_funding_type": "", "card_consumer_type": "", "card_issuer_country": "", "card_region_class": "", "sale_amount": "50.00", "surcharge": "1.00", "amount": "51.00",
			"payment_type": "BankAccount", "transaction_time_utc": "2026-11-21 01:04:05 PM", "transaction_auth_code": nil,
			"payment_link": nil, "card_token": nil,
		}},
		{name: "3-D Secure hold via a link", t: card, want: map[string]any{
			"status": "PRE_AUTHORISED", "card_brand": "visa", "card_expiry": "03/2031", "card_token": "tok", "payment_link": "pl_1",
			"webhook_type": "HPP", "threeds_result": "authenticated", "threeds_result_reason": nil, "threeds_version": "2.2.0",
			"threeds_eci": "05", "threeds_ds_trans_id": "ds-1", "threeds_challenge_indicator": "challenge",
			"transaction_auth_code": "123456", "amount": "10.00",
		}},
		{name: "3-D Secure decline", t: abandoned, want: map[string]any{
			"status": "DECLINED", "threeds_result": "failed", "threeds_result_reason": "abandoned", "threeds_eci": nil,
			"processor_error_code": nil, "processor_error_message": nil, "network_advice_code": nil, "network_decline_code": nil,
			"transaction_auth_code": nil,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := WebhookPayload(tt.t, m)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s: got %v, want %v", k, got[k], want)
				}
			}
			for _, k := range notNullable {
				if _, isString := got[k].(string); !isString {
					t.Errorf("%s: got %v, want a string (the spec does not mark it nullable)", k, got[k])
				}
			}
		})
	}
}

func TestDirectDebitFeeDetail(t *testing.T) {
	tr := &Transaction{Status: StatusPending, PaymentType: PaymentTypeBankAccount, Currency: "AUD", Amount: 5000,
		Details: TransactionDetails{DirectDebitFee: 125}}
	raw, err := json.Marshal(feeDetail(tr, DefaultPricing()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"total_fee_summary":{"total_amount":"1.25","currency":"AUD","calculation_mode":"EXACT","line_count":1},` +
		`"deducted_fee_summary":{"total_amount":"1.25","currency":"AUD","calculation_mode":"EXACT","line_count":1},` +
		`"billable_fee_summary":{"total_amount":"0.00","currency":"AUD","calculation_mode":"EXACT","line_count":0},` +
		`"fee_lines":[{"fee_code":"DD_FEE","fee_amount":"1.25","currency":"AUD","settlement_type":"DEDUCTED","calculation_mode":"EXACT"}]}`
	if string(raw) != want {
		t.Errorf("got %s, want %s", raw, want)
	}
}

// urlPair is two webhook addresses and whether normalizeURL should take
// them for one.
type urlPair struct {
	a, b string
	same bool
}

// wantSameURLs checks normalizeURL on each pair.
func wantSameURLs(t *testing.T, pairs []urlPair) {
	t.Helper()
	for _, p := range pairs {
		if got := normalizeURL(p.a) == normalizeURL(p.b); got != p.same {
			t.Errorf("%s and %s: got same %v (%q, %q), want %v", p.a, p.b, got, normalizeURL(p.a), normalizeURL(p.b), p.same)
		}
	}
}

// TestNormalizeURLPercentEncoding: addresses that differ only in
// percent-encoding are one resource (RFC 3986 6.2.2.2): escapes of
// unreserved characters (ALPHA, DIGIT, '-', '.', '_', '~') are decoded,
// the hex digits of the others upper-cased, in the path and the query;
// other escapes are kept (an escaped '/' is not a path separator). Spec
// 6.1 delivers a URL present in both targets once; the outgoing-webhook
// sweep found http://host/ok/%68ook and http://host/ok/hook delivered
// twice.
func TestNormalizeURLPercentEncoding(t *testing.T) {
	wantSameURLs(t, []urlPair{
		{"http://h.example/ok/%68ook", "http://h.example/ok/hook", true},
		{"http://h.example/%41%7a%30-%2E%5f%7E", "http://h.example/Az0-._~", true},
		{"http://h.example/a%2fb", "http://h.example/a%2Fb", true},
		{"http://h.example/a%2Fb", "http://h.example/a/b", false},
		{"http://h.example/a%c3%a9", "http://h.example/a%C3%A9", true},
		{"http://h.example/a%c3%a9", "http://h.example/aé", true},
		{"http://h.example/h?x=%61&y=%3d", "http://h.example/h?x=a&y=%3D", true},
		{"http://h.example/h?x=%3D", "http://h.example/h?x==", false},
		{"http://h.example/%48ook", "http://h.example/hook", false},     // H is not h: paths are case-sensitive
		{"http://h.example/h?x=%zz", "http://h.example/h?x=%ZZ", false}, // not escapes: kept as written
		{"http://h.example/x|y", "http://h.example/x%7cy", true},
		{"http://h.example/café", "http://h.example/caf%c3%a9", true},
		// url.URL rebuilds a path holding a character it escapes from
		// the decoded path, where %2F is a '/' (verification sweep).
		{"https://h.example/a/b/x|y", "https://h.example/a%2Fb/x|y", false},
		{"https://h.example/a/b/café", "https://h.example/a%2Fb/café", false},
		{"http://[::1]:80/h", "http://[::1]/h", true},
	})
	if got := len(webhookTargets("https://h.example/a/b/x|y", "https://h.example/a%2Fb/x|y")); got != 2 {
		t.Errorf("company https://h.example/a/b/x|y, dynamic https://h.example/a%%2Fb/x|y: got %d targets, want 2", got)
	}
	if got := len(webhookTargets("http://h.example/ok/hook", "http://h.example/ok/%68ook")); got != 1 {
		t.Errorf("company http://h.example/ok/hook, dynamic http://h.example/ok/%%68ook: got %d targets, want 1", got)
	}
}

// TestNormalizeURLHostAndPort: addresses that differ only in the host's
// case or in the port's spelling (an explicit default port, leading
// zeros) are one receiver, and spec 6.1 delivers a link webhook to the
// company URL once. Before, http://h:080/h beside http://h/h and
// :08080 beside :8080 were delivered twice. An internationalised name
// and its "xn--" form stay two addresses, as they are two whitelist
// entries (webhooks.md).
func TestNormalizeURLHostAndPort(t *testing.T) {
	wantSameURLs(t, []urlPair{
		{"http://h.example:80/h", "http://h.example/h", true},
		{"http://h.example:080/h", "http://h.example/h", true},
		{"https://h.example:443/h", "https://h.example/h", true},
		{"https://h.example:0443/h", "https://h.example/h", true},
		{"HTTPS://H.Example:443/h", "https://h.example/h", true},
		{"http://h.example:8080/h", "http://h.example:08080/h", true},
		{"http://h.example:8080/h", "http://h.example/h", false},
		{"http://h.example:443/h", "http://h.example/h", false},  // not http's default
		{"https://h.example:80/h", "https://h.example/h", false}, // nor https's
		{"http://h.example/h", "https://h.example/h", false},
		{"http://BÜCHER.example/h", "http://bücher.example:80/h", true},
		{"http://b%C3%BCcher.example/h", "http://bücher.example/h", true},
		{"http://bücher.example/h", "http://xn--bcher-kva.example/h", false},
		{"http://bücher.example/h", "http://bucher.example/h", false},
		{"http://[2001:DB8::1]:80/h", "http://[2001:db8::1]/h", true},
	})
	if got := len(webhookTargets("http://H.example:080/h", "http://h.example/h")); got != 1 {
		t.Errorf("company http://H.example:080/h, dynamic http://h.example/h: got %d targets, want 1", got)
	}
}

func TestWebhookTargetsAndStatuses(t *testing.T) {
	targets := []struct {
		company, dynamic string
		want             int
	}{
		{"https://a.example/h", "https://b.example/h", 2},
		{"https://a.example/h", "HTTPS://A.EXAMPLE:443/h", 1},
		{"https://a.example/h", "https://a.example/h?", 1},
		{"https://a.example/h", "https://a.example/h#x", 1},
		{"https://a.example/h", "https://a.example/h?x=1", 2},
		{"https://a.example/h", "https://a.example/other", 2},
		{"", "https://b.example/h", 1},
		{"https://a.example/h", "", 1},
		{"", "", 0},
	}
	for _, tt := range targets {
		if got := len(webhookTargets(tt.company, tt.dynamic)); got != tt.want {
			t.Errorf("targets(%q, %q): got %d, want %d", tt.company, tt.dynamic, got, tt.want)
		}
	}
	emits := map[Status]bool{StatusApproved: true, StatusDeclined: true, StatusPreAuthorised: true, StatusPending: true,
		StatusFailed: true, StatusProcessing: false, StatusRequiresAuthentication: false, StatusPreAuthorisedReversed: false}
	for s, want := range emits {
		if got := emitsWebhook(s); got != want {
			t.Errorf("emitsWebhook(%s): got %v, want %v", s, got, want)
		}
	}
}

func TestNextRetry(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		attempts  int
		now       time.Time
		wantDelay time.Duration
		wantRetry bool
	}{
		{1, created, time.Minute, true},
		{2, created, 2 * time.Minute, true},
		{10, created, 512 * time.Minute, true},
		{11, created, 12 * time.Hour, true},
		{40, created, 12 * time.Hour, true},
		{12, created.Add(61 * time.Hour), 12 * time.Hour, false},
	}
	for _, tt := range tests {
		next, retry := nextRetry(tt.attempts, created, tt.now)
		if next.Sub(tt.now) != tt.wantDelay || retry != tt.wantRetry {
			t.Errorf("nextRetry(%d): got delay %v retry %v, want %v %v", tt.attempts, next.Sub(tt.now), retry, tt.wantDelay, tt.wantRetry)
		}
	}
}
