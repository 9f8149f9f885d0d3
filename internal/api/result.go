package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/paylink/paylink"
)

// number renders minor units as a JSON number without trailing zeros (10.5).
func number(minor int64, cur paylink.Currency) json.Number {
	return json.Number(paylink.FormatAmountShort(minor, cur))
}

// rawNumber renders an already formatted decimal as a JSON number.
func rawNumber(s string) json.Number { return json.Number(s) }

// nullable turns "" into JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// cardBrief is the card part of surcharge and refund responses.
func cardBrief(c paylink.CardInfo) map[string]any {
	return map[string]any{
		"brand":   strings.ToUpper(c.Brand),
		"funding": strings.ToLower(c.Funding),
		"country": c.Country,
	}
}

// cardDetail is the card object of transaction results and tokenisation
// (spec 2.4, 4.12); token "" is null.
func cardDetail(c paylink.CardInfo, token string, multiUse bool) map[string]any {
	out := cardRecord(c)
	out["token"], out["multi_use"], out["finger_print"] = nullable(token), multiUse, c.Fingerprint
	return out
}

// cardHolder is the card object of refund results (spec 2.5).
func cardHolder(c paylink.CardInfo) map[string]any {
	out := cardBrief(c)
	out["number"], out["holder_name"] = c.Masked, c.HolderName
	return out
}

// cardRecord is the card object of the card look-up (spec 2.6).
func cardRecord(c paylink.CardInfo) map[string]any {
	out := cardHolder(c)
	out["expiry_month"], out["expiry_year"] = fmt.Sprintf("%02d", c.ExpiryMonth), fmt.Sprintf("%02d", c.ExpiryYear%100)
	return out
}

// responseCode is the outcome code of a transaction result: "success"
// only when the money moved or is held (or awaits authentication), so a
// client checking response_code alone never ships a declined order.
func responseCode(s paylink.Status) string {
	switch s {
	case paylink.StatusDeclined:
		return "declined"
	case paylink.StatusFailed:
		return "failed"
	case paylink.StatusProcessing:
		return "pending" // the processor's answer is awaited (or was lost and is being asked for)
	case paylink.StatusUnknown:
		return "unknown" // the processor could not say: needs review
	}
	return "success"
}

// transactionResult is the transaction result object of spec 2.4.
// preAuthNumber renders pre_authorised_amount as a number (the
// 3dsredirect response) rather than a string.
func transactionResult(t *paylink.Transaction, preAuthNumber bool) map[string]any {
	cur, _ := paylink.LookupCurrency(t.Currency)
	d := t.Details
	card := map[string]any{}
	if d.Card != nil {
		token := ""
		if d.ReturnCardToken {
			token = t.CardToken
		}
		card = cardDetail(*d.Card, token, d.CardMultiUse)
	}
	var total any = number(t.Total, cur)
	if t.Status == paylink.StatusRequiresAuthentication {
		total = nil
	}
	var preAuth any = paylink.FormatAmount(t.PreAuthAmount, cur)
	if preAuthNumber {
		preAuth = number(t.PreAuthAmount, cur)
	}
	return map[string]any{
		"card": card,
		"customer": map[string]any{
			"id":                          nullable(d.Customer.ID),
			"authentication_redirect_url": nullable(t.AuthenticationURL),
		},
		"purchase": map[string]any{
			"transaction_time_utc":  nullable(paylink.FormatSpecTime(t.ProcessedAt)),
			"status":                t.Status.Public(),
			"purchase_reference":    t.Reference,
			"invoice_number":        t.InvoiceNumber,
			"amount":                number(t.Amount, cur),
			"surcharge_amount":      number(t.Surcharge, cur),
			"total_amount":          total,
			"pre_authorised":        t.PreAuth,
			"pre_authorised_amount": preAuth,
			"currency":              t.Currency,
		},
		"response_code":    responseCode(t.Status),
		"response_message": d.Message,
	}
}

// refundResult is the refund object of the card and direct debit refund
// responses (spec 2.5). On error (DECLINED or FAILED) refund_reference and
// purchase_reference are empty, as spec 2.5 and 7.2 say; the refund
// status look-up still finds the attempt by purchase reference or
// invoice number, with its references.
func refundResult(rf *paylink.Refund) map[string]any {
	cur, _ := paylink.LookupCurrency(rf.Currency)
	ref, purchase := rf.Reference, rf.TransactionReference
	if rf.Status == paylink.StatusDeclined || rf.Status == paylink.StatusFailed {
		ref, purchase = "", ""
	}
	return map[string]any{
		"transaction_time_utc": paylink.FormatSpecTime(rf.CreatedAt),
		"status":               rf.Status.Public(),
		"purchase_reference":   purchase,
		"refund_reference":     ref,
		"invoice_number":       rf.InvoiceNumber,
		"amount":               number(rf.Amount, cur),
		"currency":             rf.Currency,
	}
}
