package paylink

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// APIKey is one of a merchant's API keys, stored as a hash. A merchant has
// one current key; rolling it issues a new one and leaves the previous
// one working until ExpiresAt (the overlap), so that a merchant can
// deploy the new key before the old one stops, or revoke a leaked key at
// once with no overlap.
type APIKey struct {
	ID         string // APIKeyID of Hash: non-secret, named in the audit log
	MerchantID string
	Hash       []byte
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero while the key is current
}

// ActiveAt reports whether the key authenticates at now: a key stops
// working at its ExpiresAt, not after it.
func (k *APIKey) ActiveAt(now time.Time) bool {
	return k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt)
}

// MaxAPIKeyOverlap bounds how long a rolled key keeps working: a week is
// enough to deploy a new key everywhere (Stripe allows up to seven days),
// and a key that leaked must not linger for months.
const MaxAPIKeyOverlap = 7 * 24 * time.Hour

// RollAPIKey issues merchant merchantID a new API key and returns it
// (shown once; only its hash is stored). Every previous key keeps working
// until now+overlap at the latest (a key already due to expire earlier
// keeps its earlier end); an overlap of 0 revokes them at once. The
// overlap is whole seconds, as the audit log records it. This
// instance forgets its cached authentications; another instance sees the
// roll when its cache entry ends (AuthCacheTTL), and never accepts a
// previous key after its end once it has read it. A caller that showed
// its user the current key (the dashboard), or read it (the CLI), passes
// its id (Merchant.APIKeyID) as from: when another roll has
// replaced that key meanwhile, this one is refused (a conflict naming
// the key now current), rather than cutting the other roll's new key's
// life to this roll's overlap; "" rolls whatever key is current.
func (s *Service) RollAPIKey(ctx context.Context, merchantID, from string, overlap time.Duration) (string, error) {
	if err := checkStaff(ctx, merchantID, PermAPIKeys); err != nil {
		return "", err
	}
	if overlap < 0 || overlap > MaxAPIKeyOverlap || overlap%time.Second != 0 {
		return "", &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "the overlap must be whole seconds between 0 and 168h",
			Fields: map[string]string{"overlap": "must be whole seconds between 0 and 168h"}}
	}
	secret, err := s.newAPIKey()
	if err != nil {
		return "", Internal("roll api key", err)
	}
	now := s.now()
	k := &APIKey{MerchantID: merchantID, Hash: HashSecret(secret), CreatedAt: now}
	k.ID = APIKeyID(k.Hash)
	err = s.store.Update(ctx, func(tx Tx) error {
		// Locked first, so that racing rolls read the key one after the
		// other (PostgreSQL's READ COMMITTED would let each read the
		// same key and pass the check below).
		if err := tx.LockMerchantSettings(merchantID); err != nil {
			return err
		}
		m, err := tx.Merchant(merchantID)
		if err != nil {
			return err
		}
		if from != "" && m.APIKeyID() != from {
			return Errorf(KindConflict, CodeInvalidState,
				"the API key %s was rolled meanwhile, and %s is current now: nothing was changed; look at the keys again before rolling", from, m.APIKeyID())
		}
		if err := tx.RollAPIKey(k, now.Add(overlap)); err != nil {
			return err
		}
		return s.audit(ctx, tx, AuditEvent{MerchantID: merchantID, Action: AuditAPIKeyRotate, ObjectType: ObjectAPIKey,
			ObjectID: k.ID, Outcome: OutcomeSuccess,
			Detail: fmt.Sprintf("previous=%s overlap=%ds", m.APIKeyID(), int64(overlap/time.Second))})
	})
	if errors.Is(err, ErrNotFound) {
		return "", Errorf(KindNotFound, CodeNotFound, "no merchant %s", merchantID)
	}
	if err != nil {
		return "", asServiceError("roll api key", err)
	}
	return secret, nil
}

// APIKeys lists the merchant's API keys, the current one first, then
// the previous ones newest first, with when each
// stops working, for the dashboard's developers page. Keys that expired
// are listed too: their ids name actors in the audit log.
func (s *Service) APIKeys(ctx context.Context, m *Merchant) ([]*APIKey, error) {
	var out []*APIKey
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		out, err = tx.APIKeys(m.ID)
		return err
	})
	if err != nil {
		return nil, Internal("list api keys", err)
	}
	return out, nil
}
