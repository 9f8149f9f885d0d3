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
// read and answer their bank's prompt.
const ChallengeTTL = 10 * time.Minute

// ChallengePath is where the sandbox issuer's challenge page is served;
// the last path segment is the challenge capability.
const ChallengePath = "/acs/challenge/"

// 3-D Secure results and reasons (webhook threeds_result, threeds_result_reason).
const (
	ThreeDSAuthenticated = "authenticated"
	ThreeDSFailed        = "failed"
	ThreeDSRejected      = "rejected"
	ThreeDSAbandoned     = "abandoned"
)

// issueChallenge gives a transaction that requires authentication its
// one-time challenge secret: only its hash is stored, and the capability
// "<reference>.<secret>" is returned in t.AuthenticationURL.
func (s *Service) issueChallenge(t *Transaction) error {
	secret, err := s.token(48)
	if err != nil {
		return err
	}
	d := t.Details.ThreeDS
	if d == nil {
		d = &ThreeDS{Requested: true}
		t.Details.ThreeDS = d
	}
	d.ChallengeHash = hashChallenge(secret)
	d.ChallengeExpiresAt = s.now().Add(ChallengeTTL).Unix()
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
	cur, _ := LookupCurrency(t.Currency)
	c := &Challenge{Reference: t.Reference, TradingName: m.TradingName, Amount: FormatAmount(t.Total, cur) + " " + t.Currency,
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
			d.Result, d.Reason, d.ECI = ThreeDSFailed, ThreeDSRejected, ""
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

// returnAddress adds purchase_reference to the merchant's return address.
func returnAddress(raw, ref string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("purchase_reference", ref)
	u.RawQuery = q.Encode()
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
	case d.ChallengeDone || t.Status != StatusRequiresAuthentication:
		return nil, errChallengeUsed
	case s.now().Unix() >= d.ChallengeExpiresAt:
		return nil, errChallengeExpiry
	}
	return t, nil
}

// CompleteThreeDS finishes a purchase after its challenge (spec 4.9,
// 3dsredirect): a failed authentication is DECLINED with threeds_result
// failed; a successful one is authorised (APPROVED, or PRE_AUTHORISED
// when a hold was asked). A challenge left unanswered past ChallengeTTL
// is DECLINED as abandoned. Calling it before the challenge is answered,
// or again, is a 409. The caller checks the company token.
func (s *Service) CompleteThreeDS(ctx context.Context, m *Merchant, reference string) (*Transaction, error) {
	var t *Transaction
	var card *Card
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if t, err = tx.Transaction(m.ID, reference); errors.Is(err, ErrNotFound) {
			return errNoSuchTransaction
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
		return s.claim(tx, t, "authenticate")
	})
	if err != nil {
		return nil, asServiceError("3dsredirect", err)
	}
	if t.Status == StatusDeclined {
		return t, nil
	}
	return s.authorize(ctx, t, card, nil, AuthRequest{Hold: t.PreAuth, ThreeDS: true, Authenticated: t.Details.ThreeDS})
}

// checkThreeDSDone explains why t cannot complete authentication now; an
// expired, unanswered challenge is marked failed (abandoned).
func (s *Service) checkThreeDSDone(t *Transaction) error {
	d := t.Details.ThreeDS
	switch {
	case d == nil || !d.Requested:
		return Errorf(KindConflict, CodeInvalidState, "this transaction did not use 3-D Secure")
	case t.Status != StatusRequiresAuthentication && d.ChallengeDone:
		return errChallengeUsed
	case t.Status != StatusRequiresAuthentication:
		return Errorf(KindConflict, CodeInvalidState, "this transaction does not require authentication; it is %s", t.Status.Public())
	case !d.ChallengeDone && s.now().Unix() < d.ChallengeExpiresAt:
		return Errorf(KindConflict, CodeAuthenticationPending,
			"the customer has not completed authentication yet: call 3dsredirect after they return to your authentication_redirect_url")
	case !d.ChallengeDone:
		d.ChallengeDone, d.Result, d.Reason = true, ThreeDSFailed, ThreeDSAbandoned
	}
	return nil
}

// declineAuthentication records a failed or abandoned authentication.
func (s *Service) declineAuthentication(tx Tx, t *Transaction) error {
	now := s.now()
	t.Status, t.UpdatedAt, t.ProcessedAt = StatusDeclined, now, now
	t.Details.Message = "The customer did not pass 3-D Secure authentication with their card issuer; no money was taken"
	if err := s.save(tx, t, StatusRequiresAuthentication); errors.Is(err, ErrConflict) {
		return errInProgress
	} else if err != nil {
		return err
	}
	return s.outcome(tx, t)
}

// ExpireChallenges declines purchases whose 3-D Secure challenge expired
// unanswered (the customer abandoned it), so that no purchase waits in
// REQUIRES_AUTHENTICATION for ever; each gets its DECLINED outcome and
// webhook. A challenge that was answered is left for the merchant's
// 3dsredirect call. Moves are compare-and-set, so several instances
// running this job decline each purchase once. It returns how many it
// declined.
func (s *Service) ExpireChallenges(ctx context.Context) (int, error) {
	var waiting []*Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		waiting, err = tx.TransactionsInStatus(StatusRequiresAuthentication, s.now().Add(-ChallengeTTL), 100)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire challenges: %w", err)
	}
	declined := 0
	for _, t := range waiting {
		d := t.Details.ThreeDS
		if d == nil || d.ChallengeDone || s.now().Unix() < d.ChallengeExpiresAt {
			continue
		}
		err := s.store.Update(ctx, func(tx Tx) error {
			if err := s.checkThreeDSDone(t); err != nil {
				return err
			}
			return s.declineAuthentication(tx, t)
		})
		switch {
		case err == nil:
			declined++
		case errors.Is(err, errInProgress): // another instance, or the customer, got there first
		default:
			return declined, fmt.Errorf("expire challenge %s: %w", t.Reference, err)
		}
	}
	return declined, nil
}
