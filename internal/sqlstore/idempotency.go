package sqlstore

import (
	"fmt"
	"time"

	"github.com/paylink/paylink"
)

// ClaimIdempotencyKey inserts a key or takes over an abandoned or
// expired one.
func (t *tx) ClaimIdempotencyKey(k *paylink.IdempotencyKey, takeOverBefore, expiredBefore time.Time) (*paylink.IdempotencyKey, error) {
	res, err := t.exec(`INSERT INTO idempotency_keys (merchant_id, key, request_hash, status, created_at, locked_until)
		VALUES ($1, $2, $3, 0, $4, $5) ON CONFLICT (merchant_id, key) DO NOTHING`,
		k.MerchantID, k.Key, k.RequestHash, k.CreatedAt.UnixMicro(), k.LockedUntil.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	} else if n == 1 {
		return nil, nil
	}
	const takeOverSQL = `UPDATE idempotency_keys
		SET request_hash = $1, status = 0, response = NULL, response_key_id = '', created_at = $2, locked_until = $3
		WHERE merchant_id = $4 AND key = $5 AND `
	args := []any{k.RequestHash, k.CreatedAt.UnixMicro(), k.LockedUntil.UnixMicro(), k.MerchantID, k.Key}
	if taken, err := t.takeOver(takeOverSQL+`created_at < $6`, append(args, expiredBefore.UnixMicro())...); err != nil || taken {
		return nil, err // an expired key, free for any request
	}
	taken, err := t.takeOver(takeOverSQL+`request_hash = $1 AND status = 0 AND locked_until < $6`, append(args, takeOverBefore.UnixMicro())...)
	if err != nil || taken {
		k.TookOver = taken // the same request, which never finished
		return nil, err
	}
	found, lerr := t.idempotencyKey(k.MerchantID, k.Key)
	if lerr != nil {
		return nil, lerr
	}
	return found, paylink.ErrConflict
}

// takeOver runs an UPDATE of a key and reports whether it took the key.
func (t *tx) takeOver(query string, args ...any) (bool, error) {
	res, err := t.exec(query, args...)
	if err != nil {
		return false, fmt.Errorf("take over idempotency key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("take over idempotency key: %w", err)
	}
	return n == 1, nil
}

func (t *tx) idempotencyKey(merchantID, key string) (*paylink.IdempotencyKey, error) {
	k := paylink.IdempotencyKey{MerchantID: merchantID, Key: key}
	var created, locked int64
	var response []byte
	var keyID string
	err := t.q.QueryRowContext(t.ctx, `SELECT request_hash, status, response, response_key_id, created_at, locked_until
		FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, merchantID, key).
		Scan(&k.RequestHash, &k.Status, &response, &keyID, &created, &locked)
	if err != nil {
		return nil, notFound("load idempotency key", err)
	}
	if keyID == "" {
		k.Response = response // written before responses were sealed
	} else {
		k.Sealed = paylink.SealedSecret{KeyID: keyID, Ciphertext: response}
	}
	k.CreatedAt, k.LockedUntil = time.UnixMicro(created).UTC(), time.UnixMicro(locked).UTC()
	return &k, nil
}

// FinishIdempotencyKey stores the sealed response of a claimed key.
func (t *tx) FinishIdempotencyKey(merchantID, key string, claimedAt time.Time, status int, response paylink.SealedSecret) error {
	return t.execOne("finish idempotency key", `UPDATE idempotency_keys SET status = $1, response = $2, response_key_id = $3
		WHERE merchant_id = $4 AND key = $5 AND created_at = $6 AND status = 0`,
		status, response.Ciphertext, response.KeyID, merchantID, key, claimedAt.UnixMicro())
}

// ReleaseIdempotencyKey forgets the unfinished claim of key made at
// claimedAt so that the request can be retried.
func (t *tx) ReleaseIdempotencyKey(merchantID, key string, claimedAt time.Time) error {
	_, err := t.exec(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND created_at = $3 AND status = 0`,
		merchantID, key, claimedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// DeleteIdempotencyKeys removes keys created before the cutoff.
func (t *tx) DeleteIdempotencyKeys(createdBefore time.Time) (int64, error) {
	res, err := t.exec(`DELETE FROM idempotency_keys WHERE created_at < $1`, createdBefore.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("delete idempotency keys: %w", err)
	}
	return res.RowsAffected()
}
