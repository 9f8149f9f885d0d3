package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paylink/paylink"
)

// Payment link persistence.

const linkColumns = `id, merchant_id, status, version, amount, currency, merchant_reference, apply_surcharge, customer,
	webhook_url, page_token_hash, vt_token_hash, tokens_key_id, tokens_sealed, csrf_secret, attempts, window_start,
	window_attempts, claimed_at, paid_reference, created_at, updated_at, expires_at, paid_at, cancelled_at, claim_reference`

func scanLink(row interface{ Scan(...any) error }) (*paylink.PaymentLink, error) {
	var l paylink.PaymentLink
	var status, customer string
	var created, updated int64
	var window, claimed, expires, paid, cancelled sql.NullInt64
	err := row.Scan(&l.ID, &l.MerchantID, &status, &l.Version, &l.Amount, &l.Currency, &l.MerchantReference,
		&l.ApplySurcharge, &customer, &l.WebhookURL, &l.PageTokenHash, &l.VTTokenHash, &l.Tokens.KeyID,
		&l.Tokens.Ciphertext, &l.CSRFSecret, &l.Attempts, &window, &l.WindowAttempts, &claimed, &l.PaidReference,
		&created, &updated, &expires, &paid, &cancelled, &l.ClaimReference)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(customer), &l.Customer); err != nil {
		return nil, fmt.Errorf("payment link %s customer: %w", l.ID, err)
	}
	l.Status = paylink.LinkStatus(status)
	l.CreatedAt, l.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
	l.WindowStart, l.ClaimedAt, l.ExpiresAt = fromMicros(window), fromMicros(claimed), fromMicros(expires)
	l.PaidAt, l.CancelledAt = fromMicros(paid), fromMicros(cancelled)
	return &l, nil
}

// CreatePaymentLink inserts a link at version 1.
func (t *tx) CreatePaymentLink(l *paylink.PaymentLink) error {
	customer, err := toJSON(l.Customer)
	if err != nil {
		return err
	}
	l.Version = 1
	_, err = t.exec(`INSERT INTO payment_links (`+linkColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)`,
		l.ID, l.MerchantID, string(l.Status), l.Version, l.Amount, l.Currency, l.MerchantReference, l.ApplySurcharge,
		customer, l.WebhookURL, l.PageTokenHash, l.VTTokenHash, l.Tokens.KeyID, l.Tokens.Ciphertext, l.CSRFSecret,
		l.Attempts, micros(l.WindowStart), l.WindowAttempts, micros(l.ClaimedAt), l.PaidReference,
		l.CreatedAt.UnixMicro(), l.UpdatedAt.UnixMicro(), micros(l.ExpiresAt), micros(l.PaidAt), micros(l.CancelledAt), l.ClaimReference)
	if err != nil {
		return fmt.Errorf("insert payment link: %w", err)
	}
	return nil
}

// PaymentLink loads a link of a merchant by id.
func (t *tx) PaymentLink(merchantID, id string) (*paylink.PaymentLink, error) {
	l, err := scanLink(t.q.QueryRowContext(t.ctx, `SELECT `+linkColumns+` FROM payment_links
		WHERE id = $1 AND merchant_id = $2`, id, merchantID))
	if err != nil {
		return nil, notFound("load payment link", err)
	}
	return l, nil
}

// PaymentLinks lists a merchant's newest links (payment_links_merchant
// serves the order).
func (t *tx) PaymentLinks(merchantID string, limit int) ([]*paylink.PaymentLink, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+linkColumns+` FROM payment_links
		WHERE merchant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, merchantID, limit)
	if err != nil {
		return nil, fmt.Errorf("list payment links: %w", err)
	}
	defer rows.Close()
	var out []*paylink.PaymentLink
	for rows.Next() {
		l, err := scanLink(rows)
		if err != nil {
			return nil, fmt.Errorf("list payment links: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list payment links: %w", err)
	}
	return out, nil
}

// PaymentLinkByTokenHash loads the link of a hosted page or virtual
// terminal token.
func (t *tx) PaymentLinkByTokenHash(hash []byte) (*paylink.PaymentLink, error) {
	l, err := scanLink(t.q.QueryRowContext(t.ctx, `SELECT `+linkColumns+` FROM payment_links
		WHERE page_token_hash = $1 OR vt_token_hash = $2`, hash, hash))
	if err != nil {
		return nil, notFound("load payment link by token", err)
	}
	return l, nil
}

// decidingLinkPaymentQuery repeats payment_links_deciding's WHERE and
// follows its order (migration 0035): one link read, and its payment by
// primary key.
const decidingLinkPaymentQuery = `SELECT t.reference, t.payment_link_id, t.created_at FROM (
		SELECT CASE WHEN paid_reference <> '' THEN paid_reference ELSE claim_reference END AS deciding
		FROM payment_links WHERE merchant_id = $1 AND merchant_reference = $2 AND (paid_reference <> '' OR claim_reference <> '')
		ORDER BY updated_at DESC, id DESC LIMIT 1) AS l
	JOIN transactions t ON t.reference = l.deciding AND t.merchant_id = $1`

// LinkDecidingPayment returns the payment that decides the merchant's
// link with that merchant reference: its paid payment, else the attempt
// holding its claim, of the link changed last among those with either.
func (t *tx) LinkDecidingPayment(merchantID, merchantReference string) (*paylink.OrderCandidate, error) {
	c, err := scanCandidate(t.q.QueryRowContext(t.ctx, decidingLinkPaymentQuery, merchantID, merchantReference))
	if err != nil {
		return nil, notFound("load a link's deciding payment", err)
	}
	return c, nil
}

// UpdatePaymentLink writes the mutable fields if the version still matches.
func (t *tx) UpdatePaymentLink(l *paylink.PaymentLink) error {
	err := t.execOne("update payment link", `UPDATE payment_links SET status = $1, version = version + 1, attempts = $2,
		window_start = $3, window_attempts = $4, claimed_at = $5, paid_reference = $6, updated_at = $7, paid_at = $8,
		cancelled_at = $9, claim_reference = $10 WHERE id = $11 AND version = $12`,
		string(l.Status), l.Attempts, micros(l.WindowStart), l.WindowAttempts, micros(l.ClaimedAt), l.PaidReference,
		l.UpdatedAt.UnixMicro(), micros(l.PaidAt), micros(l.CancelledAt), l.ClaimReference, l.ID, l.Version)
	if err != nil {
		return err
	}
	l.Version++
	return nil
}
