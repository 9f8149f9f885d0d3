package api

import (
	"net/http"

	"github.com/paylink/paylink"
)

// Field length limits (spec section 8).
const (
	maxToken = paylink.TokenLength
	maxField = paylink.MaxFieldLength
)

// transactionToken: POST /v5/transaction_token (4.2).
func (s *Server) transactionToken(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&tokenPlacement)
	company := b.companyToken("company_token")
	if err := b.err(); err != nil {
		return nil, err
	}
	tok, err := s.svc.IssueTransactionToken(r.Context(), m, company)
	if err != nil {
		return nil, err
	}
	return tokenResult(tok, company), nil
}

// tokenResult is the transaction token response (4.2).
func tokenResult(tok, company string) appender { return tokenResponse{token: tok, company: company} }

// tokenResponse is a transaction token response (see tokenResult).
type tokenResponse struct{ token, company string }

// appendJSON writes the response in sorted key order.
func (r tokenResponse) appendJSON(b []byte) []byte {
	o := object{b: b}
	o.open("")
	o.str("company_token", r.company)
	o.str("response_code", paylink.CodeSuccess)
	o.str("response_message", msgSuccess)
	o.str("transaction_token", r.token)
	o.close()
	return o.b
}

const msgSuccess = "The request was processed successfully"

// companyToken reads the company token under every name clients send it
// by, on every endpoint: the endpoint's own name first (the one a
// "required" error names), then company_token, token.company_token and
// token.company. Two names with different tokens are refused (first).
func (b *body) companyToken(primary string) string {
	return b.need(maxToken, append([]string{primary}, companyTokenNames()...)...)
}

// optionalCompanyToken reads the company token of a call that may omit
// it (the payment link calls), under every name companyToken reads.
func (b *body) optionalCompanyToken() string {
	return b.str(maxToken, companyTokenNames()...)
}

// companyTokenNames are the names the company token is read under.
func companyTokenNames() []string {
	return []string{"company_token", "token.company_token", "token.company"}
}

// transactionToken reads the transaction token of a money-moving call,
// in token or at the top level.
func (b *body) transactionToken() string {
	return b.need(maxToken, "token.transaction_token", "transaction_token")
}

// customer reads the customer object shared by purchase-like calls.
func (b *body) customer() paylink.Customer {
	return paylink.Customer{
		ID:            b.str(maxField, "customer.id"),
		Reference:     b.str(maxField, "customer.reference", "customer.customer_reference"),
		Email:         b.str(maxField, "customer.email", "customer.customer_email"),
		FirstName:     b.str(maxField, "customer.first_name"),
		LastName:      b.str(maxField, "customer.last_name"),
		Phone:         b.str(maxField, "customer.phone"),
		IPAddress:     b.str(maxField, "customer.ip_address"),
		Timezone:      b.str(maxField, "customer.timezone"),
		UserAgent:     b.str(paylink.MaxUserAgentLength, "customer.user_agent"),
		AcceptedTerms: b.boolean("customer.accepted_terms_conditions", "customer.accepted_terms_and_conditions"),
	}
}

// metadata reads the optional metadata object (channel, merchant_hash) of
// capture, cancel and direct debit calls.
func (b *body) metadata() map[string]string {
	md := map[string]string{}
	for _, k := range []string{"channel", "merchant_hash"} {
		if v := b.str(maxField, "metadata."+k); v != "" {
			md[k] = v
		}
	}
	if len(md) == 0 {
		return nil
	}
	return md
}

// card reads card details, or nil when none were sent. Beside a card
// token without a number, the details are not read: a client echoing a
// look-up's expiry next to the token pays with the token's card, as one
// sending its CVC or holder name there does. On a call that takes a
// card token (takesToken), a number beside one is read without asking
// for its expiry: the Service refuses the two together ("not both"),
// which is the client's mistake to hear of.
func (b *body) card(takesToken bool) *paylink.CardDetails {
	number := b.str(paylink.MaxCardNumberInput, "card.number")
	sentToken := takesToken && b.lookup("card.token") != nil
	if number == "" && (sentToken || b.lookup("card.expiry_month") == nil && b.lookup("card.expiry_year") == nil) {
		return nil
	}
	c := &paylink.CardDetails{Number: number, CVC: b.str(4, "card.cvc"), HolderName: b.str(maxField, "card.holder_name")}
	if number == "" {
		b.fail("card.number", "is required with card details")
	}
	var ok bool
	c.ExpiryMonth, ok = b.integer("card.expiry_month")
	if !ok && !sentToken {
		b.fail("card.expiry_month", "is required with card details")
	}
	c.ExpiryYear, ok = b.integer("card.expiry_year")
	if !ok && !sentToken {
		b.fail("card.expiry_year", "is required with card details")
	}
	return c
}

// purchase: POST /v5/purchase (4.3).
func (s *Server) purchase(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	req, err := b.purchaseRequest()
	if err != nil {
		return nil, err
	}
	t, err := s.svc.Purchase(r.Context(), m, req)
	if err != nil {
		return nil, err
	}
	noteReference(r, t.Reference)
	return transactionResult(t, false), nil
}

// purchaseRequest reads a purchase body; the error lists every field
// problem.
func (b *body) purchaseRequest() (paylink.PurchaseRequest, error) {
	b.checkPlacement(&purchasePlacement)
	req := paylink.PurchaseRequest{
		CompanyToken:     b.companyToken("token.company_token"),
		TransactionToken: b.transactionToken(),
		Customer:         b.customer(),
		StoreCard:        b.boolean(purchaseStoreCard.paths...),
		ThreeDS:          b.boolean(purchaseThreeDS.paths...),
		RedirectURL:      b.str(paylink.MaxURLLength, "customer.authentication_redirect_url"),
		CardToken:        b.str(maxToken, "card.token"),
		Card:             b.card(true),
		InvoiceNumber:    b.str(paylink.MaxInvoiceLength, "purchase.invoice_number"),
		ApplySurcharge:   b.boolean(purchaseSurcharge.paths...),
		PreAuth:          b.boolean(purchasePreAuth.paths...),
	}
	req.Amount, req.Currency = b.money("purchase.amount", "purchase.currency")
	return req, b.err()
}

// surcharge: POST /v5/surcharge (4.6); the company token is token.company.
func (s *Server) surcharge(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&surchargePlacement)
	req := paylink.SurchargeRequest{
		CompanyToken: b.companyToken("token.company"),
		CardToken:    b.str(maxToken, "card.token"),
		Card:         b.card(true),
	}
	req.Amount, req.Currency = b.money("amount", "currency")
	if err := b.err(); err != nil {
		return nil, err
	}
	q, err := s.svc.PreviewSurcharge(r.Context(), m, req)
	if err != nil {
		return nil, err
	}
	cur, _ := paylink.LookupCurrency(q.Currency)
	return map[string]any{
		"card":             cardBrief(q.Card),
		"surcharge":        map[string]any{"amount": number(q.Amount, cur), "percent": rawNumber(q.Rate.String()), "currency": q.Currency},
		"response_code":    paylink.CodeSuccess,
		"response_message": msgSuccess,
	}, nil
}

// purchaseStatus: POST (or GET) /v5/purchase/{invoice_number|purchase_reference} (4.8).
func (s *Server) purchaseStatus(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	if err := s.statusCaller(r, m, b); err != nil {
		return nil, err
	}
	st, err := s.svc.TransactionStateOf(r.Context(), m, pathValue(r, "ref"))
	if err != nil {
		return nil, err
	}
	noteReference(r, st.Reference)
	return statusResult(st), nil
}

// statusResult is the purchase status response (4.8).
func statusResult(st *paylink.TransactionState) appender { return statusResponse{st} }

// statusResponse is a purchase status response (see statusResult).
type statusResponse struct{ t *paylink.TransactionState }

// appendJSON writes the response in sorted key order.
func (r statusResponse) appendJSON(b []byte) []byte {
	t := r.t
	cur, _ := paylink.LookupCurrency(t.Currency)
	o := object{b: b}
	o.open("")
	o.raw("amount", paylink.FormatAmountShort(t.Total, cur))
	o.str("currency", t.Currency)
	o.str("invoice_number", t.InvoiceNumber)
	o.str("purchase_reference", t.Reference)
	o.str("response_code", paylink.CodeSuccess)
	o.str("response_message", msgSuccess)
	o.str("status", string(t.Status.Public()))
	o.nullable("transaction_time_utc", paylink.FormatSpecTime(t.ProcessedAt))
	o.close()
	return o.b
}
