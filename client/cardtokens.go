package client

import "context"

// TokenizeRequest is POST /v5/tokenize_card.
type TokenizeRequest struct {
	Card Card
	// MultiUse asks for a token that can pay repeatedly (the spec's
	// customer.store_card_permisison); otherwise it pays once.
	MultiUse bool
	// CustomerID is kept with a multi-use token (one is generated when
	// empty).
	CustomerID string
}

// TokenizedCard is the answer to a tokenisation.
type TokenizedCard struct {
	Result
	Card     CardResult `json:"card"` // Card.Token is the new card token
	Customer struct {
		ID *string `json:"id"` // nil for a single-use token
	} `json:"customer"`
	CreatedTimestampUTC string `json:"created_timestamp_utc"`
}

// TokenizeCard stores a card and returns its card token.
func (c *Client) TokenizeCard(ctx context.Context, req TokenizeRequest, opts ...CallOption) (*TokenizedCard, error) {
	type customer struct {
		StoreCardPermission bool   `json:"store_card_permisison"`
		ID                  string `json:"id,omitempty"`
	}
	body := struct {
		CompanyToken string   `json:"company_token"`
		Card         Card     `json:"card"`
		Customer     customer `json:"customer"`
	}{c.companyToken, req.Card, customer{req.MultiUse, req.CustomerID}}
	return call[TokenizedCard](ctx, c, "/v5/tokenize_card", body, opts...)
}

// CardRecord is a card token look-up (spec 2.6); it has no response code.
type CardRecord struct {
	CardToken           string   `json:"card_token"`
	MultiUse            bool     `json:"multi_use"`
	CreatedTimestampUTC string   `json:"created_timestamp_utc"`
	Card                CardInfo `json:"card"`
	Customer            *struct {
		ID string `json:"id"`
	} `json:"customer"` // only for a multi-use token
}

// Card looks a card token up. An unknown token is the error not_found
// (HTTP 404); an invalidated one is card_token_invalid (HTTP 409), as in
// every call that takes a card token.
func (c *Client) Card(ctx context.Context, cardToken string, opts ...CallOption) (*CardRecord, error) {
	return lookUp[CardRecord](ctx, c, "/v5/card", c.cardTokenBody(cardToken), opts)
}

// InvalidatedCard is the answer to an invalidation.
type InvalidatedCard struct {
	Result
	CardToken string `json:"card_token"`
	Card      struct {
		Number      string `json:"number"`
		ExpiryMonth string `json:"expiry_month"`
		ExpiryYear  string `json:"expiry_year"`
	} `json:"card"`
}

// InvalidateCard permanently invalidates a card token.
func (c *Client) InvalidateCard(ctx context.Context, cardToken string, opts ...CallOption) (*InvalidatedCard, error) {
	return call[InvalidatedCard](ctx, c, "/v5/invalidate_card_token", c.cardTokenBody(cardToken), opts...)
}

func (c *Client) cardTokenBody(cardToken string) map[string]string {
	return map[string]string{"company_token": c.companyToken, "card_token": cardToken}
}
