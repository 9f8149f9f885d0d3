package api

import (
	"net/http"
	"time"

	"github.com/paylink/paylink"
)

// Payment links: create (4.1), look up and cancel.

// linkCustomer reads the optional customer object of a link.
func (b *body) linkCustomer() paylink.Customer {
	return paylink.Customer{
		Reference:   b.str(maxField, "customer.reference", "customer.customer_reference"),
		Email:       b.str(maxField, "customer.email", "customer.customer_email"),
		FirstName:   b.str(maxField, "customer.first_name"),
		LastName:    b.str(maxField, "customer.last_name"),
		Phone:       b.str(maxField, "customer.phone"),
		Address:     b.str(maxField, "customer.address"),
		Address2:    b.str(maxField, "customer.address2"),
		City:        b.str(maxField, "customer.city"),
		State:       b.str(maxField, "customer.state"),
		Postcode:    b.str(maxField, "customer.postcode"),
		CountryCode: b.str(2, "customer.country_code"),
	}
}

// timestamp reads an optional RFC 3339 time; zero when absent.
func (b *body) timestamp(path string) time.Time {
	s := b.str(64, path)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	switch {
	case err != nil || !offsetInRange(s):
		b.fail(path, "must be an RFC 3339 time such as 2026-12-31T23:59:00Z")
	case t.IsZero(): // the year 1, which would read as no time at all
		b.fail(path, "must be in the future")
	}
	return t.UTC()
}

// offsetInRange reports whether the numeric offset ending a time that
// time.Parse took as RFC 3339 is one RFC 3339 allows: time.Parse also
// takes +24:00 and minutes up to 99 ("+00:60" read as an hour).
func offsetInRange(s string) bool {
	if s[len(s)-1] == 'Z' {
		return true
	}
	off := s[len(s)-len("+00:00"):]
	return off[1:3] <= "23" && off[4:6] <= "59"
}

// createLink: POST /v5/payment-links.
func (s *Server) createLink(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&linkPlacement)
	n := paylink.NewLink{
		CompanyToken:      b.optionalCompanyToken(),
		MerchantReference: b.need(maxField, linkReference.paths...),
		Customer:          b.linkCustomer(),
		WebhookURL:        b.str(paylink.MaxURLLength, "webhook_url"),
		ExpiresAt:         b.timestamp("expires_at"),
	}
	if b.lookup(linkSurcharge.home()) != nil {
		n.NoSurcharge = !b.boolean(linkSurcharge.paths...)
	}
	n.Amount, n.Currency = b.money("amount", "currency")
	if err := b.err(); err != nil {
		return nil, err
	}
	l, urls, err := s.svc.CreateLink(r.Context(), m, n)
	if err != nil {
		return nil, err
	}
	noteReference(r, l.ID)
	return s.linkResult(l, urls), nil
}

// linkByID: POST (or GET) /v5/payment-links/{id}. A GET's body was
// checked by readCaller, which never refuses a read for it.
func (s *Server) linkByID(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	if r.Method == http.MethodPost {
		if err := s.linkCaller(r, m, b); err != nil {
			return nil, err
		}
	}
	l, urls, err := s.svc.Link(r.Context(), m, pathValue(r, "id"))
	if err != nil {
		return nil, err
	}
	noteReference(r, l.ID)
	return s.linkResult(l, urls), nil
}

// cancelLink: POST /v5/payment-links/{id}/cancel.
func (s *Server) cancelLink(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	if err := s.linkCaller(r, m, b); err != nil {
		return nil, err
	}
	l, urls, err := s.svc.CancelLink(r.Context(), m, pathValue(r, "id"))
	if err != nil {
		return nil, err
	}
	noteReference(r, l.ID)
	return s.linkResult(l, urls), nil
}

// linkCaller checks the company token a link call sends: the link
// endpoints take it optionally, as link creation does, and a wrong one
// is refused (403 company_token_mismatch) like everywhere else.
func (s *Server) linkCaller(r *http.Request, m *paylink.Merchant, b *body) error {
	b.checkPlacement(&tokenPlacement) // a read's refusal is ignored by readCaller, as its others are
	company := b.optionalCompanyToken()
	if err := b.err(); err != nil {
		return err
	}
	if company == "" {
		return nil
	}
	return s.svc.CheckCompanyToken(r.Context(), m, company)
}

// linkResult is the payment link object of every link response.
func (s *Server) linkResult(l *paylink.PaymentLink, urls paylink.LinkURLs) map[string]any {
	cur, _ := paylink.LookupCurrency(l.Currency)
	return map[string]any{
		"id":                    l.ID,
		"status":                l.State(s.svc.Now()),
		"url":                   urls.Page,
		"virtual_terminal_url":  urls.VirtualTerminal,
		"amount":                number(l.Amount, cur),
		"currency":              l.Currency,
		"merchantReference":     l.MerchantReference,
		"webhook_url":           nullable(l.WebhookURL),
		"attempts":              l.Attempts,
		"transaction_reference": nullable(l.PaidReference),
		"created_at":            l.CreatedAt.Format(time.RFC3339),
		"expires_at":            nullable(rfc3339(l.ExpiresAt)),
		"paid_at":               nullable(rfc3339(l.PaidAt)),
		"response_code":         paylink.CodeSuccess,
		"response_message":      msgSuccess,
	}
}

// rfc3339 formats a time, "" for the zero time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
