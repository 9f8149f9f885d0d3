package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/paylink/paylink"
)

// APIKeyByHash loads an API key by the hash of its secret.
func (t *tx) APIKeyByHash(hash []byte) (*paylink.APIKey, error) {
	k, err := scanAPIKey(t.q.QueryRowContext(t.ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = $1`, hash))
	if err != nil {
		return nil, notFound("load api key", err)
	}
	return k, nil
}

const apiKeyColumns = `id, merchant_id, hash, created_at, expires_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*paylink.APIKey, error) {
	var k paylink.APIKey
	var created int64
	var expires sql.NullInt64
	if err := row.Scan(&k.ID, &k.MerchantID, &k.Hash, &created, &expires); err != nil {
		return nil, err
	}
	k.CreatedAt, k.ExpiresAt = time.UnixMicro(created).UTC(), fromMicros(expires)
	return &k, nil
}

// APIKeys lists a merchant's API keys, the current one first, then the
// previous ones newest first (a roll may share a microsecond with the
// onboarding it follows, so created_at alone cannot tell).
func (t *tx) APIKeys(merchantID string) ([]*paylink.APIKey, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE merchant_id = $1
		ORDER BY expires_at IS NULL DESC, created_at DESC, expires_at DESC, id`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	defer rows.Close()
	var out []*paylink.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("list api keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// insertAPIKey stores a key.
func (t *tx) insertAPIKey(k *paylink.APIKey) error {
	_, err := t.exec(`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		k.ID, k.MerchantID, k.Hash, k.CreatedAt.UnixMicro(), micros(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	return nil
}

// RollAPIKey ends the merchant's other keys at oldUntil (unless sooner),
// makes k the current key and stores it.
func (t *tx) RollAPIKey(k *paylink.APIKey, oldUntil time.Time) error {
	if err := t.execOne("roll api key", `UPDATE merchants SET api_key_hash = $1 WHERE id = $2`, k.Hash, k.MerchantID); err != nil {
		if errors.Is(err, paylink.ErrConflict) {
			return paylink.ErrNotFound
		}
		return err
	}
	_, err := t.exec(`UPDATE api_keys SET expires_at = $1 WHERE merchant_id = $2 AND (expires_at IS NULL OR expires_at > $3)`,
		oldUntil.UnixMicro(), k.MerchantID, oldUntil.UnixMicro())
	if err != nil {
		return fmt.Errorf("end previous api keys: %w", err)
	}
	return t.insertAPIKey(k)
}
