package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// The reference builders below are the map-based responses before issue
// 14, encoded by encoding/json; the hand-written encoders must produce
// the same bytes.

func referenceCard(c paylink.CardInfo, token string, multiUse bool) map[string]any {
	return map[string]any{
		"brand": strings.ToUpper(c.Brand), "funding": strings.ToLower(c.Funding), "country": c.Country,
		"number": c.Masked, "holder_name": c.HolderName,
		"expiry_month": fmt.Sprintf("%02d", c.ExpiryMonth), "expiry_year": fmt.Sprintf("%02d", c.ExpiryYear%100),
		"token": nullable(token), "multi_use": multiUse, "finger_print": c.Fingerprint,
	}
}

func referenceTransaction(t *paylink.Transaction, preAuthNumber bool) map[string]any {
	cur, _ := paylink.LookupCurrency(t.Currency)
	d := t.Details
	card := map[string]any{}
	if d.Card != nil {
		token := ""
		if d.ReturnCardToken {
			token = t.CardToken
		}
		card = referenceCard(*d.Card, token, d.CardMultiUse)
	}
	var total any = number(t.Total, cur)
	if t.Status == paylink.StatusRequiresAuthentication {
		total = nil
	}
	held := int64(0)
	if t.HoldApproved() {
		held = t.PreAuthAmount
	}
	var preAuth any = paylink.FormatAmount(held, cur)
	if preAuthNumber {
		preAuth = number(held, cur)
	}
	return map[string]any{
		"card":     card,
		"customer": map[string]any{"id": nullable(d.Customer.ID), "authentication_redirect_url": nullable(t.AuthenticationURL)},
		"purchase": map[string]any{
			"transaction_time_utc": nullable(paylink.FormatSpecTime(t.ProcessedAt)), "status": t.Status.Public(),
			"purchase_reference": t.Reference, "invoice_number": t.InvoiceNumber, "amount": number(t.Amount, cur),
			"surcharge_amount": number(t.Surcharge, cur), "total_amount": total, "pre_authorised": t.HoldApproved(),
			"pre_authorised_amount": preAuth, "currency": t.Currency,
		},
		"response_code": responseCode(t.Status), "response_message": d.Message,
	}
}

func referenceStatus(t *paylink.Transaction) map[string]any {
	cur, _ := paylink.LookupCurrency(t.Currency)
	return map[string]any{
		"transaction_time_utc": nullable(paylink.FormatSpecTime(t.ProcessedAt)), "status": t.Status.Public(),
		"purchase_reference": t.Reference, "invoice_number": t.InvoiceNumber, "amount": number(t.Total, cur),
		"currency": t.Currency, "response_code": "success", "response_message": msgSuccess,
	}
}

// stateOf is what a status look-up reads of t.
func stateOf(t *paylink.Transaction) *paylink.TransactionState {
	return &paylink.TransactionState{Reference: t.Reference, InvoiceNumber: t.InvoiceNumber, Status: t.Status,
		Total: t.Total, Currency: t.Currency, ProcessedAt: t.ProcessedAt}
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestHotResponsesMatchEncodingJSON checks the hand-written encoders
// byte for byte against encoding/json on the old maps, across statuses,
// currencies, cards, nulls and text that needs escaping.
func TestHotResponsesMatchEncodingJSON(t *testing.T) {
	tricky := "Zoë <O'Brien> & \"co\"\\ \t\n\x01 \u2028\u2029 \xff end"
	tests := []struct {
		name   string
		mutate func(*paylink.Transaction)
	}{
		{"approved", func(*paylink.Transaction) {}},
		{"no card", func(t *paylink.Transaction) { t.Details.Card = nil }},
		{"card token returned", func(t *paylink.Transaction) {
			t.Details.ReturnCardToken, t.Details.CardMultiUse, t.CardToken = true, true, "card_01JD"
		}},
		{"requires authentication", func(t *paylink.Transaction) {
			t.Status, t.ProcessedAt, t.AuthenticationURL = paylink.StatusRequiresAuthentication, time.Time{}, "https://pay.example/acs/x?a=1&b=<2>"
		}},
		{"held", func(t *paylink.Transaction) {
			t.PreAuth, t.PreAuthAmount, t.Status = true, 15160, paylink.StatusPreAuthorised
		}},
		{"declined JPY", func(t *paylink.Transaction) {
			t.Status, t.Currency, t.Amount, t.Total = paylink.StatusDeclined, "JPY", 1500, 1500
		}},
		{"escaped text", func(t *paylink.Transaction) {
			t.InvoiceNumber, t.Details.Message, t.Details.Customer.ID, t.Details.Card.HolderName = tricky, tricky, tricky, tricky
			t.Details.Card.ExpiryMonth, t.Details.Card.ExpiryYear = 3, 2105
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := benchTransaction()
			tt.mutate(tx)
			for _, preAuthNumber := range []bool{false, true} {
				if got, want := string(encodeJSON(transactionResult(tx, preAuthNumber))), marshal(t, referenceTransaction(tx, preAuthNumber)); got != want {
					t.Errorf("transaction result (preAuthNumber %v):\ngot  %s\nwant %s", preAuthNumber, got, want)
				}
			}
			if got, want := string(encodeJSON(statusResult(stateOf(tx)))), marshal(t, referenceStatus(tx)); got != want {
				t.Errorf("status:\ngot  %s\nwant %s", got, want)
			}
			token := map[string]string{"transaction_token": tx.InvoiceNumber, "company_token": tx.Reference,
				"response_code": "success", "response_message": msgSuccess}
			if got, want := string(encodeJSON(tokenResult(tx.InvoiceNumber, tx.Reference))), marshal(t, token); got != want {
				t.Errorf("token:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

// FuzzAppendStringMatchesEncodingJSON checks string escaping against
// encoding/json on any bytes.
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href='x'>&amp;</a>", "\"\\/\b\f\n\r\t\x00\x1f\x7f", "é\u2028\u2029😀", "\xff\xfe bad \xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
