package paylink

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"time"
)

// LinkSession is a payment link as opened through one of its page URLs.
type LinkSession struct {
	Link     *PaymentLink
	Merchant *Merchant
	Mode     string // ChannelHPP (url) or ChannelVT (virtual_terminal_url)
}

// OpenLink finds the link a page token belongs to. The token is a bearer
// secret: anyone holding the URL may pay the link.
func (s *Service) OpenLink(ctx context.Context, token string) (*LinkSession, error) {
	if len(token) != linkTokenLength {
		return nil, errNoSuchLink
	}
	hash := HashSecret(token)
	var ls LinkSession
	err := s.store.View(ctx, func(tx Tx) error {
		l, err := tx.PaymentLinkByTokenHash(hash)
		if err != nil {
			return err
		}
		ls.Link = l
		ls.Merchant, err = s.merchantByID(tx, l.MerchantID)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchLink
	}
	if err != nil {
		return nil, Internal("open payment link", err)
	}
	ls.Mode = ChannelHPP
	if SecretMatches(token, ls.Link.VTTokenHash) {
		ls.Mode = ChannelVT
	}
	return &ls, nil
}

// LinkPayment is a payment entered on a link's page.
type LinkPayment struct {
	// PaymentType is PaymentTypeCard, or a wallet (PaymentTypeApplePay,
	// PaymentTypeGooglePay) whose device card is in Card.
	PaymentType string
	Customer    Customer // IPAddress from the request; Timezone defaults to UTC
	Card        *CardDetails
	// InvoiceNumber is typed by staff in the virtual terminal; the hosted
	// page uses the link's merchant reference.
	InvoiceNumber string
	// ReturnURL is where a 3-D Secure challenge returns to (hosted page
	// card payments); empty for no 3-D Secure.
	ReturnURL string
	// Browser is the page's cookie identifying the customer's (or the
	// agent's) browser: the attempt keeps its hash, so that the browser
	// alone is led back to the page after a 3-D Secure challenge
	// (LinkReturn), a second payment from it waits for the attempt's
	// outcome (OwnLinkAttempt), and its own open challenge gives way when
	// it pays again (Back, a second click).
	Browser string
}

// validate checks a page payment in place.
func (p *LinkPayment) validate(ls *LinkSession, s *Service) error {
	f := FieldErrors{}
	p.Customer.Timezone = orDefault(p.Customer.Timezone, "UTC")
	if net.ParseIP(p.Customer.IPAddress) == nil {
		return Internal("link payment", errors.New("no client IP address"))
	}
	checkLinkCustomer(f, "customer.", p.Customer)
	checkInvoice(f, "invoice_number", p.InvoiceNumber)
	if p.Card == nil {
		f.Add("card.number", "is required")
	} else {
		checkCard(f, p.Card, s.now())
	}
	if err := f.Err(); err != nil {
		return err
	}
	if ls.Mode == ChannelVT && (p.PaymentType != PaymentTypeCard || p.ReturnURL != "") {
		return Errorf(KindInvalid, CodeNotSupported, "the virtual terminal takes card payments only, without 3-D Secure")
	}
	return nil
}

// CheckLinkPayment reports every problem PayLink would find with p's
// details and card, without paying: the hosted page without JavaScript
// lists them all in one answer when it has found some of its own (an
// empty field), so that the customer does not type the card again to
// learn of the next one.
func (s *Service) CheckLinkPayment(ls *LinkSession, p LinkPayment) error {
	if p.Card != nil {
		card := *p.Card // validate normalises the card in place
		p.Card = &card
	}
	return p.validate(ls, s)
}

// PayLink pays a link through the shared purchase core: the link attempt
// is claimed in the first database transaction, instead of a transaction
// token. Declines are results (the link is then free for another try).
func (s *Service) PayLink(ctx context.Context, ls *LinkSession, p LinkPayment) (*Transaction, error) {
	if err := p.validate(ls, s); err != nil {
		return nil, err
	}
	l := ls.Link
	req := PurchaseRequest{
		Customer: linkCustomer(l, p.Customer, ls.Mode), Card: p.Card,
		InvoiceNumber: orDefault(p.InvoiceNumber, l.MerchantReference),
		Amount:        l.Amount, Currency: l.Currency, ApplySurcharge: l.ApplySurcharge,
		ThreeDS: p.ReturnURL != "", RedirectURL: p.ReturnURL,
		Channel: ls.Mode, PaymentType: p.PaymentType, PaymentLinkID: l.ID, WebhookURL: l.WebhookURL,
		Browser: p.Browser,
	}
	// Only the hosted page's own payment replaces its open challenge: the
	// virtual terminal shares the browser's cookie with the page, and an
	// agent paying from a browser a customer left mid-challenge (a
	// counter device) must not void the customer's attempt unseen.
	replaces := p.Browser
	if ls.Mode != ChannelHPP {
		replaces = ""
	}
	return s.purchase(ctx, ls.Merchant, req, func(tx Tx, ref string) error { return s.claimLinkFrom(tx, l, ref, replaces) })
}

// claimLinkFrom claims link l for attempt ref made from browser. When the
// link is held by a 3-D Secure attempt this same browser started and has
// not finished (the customer pressed Back, or clicked Pay twice), that
// attempt is cancelled first: it has taken no money, and its customer has
// chosen to pay again. Another browser's attempt, or one the acquirer is
// still answering (PROCESSING: it may yet be approved, or ask for its
// challenge), keeps the link (errLinkBusy). On PostgreSQL
// two such payments at once may each find the other's attempt holding
// the link once it commits: each cancels what it finds, a few times at
// most (linkChangeTries).
func (s *Service) claimLinkFrom(tx Tx, l *PaymentLink, ref, browser string) error {
	for range linkChangeTries {
		err := s.claimLink(tx, l.MerchantID, l.ID, ref)
		if !errors.Is(err, errLinkBusy) || browser == "" {
			return err
		}
		cancelled, cerr := s.cancelOwnAttempt(tx, l, browser)
		if cerr != nil {
			return cerr
		}
		if !cancelled {
			return err
		}
	}
	return errLinkBusy
}

// startedBy reports whether t is an attempt on link linkID that browser
// started (TransactionDetails.BrowserHash, or ThreeDS.BrowserHash for an attempt
// stored before the first).
func startedBy(t *Transaction, linkID, browser string) bool {
	hash := t.Details.BrowserHash
	if hash == nil && t.Details.ThreeDS != nil {
		hash = t.Details.ThreeDS.BrowserHash
	}
	return t.PaymentLinkID == linkID && browser != "" && hash != nil && SecretMatches(browser, hash)
}

// OwnLinkAttempt is the attempt holding the session's link when browser
// started it (a hosted-page card attempt, which keeps its browser's hash:
// startedBy), nil when the link is free or another browser's attempt
// holds it. The page reads it when a second payment from the same
// browser (a double click, a reload of the form's POST) finds the link
// busy, to wait for the first attempt's outcome and show it.
func (s *Service) OwnLinkAttempt(ctx context.Context, ls *LinkSession, browser string) (*Transaction, error) {
	var held *Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		l, err := tx.PaymentLink(ls.Link.MerchantID, ls.Link.ID)
		if err != nil {
			return err
		}
		held, err = claimant(tx, l)
		return err
	})
	if err != nil {
		return nil, Internal("own link attempt", err)
	}
	if held == nil || !startedBy(held, ls.Link.ID, browser) {
		return nil, nil
	}
	return held, nil
}

// openAttemptOf reports whether t is a 3-D Secure attempt on link linkID,
// still waiting for its challenge, that browser started.
func openAttemptOf(t *Transaction, linkID, browser string) bool {
	return t.Status == StatusRequiresAuthentication && startedBy(t, linkID, browser)
}

// cancelOwnAttempt cancels the 3-D Secure attempt holding link l when
// browser started it and its challenge is still open, and reports whether
// the link's holder changed (cancelled here, or ended by another
// transaction since the link was read): then the claim is worth trying
// again.
func (s *Service) cancelOwnAttempt(tx Tx, l *PaymentLink, browser string) (bool, error) {
	current, err := tx.PaymentLink(l.MerchantID, l.ID)
	if err != nil {
		return false, err
	}
	held, err := claimant(tx, current)
	if held == nil || err != nil {
		return false, err
	}
	switch {
	case openAttemptOf(held, l.ID, browser):
	case held.Status != StatusProcessing && held.Status != StatusRequiresAuthentication && held.Status != StatusUnknown:
		return true, nil // it ended after the link was read: read the link again
	default:
		return false, nil // another browser's attempt, or one being authorised (the page waits for its own: OwnLinkAttempt)
	}
	held.Details.ThreeDS.fail(ThreeDSCanceled)
	if err := s.declineAuthentication(tx, held); err != nil && !errors.Is(err, errInProgress) {
		return false, err
	}
	return true, nil // cancelled, or changed by another transaction: read the link again
}

// linkCustomer is the payer of a link payment: what the page's form sent,
// with the link's customer reference unless staff typed one in the
// virtual terminal.
func linkCustomer(l *PaymentLink, c Customer, mode string) Customer {
	if mode != ChannelVT || c.Reference == "" {
		c.Reference = l.Customer.Reference
	}
	c.ID = l.Customer.ID
	return c
}

// AltCharge completes a payment that the customer approved with a non-card
// provider (Zip). It runs outside any database transaction, after the
// attempt is claimed, and answers like a card processor.
type AltCharge func(ctx context.Context, t *Transaction) (AuthResult, error)

// PayLinkAlternative pays a hosted-page link with a non-card method: the
// attempt is claimed and the transaction created PROCESSING, then charge
// asks the provider, then the answer is recorded. No surcharge applies.
func (s *Service) PayLinkAlternative(ctx context.Context, ls *LinkSession, paymentType string, c Customer, browser string, charge AltCharge) (*Transaction, error) {
	if ls.Mode != ChannelHPP {
		return nil, Errorf(KindInvalid, CodeNotSupported, "the virtual terminal takes card payments only")
	}
	if err := CheckLinkCustomer(c); err != nil {
		return nil, err
	}
	c.Timezone = orDefault(c.Timezone, "UTC")
	t, err := s.newAltTransaction(ls, paymentType, linkCustomer(ls.Link, c, ls.Mode), browser)
	if err != nil {
		return nil, Internal("alternative payment", err)
	}
	err = s.updateSpending(ctx, ls.Merchant, "", t.Reference, func(tx Tx) error {
		if err := s.claimLinkFrom(tx, ls.Link, t.Reference, browser); err != nil {
			return err
		}
		return tx.CreateTransaction(t)
	})
	if err != nil {
		return nil, asServiceError("alternative payment", err)
	}
	ctx, call, cancel := s.callContext(ctx, t.UpdatedAt)
	defer cancel()
	res, err := ask(call, charge, t)
	if answerLost(call, err) {
		return s.awaitInquiry(ctx, t, "alternative payment", err), nil
	}
	if err != nil {
		s.log.ErrorContext(ctx, "payment provider error", "reference", t.Reference, "payment_type", paymentType, "err", err)
		res = AuthResult{Outcome: OutcomeFailed, Message: "the payment provider could not be reached; no money was taken, please try again"}
	}
	s.applyAuth(t, res, false)
	return s.recordOutcome(ctx, t, "alternative payment")
}

// newAltTransaction builds the PROCESSING transaction of a non-card
// payment of a link from browser: no card, no surcharge.
func (s *Service) newAltTransaction(ls *LinkSession, paymentType string, c Customer, browser string) (*Transaction, error) {
	ref, err := s.reference("pr_")
	if err != nil {
		return nil, err
	}
	l, now := ls.Link, s.now()
	t := &Transaction{
		Reference: ref, MerchantID: l.MerchantID, InvoiceNumber: l.MerchantReference,
		PaymentType: paymentType, Channel: ls.Mode, Status: StatusProcessing, Currency: l.Currency,
		Amount: l.Amount, Total: l.Amount, PaymentLinkID: l.ID, CreatedAt: now, UpdatedAt: now,
		Details: TransactionDetails{Customer: c, WebhookURL: l.WebhookURL, RegionClass: RegionDomestic},
	}
	if browser != "" {
		t.Details.BrowserHash = HashSecret(browser)
	}
	return t, nil
}

// LinkSurcharge quotes the surcharge a card would attract on a link, for
// the page's live order summary; it is exactly what PayLink would add.
func (s *Service) LinkSurcharge(ls *LinkSession, number string) (*SurchargeQuote, error) {
	pan, _, err := ParseCardNumber(number)
	if err != nil {
		return nil, &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "card number is not valid",
			Fields: map[string]string{"card.number": "is not a valid card number"}}
	}
	m, l := ls.Merchant, ls.Link
	info := DescribeCard(CardDetails{Number: pan}, "", m.Country)
	q := &SurchargeQuote{Card: info, Currency: l.Currency}
	if l.ApplySurcharge {
		q.Rate, q.Amount = m.Settings.Surcharge.Quote(info, m.Country, l.Amount)
	}
	return q, nil
}

// LinkTransaction loads a transaction made on this link (the 3-D Secure
// return and the result pages); any other reference is not found
// (errNoSuchTransaction), so a page token reveals nothing else.
func (s *Service) LinkTransaction(ctx context.Context, ls *LinkSession, ref string) (*Transaction, error) {
	var t *Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		t, err = tx.Transaction(ls.Link.MerchantID, strings.TrimSpace(ref))
		return err
	})
	if errors.Is(err, ErrNotFound) || (err == nil && t.PaymentLinkID != ls.Link.ID) {
		return nil, errNoSuchTransaction
	}
	if err != nil {
		return nil, Internal("load link transaction", err)
	}
	return t, nil
}

// LinkReturnPath is where a hosted page's 3-D Secure attempt returns,
// followed by the link's id. The return address is stored with the
// payment and passed to the issuer, so it names the link by id rather
// than by its page token; LinkReturn leads on to the page.
const LinkReturnPath = "/checkout/return/"

// linkReturnGrace is how long after its attempt ended a customer coming
// back from 3-D Secure is still led to the link's page.
const linkReturnGrace = time.Hour

// LinkReturned is where a customer back from a hosted page's 3-D Secure
// attempt goes: the link's page (PageURL), or, for a browser other than
// the one that started the attempt, the attempt's outcome alone
// (Transaction), since the page's address would hand its token, and the
// customer details it shows, to whoever holds the return address.
type LinkReturned struct {
	PageURL     string
	Transaction *Transaction
}

// LinkReturn answers a return from the 3-D Secure attempt ref of link
// linkID, made from browser (the page's cookie, "" if none came). Only an
// attempt of that link, made on its page, that ended less than an hour ago
// leads anywhere. The browser that started the attempt is led to the
// link's page with the attempt's reference, which completes it; any other
// has the attempt completed here (the issuer has answered: completing it
// is what the customer asked for, whoever loads the address) and gets its
// outcome without the page.
func (s *Service) LinkReturn(ctx context.Context, linkID, ref, browser string) (*LinkReturned, error) {
	ref = strings.TrimSpace(ref)
	var l *PaymentLink
	var t *Transaction
	var m *Merchant
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		if t, err = tx.TransactionByReference(ref); err != nil {
			return err
		}
		d := t.Details.ThreeDS
		if t.PaymentLinkID != linkID || t.Channel != ChannelHPP || d == nil || attemptDeadline(d) == 0 ||
			!s.now().Before(time.Unix(attemptDeadline(d), 0).Add(linkReturnGrace)) {
			return ErrNotFound
		}
		if l, err = tx.PaymentLink(t.MerchantID, linkID); err != nil {
			return err
		}
		m, err = s.merchantByID(tx, t.MerchantID)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(KindNotFound, CodeNotFound, "this payment attempt has ended: open the payment link again")
	}
	if err != nil {
		return nil, Internal("link return", err)
	}
	if startedBy(t, linkID, browser) {
		urls, err := s.openLinkURLs(l)
		if err != nil {
			return nil, err
		}
		return &LinkReturned{PageURL: urls.Page + "/3ds?purchase_reference=" + url.QueryEscape(ref)}, nil
	}
	if t.Status == StatusRequiresAuthentication {
		done, err := s.CompleteThreeDS(ctx, m, ref)
		switch {
		case err == nil:
			t = done
		case AsError(err).Kind != KindConflict:
			return nil, err
		default: // not answered yet, or completed by another load: show where it stands
			if t, err = s.TransactionStatus(ctx, m, ref); err != nil {
				return nil, err
			}
		}
	}
	return &LinkReturned{Transaction: t}, nil
}

// CheckLinkPayable reports why the session's link cannot take a payment
// now (paid, cancelled, expired, an attempt in progress), or nil. The
// open 3-D Secure attempt of browser itself does not stand in the way: a
// payment from it cancels that attempt (claimLinkFrom).
func (s *Service) CheckLinkPayable(ctx context.Context, ls *LinkSession, browser string) error {
	return s.store.View(ctx, func(tx Tx) error {
		err := s.linkPayable(tx, ls.Link, s.now())
		if !errors.Is(err, errLinkBusy) || browser == "" {
			return err
		}
		if held, rerr := claimant(tx, ls.Link); rerr == nil && held != nil && openAttemptOf(held, ls.Link.ID, browser) {
			return nil
		}
		return err
	})
}

// LinkHeldInDoubt reports whether the session's link is held by a
// payment whose outcome is in doubt (UNKNOWN, or PROCESSING past the
// authentication timeout: the processor may have taken the money), which
// keeps the link until recovery or an operator records the outcome, not
// for the timeout: the page then says so, rather than that the form
// comes back within minutes.
func (s *Service) LinkHeldInDoubt(ctx context.Context, ls *LinkSession) (bool, error) {
	var doubt bool
	err := s.store.View(ctx, func(tx Tx) error {
		t, err := claimant(tx, ls.Link)
		doubt = heldInDoubt(t, !ls.Link.busy(s.now(), s.cfg.AuthenticationTimeout))
		return err
	})
	if err != nil {
		return false, Internal("link held in doubt", err)
	}
	return doubt, nil
}

// CheckLinkAttempts reports errLinkRate when the session's link has used
// up its attempts in the window running now (as read with the session),
// so that a wallet's sheet or Zip's page is not opened only for its
// approval to be refused; the page itself still shows its form and state.
func (s *Service) CheckLinkAttempts(ls *LinkSession) error {
	return withinAttempts(ls.Link, s.now())
}
