package api

import (
	"net/http"

	"github.com/paylink/paylink"
)

// tokenizeCard: POST /v5/tokenize_card (4.12). The permission flag is
// customer.store_card_permisison as the spec spells it; the correct
// spelling is accepted too.
func (s *Server) tokenizeCard(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&tokenizePlacement)
	req := paylink.TokenizeRequest{
		CompanyToken: b.companyToken("company_token"),
		Card:         b.card(false),
		MultiUse:     b.boolean(tokenizeStoreCard.paths...),
		CustomerID:   b.str(maxField, "customer.id"),
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	c, err := s.svc.TokenizeCard(r.Context(), m, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"card":                  cardDetail(c.Info, c.Token, c.MultiUse),
		"customer":              map[string]any{"id": nullable(c.VisibleCustomerID())},
		"created_timestamp_utc": paylink.FormatSpecTime(c.CreatedAt),
		"response_code":         paylink.CodeSuccess,
		"response_message":      msgSuccess,
	}, nil
}

// cardLookup: POST /v5/card (4.11), the card record (2.6) without
// response_code fields.
func (s *Server) cardLookup(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&cardPlacement)
	company, token := b.companyToken("company_token"), b.need(maxToken, "card_token", "card.token")
	if err := b.err(); err != nil {
		return nil, err
	}
	c, err := s.svc.LookupCard(r.Context(), m, company, token)
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"card_token":            c.Token,
		"multi_use":             c.MultiUse,
		"created_timestamp_utc": paylink.FormatSpecTime(c.CreatedAt),
		"card":                  cardRecord(c.Info),
	}
	if id := c.VisibleCustomerID(); id != "" {
		out["customer"] = map[string]any{"id": id}
	}
	return out, nil
}

// invalidateCard: POST /v5/invalidate_card_token and /v5/invalidate_card (4.10).
func (s *Server) invalidateCard(w http.ResponseWriter, r *http.Request, m *paylink.Merchant, b *body) (any, error) {
	b.checkPlacement(&cardPlacement)
	company, token := b.companyToken("company_token"), b.need(maxToken, "card_token", "card.token")
	if err := b.err(); err != nil {
		return nil, err
	}
	c, err := s.svc.InvalidateCardToken(r.Context(), m, company, token)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"card_token":       c.Token,
		"card":             cardJSON{info: c.Info, fields: cardNumber | cardExpiry},
		"response_code":    paylink.CodeSuccess,
		"response_message": msgSuccess,
	}, nil
}
