package paylink

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ChallengeTTL is how long a 3-D Secure challenge page can be used: twice
// the default transaction token lifetime, the time a customer needs to
// read and answer their bank's prompt. It is cut short by the attempt's
// own end when the authentication timeout is shorter.
const ChallengeTTL = 10 * time.Minute

// DefaultAuthenticationTimeout is the default lifetime of a 3-D Secure
// attempt (paylink serve --authentication-timeout): the challenge page's
// ChallengeTTL plus five minutes for the customer to come back from it
// and the payment to complete. A payment link's claim by an attempt lasts
// as long, so a link is free again when its attempt can no longer be
// authorised.
const DefaultAuthenticationTimeout = 15 * time.Minute

// MaxAuthenticationTimeout is the longest attempt lifetime: a challenged
// purchase's card is spent when the challenge is issued, and its sealed
// number is kept for CardRetention, which must outlive the attempt with
// room for the completion's own processor call (ProcessingTimeout).
const MaxAuthenticationTimeout = CardRetention - ProcessingTimeout

// ChallengePath is where the sandbox issuer's challenge page is served;
// the last path segment is the challenge capability.
const ChallengePath = "/acs/challenge/"

// 3-D Secure results and reasons (webhook threeds_result, threeds_result_reason).
const (
	ThreeDSAuthenticated = "authenticated"
	ThreeDSFailed        = "failed"
	ThreeDSRejected      = "rejected"
	ThreeDSAbandoned     = "abandoned"
	ThreeDSCanceled      = "canceled"
)

// fail records the challenge as done and failed for reason (rejected by
// the customer, abandoned, cancelled by a new payment): not authenticated,
// so no ECI.
func (d *ThreeDS) fail(reason string) {
	d.ChallengeDone, d.Result, d.Reason, d.ECI = true, ThreeDSFailed, reason, ""
}

// issueChallenge gives a transaction that requires authentication its
// one-time challenge secret: only its hash is stored, and the capability
// "<reference>.<secret>" is returned in t.AuthenticationURL.
func (s *Service) issueChallenge(t *Transaction) error {
	secret, err := s.randomToken(48)
	if err != nil {
		return err
	}
	d := t.Details.ThreeDS
	if d == nil {
		d = &ThreeDS{Requested: true}
		t.Details.ThreeDS = d
	}
	now := s.now()
	d.ChallengeHash = hashChallenge(secret)
	d.ChallengeExpiresAt = now.Add(s.challengeLifetime()).Unix()
	d.AttemptExpiresAt = now.Add(s.cfg.AuthenticationTimeout).Unix()
	t.AuthenticationURL = s.cfg.BaseURL + ChallengePath + t.Reference + "." + secret
	return nil
}

func hashChallenge(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Challenge is what the challenge page shows.
type Challenge struct {
	Reference    string
	TradingName  string
	Amount       string // "10.50 AUD"
	MaskedCard   string
	Brand        string
	ReturnOrigin string // scheme://host of the merchant's return address
	ExpiresAt    time.Time
}

var (
	errNoSuchChallenge = Errorf(KindNotFound, CodeNotFound, "this authentication page does not exist")
	errChallengeUsed   = Errorf(KindConflict, CodeAuthenticationComplete, "this authentication has already been completed")
	errChallengeExpiry = Errorf(KindConflict, CodeAuthenticationExpired, "this authentication page has expired")
	// errChallengeCanceled: the customer paid the link again from its page
	// (claimLinkFrom), which cancelled this attempt.
	errChallengeCanceled = Errorf(KindConflict, CodeAuthenticationComplete,
		"this payment was replaced by a newer one started on the payment page; nothing was charged for it")
)

// Challenge describes the open challenge a capability grants.
func (s *Service) Challenge(ctx context.Context, capability string) (*Challenge, error) {
	var c *Challenge
	err := s.store.View(ctx, func(tx Tx) error {
		t, err := s.openChallenge(tx, capability)
		if err != nil {
			return err
		}
		m, err := tx.Merchant(t.MerchantID)
		if err != nil {
			return err
		}
		c = describeChallenge(m, t)
		return nil
	})
	if err != nil {
		return nil, asServiceError("challenge", err)
	}
	return c, nil
}

func describeChallenge(m *Merchant, t *Transaction) *Challenge {
	c := &Challenge{Reference: t.Reference, TradingName: m.TradingName, Amount: FormatIn(t.Total, t.Currency) + " " + t.Currency,
		ExpiresAt: time.Unix(t.Details.ThreeDS.ChallengeExpiresAt, 0).UTC()}
	if t.Details.Card != nil {
		c.MaskedCard, c.Brand = t.Details.Card.Masked, strings.ToUpper(t.Details.Card.Brand)
	}
	if u, err := url.Parse(t.Details.ThreeDS.RedirectURL); err == nil {
		c.ReturnOrigin = u.Scheme + "://" + u.Host
	}
	return c
}

// CompleteChallenge records the customer's answer on the challenge page
// (success or failure), once, and returns the merchant's return address
// with purchase_reference added.
func (s *Service) CompleteChallenge(ctx context.Context, capability string, success bool) (string, error) {
	var back string
	err := s.store.Update(ctx, func(tx Tx) error {
		t, err := s.openChallenge(tx, capability)
		if err != nil {
			return err
		}
		d := t.Details.ThreeDS
		d.ChallengeDone, d.ChallengeIndicator, d.Result, d.Reason = true, "challenge", ThreeDSAuthenticated, ""
		d.ECI = authenticatedECI(t.Details.Card)
		if !success {
			d.fail(ThreeDSRejected)
		}
		t.UpdatedAt = s.now()
		if err := s.save(tx, t, StatusRequiresAuthentication); errors.Is(err, ErrConflict) {
			return errChallengeUsed
		} else if err != nil {
			return err
		}
		if back, err = returnAddress(d.RedirectURL, t.Reference); err != nil {
			return err
		}
		return s.recordEvent(tx, t.MerchantID, t.Reference, "threeds.challenge."+d.Result, map[string]any{"version": t.Version})
	})
	if err != nil {
		return "", asServiceError("complete challenge", err)
	}
	return back, nil
}

// authenticatedECI is the ECI of a fully authenticated challenge:
// 02 for Mastercard, 05 for the other brands.
func authenticatedECI(c *CardInfo) string {
	if c != nil && c.Brand == BrandMastercard {
		return "02"
	}
	return "05"
}

// returnAddress adds purchase_reference to the merchant's return address,
// in place of any it holds. The rest of its query is kept as written, in
// its order (url.Values would drop a pair holding ';' or a bad escape,
// and sort and re-encode the others: an address signed over its query
// would no longer verify).
func returnAddress(raw, ref string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	var pairs []string
	for _, pair := range strings.Split(u.RawQuery, "&") {
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); pair != "" && (err != nil || k != "purchase_reference") {
			pairs = append(pairs, pair)
		}
	}
	u.RawQuery = strings.Join(append(pairs, "purchase_reference="+url.QueryEscape(ref)), "&")
	return u.String(), nil
}

// openChallenge finds the transaction a capability points at and checks
// that its challenge is still open.
func (s *Service) openChallenge(tx Tx, capability string) (*Transaction, error) {
	ref, secret, ok := strings.Cut(capability, ".")
	if !ok || ref == "" || secret == "" || len(capability) > 256 {
		return nil, errNoSuchChallenge
	}
	t, err := tx.TransactionByReference(ref)
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchChallenge
	}
	if err != nil {
		return nil, err
	}
	d := t.Details.ThreeDS
	if d == nil || d.ChallengeHash == "" || subtle.ConstantTimeCompare([]byte(hashChallenge(secret)), []byte(d.ChallengeHash)) != 1 {
		return nil, errNoSuchChallenge
	}
	switch {
	case d.Reason == ThreeDSCanceled:
		return nil, errChallengeCanceled
	case d.Reason == ThreeDSAbandoned || s.unanswered(d):
		return nil, errChallengeExpiry // unanswered in time, declined by the expiry job or not yet
	case d.ChallengeDone || t.Status != StatusRequiresAuthentication:
		return nil, errChallengeUsed
	}
	return t, nil
}

// CompleteThreeDS finishes a purchase after its challenge (spec 4.9,
// 3dsredirect): a failed authentication is DECLINED with threeds_result
// failed; a successful one is authorised (APPROVED, or PRE_AUTHORISED
// when a hold was asked). A challenge left unanswered past ChallengeTTL
// is DECLINED as abandoned. Calling it before the challenge is answered,
// or again, is a 409. The caller checks the company token.
//
// The database transaction that sends the purchase to the processor first
// re-checks that the attempt is within its lifetime and, for a payment
// link, that the link still accepts this payment and this attempt still
// holds it, and that the card's token was not invalidated meanwhile. When
// not, nothing is authorised: the purchase is recorded
// FAILED in that same transaction and the caller gets the reason as a 409.
func (s *Service) CompleteThreeDS(ctx context.Context, m *Merchant, reference string) (*Transaction, error) {
	var t *Transaction
	var card *Card
	var details CardDetails
	var refused *Error
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if t, err = tx.Transaction(m.ID, reference); errors.Is(err, ErrNotFound) {
			return errNoSuchPurchase
		} else if err != nil {
			return err
		}
		if err := s.checkThreeDSDone(t); err != nil {
			return err
		}
		if t.Details.ThreeDS.Result == ThreeDSFailed {
			return s.declineAuthentication(tx, t)
		}
		if card, err = tx.Card(m.ID, t.CardToken); err != nil {
			return err
		}
		if refused = chargeable(card); refused != nil {
			return s.failAttempt(tx, t, refused)
		}
		if details, err = s.cardDetails(card, nil); err != nil {
			return err // the vault: nothing recorded, the attempt can be completed again
		}
		refused, err = s.startCompletion(tx, t)
		return err
	})
	switch {
	case err != nil:
		return nil, asServiceError("3dsredirect", err)
	case refused != nil:
		return nil, refused
	case t.Status == StatusDeclined:
		return t, nil
	}
	return s.authorize(ctx, t, card, &details, AuthRequest{Hold: t.PreAuth, ThreeDS: true, Authenticated: t.Details.ThreeDS})
}

// chargeable says why an answered attempt's card can no longer be
// charged: invalidated during the challenge, or its number erased (a
// card outliving CardRetention, which MaxAuthenticationTimeout rules out).
func chargeable(card *Card) *Error {
	switch {
	case !card.InvalidatedAt.IsZero():
		return errAttemptCardInvalidated
	case card.Sealed.KeyID == "":
		return errAttemptCardErased
	}
	return nil
}

// Why an answered attempt can no longer be authorised (CompleteThreeDS).
// The hosted page shows them to the customer, so each says that the card
// was not charged.
var (
	errAttemptExpired = Errorf(KindConflict, CodeAuthenticationExpired,
		"this payment was not completed in time after 3-D Secure authentication; your card was not charged, please start again")
	errAttemptLinkPaid = Errorf(KindConflict, CodeLinkPaid,
		"this payment link has already been paid by another payment; your card was not charged")
	errAttemptLinkCancelled = Errorf(KindConflict, CodeLinkCancelled,
		"this payment link has been cancelled; your card was not charged")
	errAttemptLinkExpired = Errorf(KindConflict, CodeLinkExpired,
		"this payment link has expired; your card was not charged")
	errAttemptNotHolding = Errorf(KindConflict, CodeAuthenticationExpired,
		"this payment attempt timed out; your card was not charged, please start again")
	errAttemptCardInvalidated = Errorf(KindConflict, CodeCardTokenInvalid,
		"this card token was invalidated during 3-D Secure authentication; the card was not charged")
	errAttemptCardErased = Errorf(KindConflict, CodeCardTokenUsed,
		"this card's number was erased before 3-D Secure authentication completed; the card was not charged, please start again")
)

// startCompletion moves an answered, authenticated attempt to PROCESSING
// inside tx, or, when the attempt ended or its link no longer accepts it,
// records it FAILED and returns why (refused). A link attempt's claim is
// renewed, so that no other attempt can take the link while the processor
// answers.
func (s *Service) startCompletion(tx Tx, t *Transaction) (refused *Error, err error) {
	l, refused, err := s.completable(tx, t)
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return refused, s.failAttempt(tx, t, refused)
	}
	if err := s.claim(tx, t, "authenticate"); err != nil {
		return nil, err
	}
	if l == nil {
		return nil, nil
	}
	l.ClaimedAt, l.UpdatedAt = t.UpdatedAt, t.UpdatedAt
	if err := tx.UpdatePaymentLink(l); errors.Is(err, ErrConflict) {
		return nil, errInProgress
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}

// completable checks, inside tx, that an answered attempt may still be
// authorised: for a link payment, on a link that is unpaid, not cancelled
// or expired (checked first, as the clearest reason to give); within the
// attempt's lifetime; and held by this attempt. It returns the link (nil
// for API purchases) and the refusal, if any.
func (s *Service) completable(tx Tx, t *Transaction) (l *PaymentLink, refused *Error, err error) {
	now := s.now()
	if t.PaymentLinkID != "" {
		if l, err = tx.PaymentLink(t.MerchantID, t.PaymentLinkID); err != nil {
			return nil, nil, err
		}
		switch linkOpen(l, now) {
		case errLinkPaid:
			return l, errAttemptLinkPaid, nil
		case errLinkCancelled:
			return l, errAttemptLinkCancelled, nil
		case errLinkExpired:
			return l, errAttemptLinkExpired, nil
		}
	}
	switch {
	case now.Unix() >= attemptDeadline(t.Details.ThreeDS):
		return l, errAttemptExpired, nil
	case l != nil && !l.heldBy(t.Reference, now, s.cfg.AuthenticationTimeout):
		return l, errAttemptNotHolding, nil
	}
	return l, nil, nil
}

// attemptDeadline is when an authentication attempt ends (unix seconds).
// Attempts recorded before attempts had their own end use their
// challenge's, the earlier of the two.
func attemptDeadline(d *ThreeDS) int64 {
	if d.AttemptExpiresAt != 0 {
		return d.AttemptExpiresAt
	}
	return d.ChallengeExpiresAt
}

// failAttempt records an authenticated attempt that may no longer be
// authorised as FAILED, with why as its message; no processor is asked.
func (s *Service) failAttempt(tx Tx, t *Transaction, why *Error) error {
	now := s.now()
	t.Status, t.UpdatedAt, t.ProcessedAt = StatusFailed, now, now
	t.Details.Message = sentenceCase(why.Message)
	m := newOutcomeMerchant(tx, t)
	if err := s.write(tx, t, StatusRequiresAuthentication, m); errors.Is(err, ErrConflict) {
		return errInProgress
	} else if err != nil {
		return err
	}
	return s.outcome(tx, t, m, StepAuthorisation)
}

// sentenceCase capitalises the first letter of an error message.
func sentenceCase(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// checkThreeDSDone explains why t cannot complete authentication now; an
// expired, unanswered challenge is marked failed (abandoned).
func (s *Service) checkThreeDSDone(t *Transaction) error {
	d := t.Details.ThreeDS
	switch {
	case d == nil || !d.Requested:
		return Errorf(KindConflict, CodeInvalidState, "this transaction did not use 3-D Secure")
	case t.Status == StatusProcessing || t.Status == StatusUnknown:
		return errInProgress // an earlier call's processor answer is awaited
	case t.Status != StatusRequiresAuthentication && d.ChallengeDone:
		// Completed by an earlier call, or ended by the expiry job: say
		// where the purchase stands rather than only that it is over.
		return Errorf(KindConflict, CodeAuthenticationComplete, "this authentication has already ended; the purchase is %s", t.Status.Public())
	case t.Status != StatusRequiresAuthentication:
		return Errorf(KindConflict, CodeInvalidState, "this transaction does not require authentication; it is %s", t.Status.Public())
	case !d.ChallengeDone && !s.unanswered(d):
		return Errorf(KindConflict, CodeAuthenticationPending,
			"the customer has not completed authentication yet: call 3dsredirect after they return to your authentication_redirect_url")
	case !d.ChallengeDone:
		d.fail(ThreeDSAbandoned)
	}
	return nil
}

// declineAuthentication records a failed or abandoned authentication.
func (s *Service) declineAuthentication(tx Tx, t *Transaction) error {
	now := s.now()
	t.Status, t.UpdatedAt, t.ProcessedAt = StatusDeclined, now, now
	switch t.Details.ThreeDS.Reason {
	case ThreeDSAbandoned:
		t.Details.Message = "3-D Secure authentication with the card issuer was not completed in time; no money was taken"
	case ThreeDSCanceled:
		t.Details.Message = "3-D Secure authentication was cancelled: another payment was started on the page; no money was taken"
	default:
		t.Details.Message = "3-D Secure authentication with the card issuer did not succeed; no money was taken"
	}
	m := newOutcomeMerchant(tx, t)
	if err := s.write(tx, t, StatusRequiresAuthentication, m); errors.Is(err, ErrConflict) {
		return errInProgress
	} else if err != nil {
		return err
	}
	return s.outcome(tx, t, m, StepAuthorisation)
}

// ExpireChallenges ends 3-D Secure attempts that can no longer complete,
// so that no purchase waits in REQUIRES_AUTHENTICATION for ever and its
// payment link is free again; each gets its outcome and webhook. A
// challenge that expired unanswered (the customer abandoned it) is
// DECLINED; an answered one whose attempt outlived the authentication
// timeout without being completed (the customer never came back) is
// FAILED, or DECLINED when authentication failed. Moves are
// compare-and-set, so several instances running this job end each attempt
// once. It works challengeBatch at a time until none is left (drain) and
// returns how many it ended.
func (s *Service) ExpireChallenges(ctx context.Context) (int, error) {
	return drain(ctx, challengeBatch, s.expireChallengeBatch)
}

// challengeBatch is how many waiting attempts one pass of
// ExpireChallenges reads.
const challengeBatch = 100

// expireChallengeBatch ends up to challengeBatch attempts that are over
// and says how many it read and ended.
func (s *Service) expireChallengeBatch(ctx context.Context) (read, ended int, err error) {
	var waiting []*Transaction
	err = s.store.View(ctx, func(tx Tx) error {
		var err error
		waiting, err = tx.TransactionsInStatus(StatusRequiresAuthentication, s.expiryCutoff(), Position{}, challengeBatch)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("expire challenges: %w", err)
	}
	for _, t := range waiting {
		if !s.attemptOver(t) {
			continue
		}
		err := s.store.Update(ctx, func(tx Tx) error { return s.endAttempt(tx, t) })
		switch {
		case err == nil:
			ended++
		case errors.Is(err, errInProgress): // another instance, or the customer, got there first
		default:
			return len(waiting), ended, fmt.Errorf("expire challenge %s: %w", t.Reference, err)
		}
	}
	return len(waiting), ended, nil
}

// expiryCutoff bounds the last update of every attempt that can be over:
// an unanswered one was last updated when its challenge was issued, at
// least the challenge lifetime c ago; an answered one past the
// authentication timeout a was answered within c of its issue, at least
// a-c ago. One second covers the whole seconds attempts' ends are kept in.
func (s *Service) expiryCutoff() time.Time {
	a, c := s.cfg.AuthenticationTimeout, s.challengeLifetime()
	return s.now().Add(-min(c, a-c) + time.Second)
}

// attemptOver reports whether t's attempt can no longer complete: its
// challenge expired unanswered, or the attempt outlived its lifetime.
func (s *Service) attemptOver(t *Transaction) bool {
	d := t.Details.ThreeDS
	return d != nil && (s.unanswered(d) || s.now().Unix() >= attemptDeadline(d))
}

// unanswered reports whether d's challenge expired without an answer.
func (s *Service) unanswered(d *ThreeDS) bool {
	return !d.ChallengeDone && s.now().Unix() >= d.ChallengeExpiresAt
}

// challengeLifetime is how long a challenge may be answered: ChallengeTTL,
// or the whole attempt's lifetime (Config.AuthenticationTimeout) when
// that is shorter.
func (s *Service) challengeLifetime() time.Duration {
	return min(ChallengeTTL, s.cfg.AuthenticationTimeout)
}

// endAttempt records the end of an attempt that is over (attemptOver).
func (s *Service) endAttempt(tx Tx, t *Transaction) error {
	if err := s.checkThreeDSDone(t); err != nil {
		return err
	}
	if t.Details.ThreeDS.Result == ThreeDSFailed {
		return s.declineAuthentication(tx, t)
	}
	return s.failAttempt(tx, t, errAttemptExpired)
}
