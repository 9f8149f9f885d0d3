package api

import (
	"encoding/json"
	"strconv"
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

// cardFields selects the members of a card object; the card objects of
// the different responses are nested sets of the same members.
type cardFields uint8

const (
	cardBase   cardFields = 1 << iota // brand, country, funding
	cardNumber                        // number (masked)
	cardName                          // holder_name
	cardExpiry                        // expiry_month, expiry_year
	cardToken                         // token, multi_use, finger_print
)

// cardJSON is a card object of a response.
type cardJSON struct {
	info     paylink.CardInfo
	token    string // "" is null
	multiUse bool
	fields   cardFields
}

// cardBrief is the card part of surcharge and refund responses.
func cardBrief(c paylink.CardInfo) cardJSON { return cardJSON{info: c, fields: cardBase} }

// cardHolder is the card object of refund results (spec 2.5).
func cardHolder(c paylink.CardInfo) cardJSON {
	return cardJSON{info: c, fields: cardBase | cardNumber | cardName}
}

// cardRecord is the card object of the card look-up (spec 2.6).
func cardRecord(c paylink.CardInfo) cardJSON {
	return cardJSON{info: c, fields: cardBase | cardNumber | cardName | cardExpiry}
}

// cardDetail is the card object of transaction results and tokenisation
// (spec 2.4, 4.12); token "" is null.
func cardDetail(c paylink.CardInfo, token string, multiUse bool) cardJSON {
	return cardJSON{info: c, token: token, multiUse: multiUse, fields: cardBase | cardNumber | cardName | cardExpiry | cardToken}
}

// appendJSON writes the selected members in sorted key order.
func (c cardJSON) appendJSON(b []byte) []byte {
	o := object{b: b}
	o.open("")
	has := func(f cardFields) bool { return c.fields&f != 0 }
	if has(cardBase) {
		o.str("brand", strings.ToUpper(c.info.Brand))
		o.str("country", c.info.Country)
	}
	if has(cardExpiry) {
		o.str("expiry_month", twoDigits(c.info.ExpiryMonth))
		o.str("expiry_year", twoDigits(c.info.ExpiryYear%100))
	}
	if has(cardToken) {
		o.str("finger_print", c.info.Fingerprint)
	}
	if has(cardBase) {
		o.str("funding", strings.ToLower(c.info.Funding))
	}
	if has(cardName) {
		o.str("holder_name", c.info.HolderName)
	}
	if has(cardToken) {
		o.boolean("multi_use", c.multiUse)
	}
	if has(cardNumber) {
		o.str("number", c.info.Masked)
	}
	if has(cardToken) {
		o.nullable("token", c.token)
	}
	o.close()
	return o.b
}

// MarshalJSON lets a card object sit in a response built as a map.
func (c cardJSON) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

// twoDigits renders a month or a two-digit year as fmt's %02d does.
func twoDigits(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// responseCode is the outcome code of a transaction result:
// paylink.CodeSuccess only when the money moved or is held (or awaits
// authentication), so a client checking response_code alone never ships
// a declined order.
func responseCode(s paylink.Status) string {
	switch s {
	case paylink.StatusDeclined:
		return paylink.CodeDeclined
	case paylink.StatusFailed:
		return paylink.CodeFailed
	case paylink.StatusProcessing:
		return paylink.CodePending
	case paylink.StatusUnknown:
		return paylink.CodeUnknown
	}
	return paylink.CodeSuccess
}

// transactionResult is the transaction result object of spec 2.4.
// preAuthNumber renders pre_authorised_amount as a number (the
// 3dsredirect response) rather than a string.
func transactionResult(t *paylink.Transaction, preAuthNumber bool) appender {
	return txResult{t: t, preAuthNumber: preAuthNumber}
}

// txResult is a transaction result (see transactionResult).
type txResult struct {
	t             *paylink.Transaction
	preAuthNumber bool
}

// appendJSON writes the result in sorted key order.
func (r txResult) appendJSON(b []byte) []byte {
	t, d := r.t, r.t.Details
	o := object{b: b}
	o.open("")
	o.key("card")
	if d.Card == nil {
		o.b = append(o.b, "{}"...)
	} else {
		token := ""
		if d.ReturnCardToken {
			token = t.CardToken
		}
		o.b = cardDetail(*d.Card, token, d.CardMultiUse).appendJSON(o.b)
	}
	o.open("customer")
	o.nullable("authentication_redirect_url", t.AuthenticationURL)
	o.nullable("id", d.Customer.ID)
	o.close()
	r.appendPurchase(&o)
	o.str("response_code", responseCode(t.Status))
	o.str("response_message", d.Message)
	o.close()
	return o.b
}

// appendPurchase writes the purchase object of a transaction result.
func (r txResult) appendPurchase(o *object) {
	t := r.t
	cur, _ := paylink.LookupCurrency(t.Currency)
	o.open("purchase")
	o.raw("amount", paylink.FormatAmountShort(t.Amount, cur))
	o.str("currency", t.Currency)
	o.str("invoice_number", t.InvoiceNumber)
	held := int64(0) // the amount held: nothing for a hold never approved
	if t.HoldApproved() {
		held = t.PreAuthAmount
	}
	o.boolean("pre_authorised", t.HoldApproved())
	if r.preAuthNumber {
		o.raw("pre_authorised_amount", paylink.FormatAmountShort(held, cur))
	} else {
		o.str("pre_authorised_amount", paylink.FormatAmount(held, cur))
	}
	o.str("purchase_reference", t.Reference)
	o.str("status", string(t.Status.Public()))
	o.raw("surcharge_amount", paylink.FormatAmountShort(t.Surcharge, cur))
	if t.Status == paylink.StatusRequiresAuthentication {
		o.raw("total_amount", "null")
	} else {
		o.raw("total_amount", paylink.FormatAmountShort(t.Total, cur))
	}
	o.nullable("transaction_time_utc", paylink.FormatSpecTime(t.ProcessedAt))
	o.close()
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
