package paylink

import "context"

// A purchase through a processor that answers in process (the sandbox):
// one database transaction instead of two (docs/design.md, "Except when
// nothing outside the process can know").

// asksInTransaction reports whether a purchase asks the processor inside
// its own database transaction: only a processor that answers in process
// (InProcessProcessor), and not when told to record PROCESSING first.
func (s *Service) asksInTransaction() bool {
	return s.inProcess != nil && !s.cfg.RecordProcessingFirst && s.inProcess.AnswersInProcess()
}

// purchaseInOne is purchase for a processor that answers in process: one
// database transaction authorises, stores the card, asks the processor
// and records the transaction with its answer, posting and webhooks. No
// PROCESSING row is written, as nothing outside the process can know of
// an authorisation that is not recorded. The ledger posting and webhooks
// use m, the merchant the request was authenticated as. A card given
// for this purchase alone is stored only if the answer still needs its
// number (see keepOneOffCard).
func (s *Service) purchaseInOne(ctx context.Context, m *Merchant, req PurchaseRequest, ref string, newCard *Card, authorise func(tx Tx, ref string) error) (*Transaction, error) {
	oneOff := newCard != nil && !newCard.MultiUse
	var t *Transaction
	err := s.updateSpending(ctx, m, req.TransactionToken, ref, func(tx Tx) error {
		if err := authorise(tx, ref); err != nil {
			return err
		}
		card := newCard // a one-off card waits for keepOneOffCard
		if !oneOff {
			var err error
			if card, err = s.cardForPurchase(tx, m, req.CardToken, newCard); err != nil {
				return err
			}
		}
		t = s.newCardTransaction(m, &req, card, ref)
		if err := s.authorizeInProcess(ctx, t, card, req.Card, AuthRequest{Hold: req.PreAuth, ThreeDS: req.ThreeDS}); err != nil {
			return err
		}
		if oneOff {
			if err := s.keepOneOffCard(tx, t, card, req.Card.Number); err != nil {
				return err
			}
		}
		// Recorded at once with the answer: the move from PROCESSING that
		// the two-commit purchase makes, under the same rule.
		if err := checkTransition(t, StatusProcessing); err != nil {
			return err
		}
		if err := tx.CreateTransaction(t); err != nil {
			return err
		}
		om := &outcomeMerchant{tx: tx, id: m.ID, m: m}
		if err := s.postTransaction(tx, t, StatusProcessing, om); err != nil {
			return err
		}
		return s.outcome(tx, t, om, outcomeStep("", StatusProcessing, t.Status))
	})
	if err != nil {
		return nil, asServiceError("purchase", err)
	}
	return t, nil
}

// keepOneOffCard seals and stores card, given for purchase t alone, only
// if t still needs its number: a 3-D Secure challenge, which a second
// authorisation completes. Otherwise the number is never sealed or
// written (there is nothing to recover in process, see purchaseInOne) and
// t names no card token; its masked number, brand and fingerprint are in
// t's details.
func (s *Service) keepOneOffCard(tx Tx, t *Transaction, card *Card, number string) error {
	if t.Status != StatusRequiresAuthentication {
		t.CardToken = ""
		return nil
	}
	if err := s.sealCard(card, number); err != nil {
		return err
	}
	card.UsedAt = card.CreatedAt // spent by this purchase
	return tx.CreateCard(card)
}

// authorizeInProcess asks an in-process processor about t and applies
// its answer to t. An answer lost all the same (the processor was told
// to be slow meanwhile) fails the purchase with nothing recorded.
func (s *Service) authorizeInProcess(ctx context.Context, t *Transaction, card *Card, details *CardDetails, ar AuthRequest) error {
	ar, err := s.authRequest(t, card, details, ar)
	if err != nil {
		return err
	}
	_, call, cancel := s.callContext(ctx, t.UpdatedAt)
	defer cancel()
	res, err := ask(call, s.inProcess.AuthorizeInProcess, ar)
	if answerLost(call, err) {
		return &Error{Kind: KindUnavailable, Code: CodeProcessorUnavailable, Op: "authorize", Err: err,
			Message: "the payment processor did not answer; nothing was charged, please try again"}
	}
	return s.applyAnswer(ctx, t, res, err, ar.Hold)
}
