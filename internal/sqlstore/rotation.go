package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paylink/paylink"
)

// sealedTable is where one kind of sealed secret lives in its own columns.
type sealedTable struct {
	table, id, keyID, sealed string
	// stale is the WHERE clause of rows to rotate; $1 is the active key id.
	stale string
	// touch is more of a re-seal's SET clause, for tables whose rows are
	// written by compare-and-set on a version.
	touch string
}

// sealedTableOf maps a secret kind to its columns; webhook secrets live in
// merchant settings instead (ok false).
func sealedTableOf(kind paylink.SecretKind) (sealedTable, bool) {
	switch kind {
	case paylink.SecretCard:
		return sealedTable{"cards", "token", "key_id", "pan_sealed",
			`key_id <> '' AND (key_id <> $1 OR fingerprint_key_id <> $1)`, ""}, true
	case paylink.SecretDirectDebit:
		return sealedTable{"transactions", "reference", "secret_key_id", "secret_sealed",
			`secret_key_id <> '' AND secret_key_id <> $1`, ""}, true
	case paylink.SecretLinkTokens:
		return sealedTable{"payment_links", "id", "tokens_key_id", "tokens_sealed",
			`tokens_key_id <> '' AND tokens_key_id <> $1`, ""}, true
	case paylink.SecretTOTP:
		return sealedTable{"users", "id", "totp_key_id", "totp_sealed",
			`totp_key_id <> '' AND totp_key_id <> $1`, `, version = version + 1`}, true
	}
	return sealedTable{}, false
}

// SecretsToRotate lists secrets of kind not under keyID, after a cursor.
func (t *tx) SecretsToRotate(kind paylink.SecretKind, keyID, after string, limit int) ([]paylink.StoredSecret, string, error) {
	switch kind {
	case paylink.SecretWebhookSecret:
		return t.webhookSecretsToRotate(keyID, after, limit)
	case paylink.SecretIdempotentResponse:
		return t.responsesToRotate(keyID, after, limit)
	}
	st, ok := sealedTableOf(kind)
	if !ok {
		return nil, "", fmt.Errorf("secrets to rotate: unknown kind %q", kind)
	}
	fingerprint := `'', ''`
	if kind == paylink.SecretCard {
		fingerprint = `fingerprint, fingerprint_key_id`
	}
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+st.id+`, merchant_id, `+st.keyID+`, `+st.sealed+`, `+fingerprint+`
		FROM `+st.table+` WHERE `+st.stale+` AND `+st.id+` > $2 ORDER BY `+st.id+` LIMIT $3`, keyID, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("secrets to rotate: %w", err)
	}
	defer rows.Close()
	var out []paylink.StoredSecret
	for rows.Next() {
		s := paylink.StoredSecret{Kind: kind}
		if err := rows.Scan(&s.ID, &s.MerchantID, &s.Sealed.KeyID, &s.Sealed.Ciphertext, &s.Fingerprint, &s.FingerprintKeyID); err != nil {
			return nil, "", fmt.Errorf("secrets to rotate: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("secrets to rotate: %w", err)
	}
	next := ""
	if len(out) == limit {
		next = out[len(out)-1].ID
	}
	return out, next, nil
}

// staleResponses is the WHERE clause of idempotency answers sealed under
// another key than $1 (those stored in clear before migration 0028 have
// no key and expire on their own).
const staleResponses = `response_key_id <> '' AND response_key_id <> $1`

// responsesToRotate lists idempotency answers not under keyID after a
// cursor: the merchant id and the key, joined by a NUL (which neither
// holds), in primary key order.
func (t *tx) responsesToRotate(keyID, after string, limit int) ([]paylink.StoredSecret, string, error) {
	merchant, key, _ := strings.Cut(after, "\x00")
	rows, err := t.q.QueryContext(t.ctx, `SELECT merchant_id, key, response_key_id, response FROM idempotency_keys
		WHERE `+staleResponses+` AND (merchant_id > $2 OR (merchant_id = $2 AND key > $3))
		ORDER BY merchant_id, key LIMIT $4`, keyID, merchant, key, limit)
	if err != nil {
		return nil, "", fmt.Errorf("idempotency answers to rotate: %w", err)
	}
	defer rows.Close()
	var out []paylink.StoredSecret
	for rows.Next() {
		s := paylink.StoredSecret{Kind: paylink.SecretIdempotentResponse}
		if err := rows.Scan(&s.MerchantID, &s.ID, &s.Sealed.KeyID, &s.Sealed.Ciphertext); err != nil {
			return nil, "", fmt.Errorf("idempotency answers to rotate: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("idempotency answers to rotate: %w", err)
	}
	next := ""
	if len(out) == limit {
		last := out[len(out)-1]
		next = last.MerchantID + "\x00" + last.ID
	}
	return out, next, nil
}

// webhookSecretsToRotate scans up to limit merchants after a cursor for
// webhook secrets not under keyID; the cursor moves by merchant, since a
// merchant may have none to rotate.
func (t *tx) webhookSecretsToRotate(keyID, after string, limit int) ([]paylink.StoredSecret, string, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, settings FROM merchants WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("webhook secrets to rotate: %w", err)
	}
	defer rows.Close()
	var out []paylink.StoredSecret
	var scanned int
	var last string
	for rows.Next() {
		var settings paylink.MerchantSettings
		var raw string
		if err := rows.Scan(&last, &raw); err != nil {
			return nil, "", fmt.Errorf("webhook secrets to rotate: %w", err)
		}
		scanned++
		if err := json.Unmarshal([]byte(raw), &settings); err != nil {
			return nil, "", fmt.Errorf("merchant %s settings: %w", last, err)
		}
		for i, s := range settings.Webhook.Secrets {
			if s.KeyID != "" && s.KeyID != keyID {
				out = append(out, paylink.StoredSecret{Kind: paylink.SecretWebhookSecret, ID: last, Index: i, MerchantID: last, Sealed: s})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("webhook secrets to rotate: %w", err)
	}
	if scanned < limit {
		last = ""
	}
	return out, last, nil
}

// ResealSecret writes a re-sealed secret if the stored one is still old.
func (t *tx) ResealSecret(s paylink.StoredSecret, old paylink.SealedSecret) error {
	switch s.Kind {
	case paylink.SecretWebhookSecret:
		return t.resealWebhookSecret(s, old)
	case paylink.SecretIdempotentResponse:
		return t.execOne("reseal idempotency answer", `UPDATE idempotency_keys SET response_key_id = $1, response = $2
			WHERE merchant_id = $3 AND key = $4 AND response_key_id = $5 AND response = $6`,
			s.Sealed.KeyID, s.Sealed.Ciphertext, s.MerchantID, s.ID, old.KeyID, old.Ciphertext)
	case paylink.SecretCard:
		return t.execOne("reseal card", `UPDATE cards SET key_id = $1, pan_sealed = $2, fingerprint = $3, fingerprint_key_id = $4
			WHERE token = $5 AND key_id = $6 AND pan_sealed = $7`,
			s.Sealed.KeyID, s.Sealed.Ciphertext, s.Fingerprint, s.FingerprintKeyID, s.ID, old.KeyID, old.Ciphertext)
	}
	st, ok := sealedTableOf(s.Kind)
	if !ok {
		return fmt.Errorf("reseal: unknown kind %q", s.Kind)
	}
	return t.execOne("reseal "+string(s.Kind), `UPDATE `+st.table+` SET `+st.keyID+` = $1, `+st.sealed+` = $2`+st.touch+`
		WHERE `+st.id+` = $3 AND `+st.keyID+` = $4 AND `+st.sealed+` = $5`,
		s.Sealed.KeyID, s.Sealed.Ciphertext, s.ID, old.KeyID, old.Ciphertext)
}

// resealWebhookSecret replaces one webhook secret in a merchant's
// settings. The settings are rewritten only if their text is still what
// was read, so a concurrent settings change (a webhook secret rotation,
// a whitelist edit) is never lost: it wins, and this returns ErrConflict.
func (t *tx) resealWebhookSecret(s paylink.StoredSecret, old paylink.SealedSecret) error {
	if err := t.LockMerchantSettings(s.ID); err != nil {
		return err
	}
	var raw string
	err := t.q.QueryRowContext(t.ctx, `SELECT settings FROM merchants WHERE id = $1`, s.ID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return paylink.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("reseal webhook secret: %w", err)
	}
	var settings paylink.MerchantSettings
	if err := json.Unmarshal([]byte(raw), &settings); err != nil {
		return fmt.Errorf("merchant %s settings: %w", s.ID, err)
	}
	secrets := settings.Webhook.Secrets
	if s.Index >= len(secrets) || secrets[s.Index].KeyID != old.KeyID || !slices.Equal(secrets[s.Index].Ciphertext, old.Ciphertext) {
		return paylink.ErrConflict
	}
	secrets[s.Index] = s.Sealed
	updated, err := toJSON(settings)
	if err != nil {
		return err
	}
	return t.execOne("reseal webhook secret", `UPDATE merchants SET settings = $1 WHERE id = $2 AND settings = $3`, updated, s.ID, raw)
}

// CountSecretsToRotate counts secrets and card fingerprints not under keyID.
func (t *tx) CountSecretsToRotate(keyID string) (int64, error) {
	var total int64
	for _, kind := range paylink.SecretKinds() {
		st, ok := sealedTableOf(kind)
		if !ok {
			continue
		}
		var n int64
		if err := t.q.QueryRowContext(t.ctx, `SELECT COUNT(*) FROM `+st.table+` WHERE `+st.stale, keyID).Scan(&n); err != nil {
			return 0, fmt.Errorf("count %s secrets to rotate: %w", kind, err)
		}
		total += n
	}
	var responses int64
	if err := t.q.QueryRowContext(t.ctx, `SELECT COUNT(*) FROM idempotency_keys WHERE `+staleResponses, keyID).Scan(&responses); err != nil {
		return 0, fmt.Errorf("count idempotency answers to rotate: %w", err)
	}
	n, err := t.countWebhookSecretsToRotate(keyID)
	return total + responses + n, err
}

// countWebhookSecretsToRotate counts webhook secrets not under keyID.
func (t *tx) countWebhookSecretsToRotate(keyID string) (int64, error) {
	var n int64
	after := ""
	for {
		secrets, next, err := t.webhookSecretsToRotate(keyID, after, 500)
		if err != nil {
			return 0, err
		}
		n += int64(len(secrets))
		if next == "" {
			return n, nil
		}
		after = next
	}
}
