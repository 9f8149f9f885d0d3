package paylink

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// SecretKind names a place where sealed secrets are stored.
type SecretKind string

// The sealed secrets paylink stores. Key rotation re-seals all of them.
const (
	SecretCard          SecretKind = "card"                 // a vaulted card number, with its fingerprint
	SecretDirectDebit   SecretKind = "direct_debit_account" // a direct debit's account number
	SecretLinkTokens    SecretKind = "payment_link_tokens"  // a payment link's page tokens
	SecretWebhookSecret SecretKind = "webhook_secret"       // a merchant's webhook signing secret
	SecretTOTP          SecretKind = "totp_secret"          // a dashboard user's two-factor secret
	// SecretIdempotentResponse is an idempotency key's stored answer (ID
	// the key, MerchantID its merchant).
	SecretIdempotentResponse SecretKind = "idempotency_response"
)

// SecretKinds lists every kind, in the order rotation visits them.
// Merchants' webhook secrets come last: CheckSecretsOpen samples them,
// so a rotation stopped at any kind leaves them under the old key, and an
// instance started without that key refuses to start rather than failing
// card payments or two-factor sign-ins later.
func SecretKinds() []SecretKind {
	return []SecretKind{SecretCard, SecretDirectDebit, SecretLinkTokens, SecretTOTP, SecretIdempotentResponse, SecretWebhookSecret}
}

// StoredSecret is one sealed secret as key rotation sees it.
type StoredSecret struct {
	Kind       SecretKind
	ID         string // card token, transaction reference, link id or merchant id
	Index      int    // webhook secrets: position in the merchant's list
	MerchantID string
	Sealed     SealedSecret
	// Cards only: the fingerprint and the key it was made under.
	Fingerprint      string
	FingerprintKeyID string
}

// SecretBinding is what a sealed secret of kind is bound to, as the
// vault's additional data: its kind, its merchant and its row (id is the
// card's token, the payment's reference, the link's id, the user's id,
// the idempotency key, or for a webhook signing secret the merchant's
// id). A ciphertext copied into another column or row, or to another
// merchant, then does not open there, and paylink cannot be made to show
// one secret as another (security review: a sealed card number copied
// into an idempotency key's stored answer was replayed in clear).
func SecretBinding(kind SecretKind, merchantID, id string) string {
	return string(kind) + "\x00" + merchantID + "\x00" + id
}

// binding is what s was sealed bound to.
func (s StoredSecret) binding() string { return SecretBinding(s.Kind, s.MerchantID, s.ID) }

// locator names the secret in a log line without revealing anything:
// a card by its fingerprint (its ID is its token, a credential), an
// idempotent answer by its key with any card number masked, the others
// by their ID (a payment's reference, a link's or a merchant's id).
func (s StoredSecret) locator() string {
	switch s.Kind {
	case SecretCard:
		return "fingerprint " + s.Fingerprint
	case SecretIdempotentResponse:
		return "idempotency key " + MaskCardNumbers(s.ID)
	case SecretWebhookSecret:
		return fmt.Sprintf("%s, secret %d", s.ID, s.Index)
	}
	return s.ID
}

// KeyRotation tunes RotateKeys.
type KeyRotation struct {
	// Batch is how many secrets one database transaction re-seals
	// (default 100): small enough that serving instances never wait long
	// on a row rotation holds.
	Batch int
	// OnBatch, when set, is told the running totals after each committed
	// batch that held secrets (progress output; tests interrupt a
	// rotation with it).
	OnBatch func(RotationResult)
}

// RotationResult counts what a key rotation did.
type RotationResult struct {
	Resealed      int64 // secrets re-encrypted under the active key
	Fingerprinted int64 // card fingerprints recomputed under the active key
	// Unreadable counts secrets that could not be opened (their key is
	// not among the vault's keys, or the ciphertext is damaged); they are
	// left as they are and keep Remaining above zero.
	Unreadable int64
	// Remaining counts secrets still sealed (or cards fingerprinted) under
	// another key when the rotation ended; zero means the previous keys
	// are no longer needed, -1 that a stopped rotation could not count
	// them (its database unreachable).
	Remaining int64
}

// RotateKeys re-seals every stored secret that is not sealed under the
// vault's active key, and recomputes card fingerprints made under another
// key (or before fingerprints were scoped per merchant). It works in
// batches, each its own transaction whose writes are compare-and-set on
// the old ciphertext, so instances keep serving, a concurrent writer wins
// over rotation, and a rotation that stops (crash, ctx cancelled) is
// resumed by running it again. It returns what it did, with Remaining
// counted at the end, and ctx's error when it was cancelled.
func (s *Service) RotateKeys(ctx context.Context, opts KeyRotation) (RotationResult, error) {
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	var res RotationResult
	for _, kind := range SecretKinds() {
		if err := s.rotateKind(ctx, kind, opts, &res); err != nil {
			res.Remaining = -1
			if n, cerr := s.CountSecretsToRotate(context.WithoutCancel(ctx)); cerr == nil {
				res.Remaining = n // what the stopped rotation left: its audit row says it
			}
			return res, errors.Join(err, s.auditRotation(ctx, res, err))
		}
	}
	n, err := s.CountSecretsToRotate(ctx)
	res.Remaining = n
	if err != nil {
		return res, err
	}
	return res, s.auditRotation(ctx, res, nil)
}

// auditRotation records a rotation's run in the audit log, with what it
// did, as success when nothing is left under another key, else (stopped
// by failed, or secrets left) as failure. The object is the active key
// by its id.
func (s *Service) auditRotation(ctx context.Context, res RotationResult, failed error) error {
	outcome := OutcomeSuccess
	if failed != nil || res.Remaining > 0 {
		outcome = OutcomeFailure
	}
	remaining := strconv.FormatInt(res.Remaining, 10)
	if res.Remaining < 0 {
		remaining = "unknown"
	}
	detail := fmt.Sprintf("re-encrypted=%d fingerprinted=%d unreadable=%d remaining=%s",
		res.Resealed, res.Fingerprinted, res.Unreadable, remaining)
	if failed != nil {
		detail += " stopped"
	}
	err := s.store.Update(context.WithoutCancel(ctx), func(tx Tx) error {
		return s.audit(ctx, tx, AuditEvent{Action: AuditMasterKeyRotate, ObjectType: ObjectMasterKey,
			ObjectID: s.vault.KeyID(), Outcome: outcome, Detail: detail})
	})
	if err != nil {
		return fmt.Errorf("audit the key rotation: %w", err)
	}
	return nil
}

// CountSecretsToRotate counts the stored secrets and card fingerprints not
// under the vault's active key.
func (s *Service) CountSecretsToRotate(ctx context.Context) (int64, error) {
	var n int64
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		n, err = tx.CountSecretsToRotate(s.vault.KeyID())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count secrets to rotate: %w", err)
	}
	return n, nil
}

// rotateKind re-seals the secrets of one kind, batch by batch.
func (s *Service) rotateKind(ctx context.Context, kind SecretKind, opts KeyRotation, res *RotationResult) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var batch RotationResult
		var next string
		var seen int
		err := s.store.Update(ctx, func(tx Tx) error {
			batch = RotationResult{}
			secrets, n, err := tx.SecretsToRotate(kind, s.vault.KeyID(), after, opts.Batch)
			if err != nil {
				return err
			}
			next, seen = n, len(secrets)
			for _, sec := range secrets {
				if err := s.reseal(tx, sec, &batch); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("rotate %s secrets: %w", kind, err)
		}
		res.Resealed += batch.Resealed
		res.Fingerprinted += batch.Fingerprinted
		res.Unreadable += batch.Unreadable
		if opts.OnBatch != nil && seen > 0 {
			opts.OnBatch(*res)
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// reseal brings one secret under the active key, counting into res. A
// secret that changed since it was listed (ErrConflict) is left to its
// writer: it was re-sealed, replaced or erased, all under current keys.
func (s *Service) reseal(tx Tx, sec StoredSecret, res *RotationResult) error {
	old := sec.Sealed
	plain, err := s.vault.Open(old, sec.binding())
	if err != nil {
		res.Unreadable++
		s.log.Error("key rotation: cannot open a stored secret", "kind", sec.Kind, "merchant_id", sec.MerchantID,
			"secret", sec.locator(), "key_id", old.KeyID, "err", err)
		return nil
	}
	active := s.vault.KeyID()
	var resealed, fingerprinted bool
	if old.KeyID != active {
		if sec.Sealed, err = s.vault.Seal(plain, sec.binding()); err != nil {
			return fmt.Errorf("reseal: %w", err)
		}
		resealed = true
	}
	if sec.Kind == SecretCard && sec.FingerprintKeyID != sec.Sealed.KeyID {
		sec.Fingerprint, sec.FingerprintKeyID = s.vault.Fingerprint(sec.MerchantID, string(plain))
		fingerprinted = true
	}
	clear(plain)
	err = tx.ResealSecret(sec, old)
	if errors.Is(err, ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	if resealed {
		res.Resealed++
	}
	if fingerprinted {
		res.Fingerprinted++
	}
	return nil
}

// secretCheckSample is how many merchants at each end of the mid order
// CheckSecretsOpen looks at.
const secretCheckSample = 64

// CheckSecretsOpen opens the webhook signing secrets of the
// secretCheckSample merchants with the lowest mids and of as many with the
// highest, with the vault: a serving instance started with the wrong
// master key, or a new key file beside a database sealed under another,
// then refuses to start instead of failing every card-token payment and
// webhook later. Merchants' secrets stand for all the stored secrets:
// every merchant has one, sealed at onboarding and re-sealed by each
// rotation, last of all kinds (SecretKinds) and in mid order, so a
// rotation stopped anywhere with its previous key missing shows at the
// high end. Two index reads keep
// start-up independent of the number of merchants; a secret outside the
// sample that does not open is reported by `paylink keys rotate`.
func (s *Service) CheckSecretsOpen(ctx context.Context) error {
	var ms []*Merchant
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		ms, err = tx.MerchantsAtEnds(secretCheckSample)
		return err
	})
	if err != nil {
		return fmt.Errorf("check secrets open: %w", err)
	}
	for _, m := range ms {
		for _, sealed := range m.Settings.Webhook.Secrets {
			if _, err := s.vault.Open(sealed, webhookSecretBinding(m.ID)); err != nil {
				return fmt.Errorf("merchant %s's webhook secret, sealed under key %s, does not open with this instance's keys: %w",
					m.ID, sealed.KeyID, err)
			}
		}
	}
	return nil
}
