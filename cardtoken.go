package paylink

import (
	"context"
	"errors"
)

// TokenizeRequest vaults a card without paying (spec 4.12).
type TokenizeRequest struct {
	CompanyToken string
	Card         *CardDetails
	MultiUse     bool // customer.store_card_permisison
	CustomerID   string
}

// TokenizeCard vaults a card and returns its token: multi-use with the
// customer's permission, otherwise single-use (one purchase, then
// refused). A multi-use card gets a customer id when none was sent.
func (s *Service) TokenizeCard(ctx context.Context, m *Merchant, req TokenizeRequest) (*Card, error) {
	if err := s.CheckCompanyToken(ctx, m, req.CompanyToken); err != nil {
		return nil, err
	}
	f := FieldErrors{}
	if req.Card == nil {
		f.Add("card", "the card details (number, expiry_month, expiry_year) are required")
	} else {
		checkCard(f, req.Card, s.now())
	}
	checkField(f, "customer.id", req.CustomerID, MaxFieldLength)
	if err := f.Err(); err != nil {
		return nil, err
	}
	c, err := s.prepareCard(m, req.Card, req.MultiUse, req.CustomerID)
	if err != nil {
		return nil, err
	}
	err = s.updateCreating(ctx, func(tx Tx) error { return tx.CreateCard(c) },
		func(tx Tx) (bool, error) { return found(tx.Card(m.ID, c.Token)) })
	if err != nil {
		return nil, Internal("tokenize card", err)
	}
	return c, nil
}

// The errors of a card token, the same in every call that takes one
// (purchase, surcharge, look-up, invalidation): an unknown token, or
// another merchant's, is 404 like any unknown reference; an invalidated
// one is a state conflict, 409, whatever the call (invalidating it again
// included), since the token exists but can no longer be used.
var (
	errNoSuchCard      = Errorf(KindNotFound, CodeNotFound, "no card with that card token")
	errCardInvalidated = Errorf(KindConflict, CodeCardTokenInvalid, "this card token has been invalidated: tokenise the card again")
)

// LookupCard returns the record of one of m's card tokens (spec 4.11). An
// invalidated token is refused like in a purchase.
func (s *Service) LookupCard(ctx context.Context, m *Merchant, companyToken, token string) (*Card, error) {
	if err := s.CheckCompanyToken(ctx, m, companyToken); err != nil {
		return nil, err
	}
	var c *Card
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		c, err = s.merchantCard(tx, m, token)
		return err
	})
	if err != nil {
		return nil, asServiceError("card lookup", err)
	}
	if !c.InvalidatedAt.IsZero() {
		return nil, errCardInvalidated
	}
	return c, nil
}

// InvalidateCardToken permanently invalidates one of m's card tokens
// (spec 4.10); it cannot be reactivated.
func (s *Service) InvalidateCardToken(ctx context.Context, m *Merchant, companyToken, token string) (*Card, error) {
	if err := s.CheckCompanyToken(ctx, m, companyToken); err != nil {
		return nil, err
	}
	var c *Card
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if c, err = s.merchantCard(tx, m, token); err != nil {
			return err
		}
		c.InvalidatedAt = s.now()
		err = tx.InvalidateCard(m.ID, token, c.InvalidatedAt)
		if errors.Is(err, ErrConflict) {
			return errCardInvalidated
		}
		if err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: m.ID, Action: AuditCardInvalidate, ObjectType: ObjectCard,
			ObjectID: c.Info.Fingerprint, Outcome: OutcomeSuccess})
	})
	if err != nil {
		return nil, asServiceError("invalidate card", err)
	}
	return c, nil
}

// merchantCard loads a card token of m; another merchant's is unknown.
func (s *Service) merchantCard(tx Tx, m *Merchant, token string) (*Card, error) {
	c, err := tx.Card(m.ID, token)
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchCard
	}
	return c, err
}

// VisibleCustomerID is the customer id a card record shows: only while
// the token is multi-use and not invalidated.
func (c *Card) VisibleCustomerID() string {
	if !c.MultiUse || !c.InvalidatedAt.IsZero() {
		return ""
	}
	return c.CustomerID
}
