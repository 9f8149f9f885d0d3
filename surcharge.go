package paylink

import (
	"context"
	"errors"
)

// SurchargeRequest asks what surcharge a card would attract.
type SurchargeRequest struct {
	CompanyToken string
	CardToken    string
	Card         *CardDetails
	Amount       int64
	Currency     string
}

// SurchargeQuote is the surcharge for an amount on a card.
type SurchargeQuote struct {
	Card     CardInfo
	Amount   int64 // surcharge in minor units
	Rate     Percent
	Currency string
}

// PreviewSurcharge returns exactly the surcharge that a purchase with
// should_service_apply_surcharge would add for the same card and amount.
func (s *Service) PreviewSurcharge(ctx context.Context, m *Merchant, req SurchargeRequest) (*SurchargeQuote, error) {
	if err := s.CheckCompanyToken(ctx, m, req.CompanyToken); err != nil {
		return nil, err
	}
	f := FieldErrors{}
	checkMoney(f, "", req.Amount, req.Currency)
	switch {
	case req.Card == nil && req.CardToken == "":
		f.Add("card", "send either card.token or the card details")
	case req.Card != nil && req.CardToken != "":
		f.Add("card", "send either card.token or the card details, not both")
	case req.Card != nil:
		checkQuotedCard(f, req.Card, s.now())
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	info, err := s.quoteCard(ctx, m, req)
	if err != nil {
		return nil, err
	}
	rate, surcharge := m.Settings.Surcharge.Quote(info, m.Country, req.Amount)
	return &SurchargeQuote{Card: info, Amount: surcharge, Rate: rate, Currency: req.Currency}, nil
}

// quoteCard describes the card of a surcharge request.
func (s *Service) quoteCard(ctx context.Context, m *Merchant, req SurchargeRequest) (CardInfo, error) {
	if req.Card != nil {
		return DescribeCard(*req.Card, "", m.Country), nil
	}
	var info CardInfo
	err := s.store.View(ctx, func(tx Tx) error {
		c, err := s.usableCard(tx, m, req.CardToken)
		if err != nil {
			return err
		}
		info = c.Info
		return nil
	})
	var e *Error
	if err != nil && !errors.As(err, &e) {
		return info, Internal("surcharge card", err)
	}
	return info, err
}
