package sqlstore

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/paylink/paylink"
)

// Settlement persistence: batches, the postings they cover, payouts and
// the batches they pay. Coverage is insert-only and unique, which is what
// makes settling and paying out exactly-once.

// settledKinds are the postings an acquirer or bank settles.
const settledKinds = `p.kind IN ('charge', 'refund', 'direct_debit', 'direct_debit_refund')`

const unsettled = settledKinds + ` AND p.created_at < $1 AND i.batch_id IS NULL`

// UnsettledAccounts lists merchants and currencies with unsettled
// balance transactions made before cutoff.
func (t *tx) UnsettledAccounts(cutoff time.Time) ([]paylink.MerchantCurrency, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT DISTINCT p.merchant_id, p.currency`+postingsFrom+`
		WHERE `+unsettled+` ORDER BY p.merchant_id, p.currency`, cutoff.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("unsettled accounts: %w", err)
	}
	defer rows.Close()
	var out []paylink.MerchantCurrency
	for rows.Next() {
		var a paylink.MerchantCurrency
		if err := rows.Scan(&a.MerchantID, &a.Currency); err != nil {
			return nil, fmt.Errorf("unsettled accounts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// LockMerchantLedger takes a transaction-scoped advisory lock on
// PostgreSQL; SQLite has one writer, which serialises settlement anyway.
func (t *tx) LockMerchantLedger(merchantID, currency string) error {
	return t.lock("ledger/" + merchantID + "/" + currency)
}

// UnsettledPostings lists a merchant's unsettled balance transactions in
// one currency made before cutoff, oldest first.
func (t *tx) UnsettledPostings(merchantID, currency string, cutoff time.Time) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE `+unsettled+` AND p.merchant_id = $2 AND p.currency = $3 ORDER BY p.created_at, p.id`,
		cutoff.UnixMicro(), merchantID, currency)
	if err != nil {
		return nil, fmt.Errorf("unsettled postings: %w", err)
	}
	return scanPostings(rows)
}

// CreateSettlementBatch inserts a batch and its coverage.
func (t *tx) CreateSettlementBatch(b *paylink.SettlementBatch, postingIDs []string) error {
	_, err := t.exec(`INSERT INTO settlement_batches (id, merchant_id, currency, day, count, net, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, b.ID, b.MerchantID, b.Currency, b.Day, b.Count, b.Net, b.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert settlement batch: %w", err)
	}
	for _, id := range postingIDs {
		err := t.execOne("settle posting", `INSERT INTO settlement_items (posting_id, batch_id) VALUES ($1, $2)
			ON CONFLICT (posting_id) DO NOTHING`, id, b.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

const batchColumns = `b.id, b.merchant_id, b.currency, b.day, b.count, b.net, b.created_at, COALESCE(pb.payout_id, '')`

const batchesFrom = ` FROM settlement_batches b LEFT JOIN payout_batches pb ON pb.batch_id = b.id `

func (t *tx) batches(where string, args ...any) ([]*paylink.SettlementBatch, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+batchColumns+batchesFrom+where, args...)
	if err != nil {
		return nil, fmt.Errorf("settlement batches: %w", err)
	}
	defer rows.Close()
	var out []*paylink.SettlementBatch
	for rows.Next() {
		var b paylink.SettlementBatch
		var created int64
		if err := rows.Scan(&b.ID, &b.MerchantID, &b.Currency, &b.Day, &b.Count, &b.Net, &created, &b.PayoutID); err != nil {
			return nil, fmt.Errorf("settlement batches: %w", err)
		}
		b.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, &b)
	}
	return out, rows.Err()
}

// UnpaidBatches lists a merchant's batches in a currency that no payout covers.
func (t *tx) UnpaidBatches(merchantID, currency string) ([]*paylink.SettlementBatch, error) {
	return t.batches(`WHERE b.merchant_id = $1 AND b.currency = $2 AND pb.payout_id IS NULL ORDER BY b.created_at, b.id`,
		merchantID, currency)
}

// SettlementBatches lists a merchant's batches of a day.
func (t *tx) SettlementBatches(merchantID, day string) ([]*paylink.SettlementBatch, error) {
	return t.batches(`WHERE b.merchant_id = $1 AND b.day = $2 ORDER BY b.currency, b.created_at, b.id`, merchantID, day)
}

// CreatePayout inserts a payout and the batches it pays.
func (t *tx) CreatePayout(p *paylink.Payout) error {
	_, err := t.exec(`INSERT INTO payouts (id, merchant_id, currency, amount, created_at) VALUES ($1, $2, $3, $4, $5)`,
		p.ID, p.MerchantID, p.Currency, p.Amount, p.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert payout: %w", err)
	}
	for _, id := range p.BatchIDs {
		err := t.execOne("pay batch", `INSERT INTO payout_batches (batch_id, payout_id) VALUES ($1, $2)
			ON CONFLICT (batch_id) DO NOTHING`, id, p.ID)
		if err != nil {
			return err
		}
	}
	return nil
}

// Payouts lists a merchant's payouts newest first with their batches.
func (t *tx) Payouts(merchantID, before string, limit int) ([]*paylink.Payout, error) {
	if before == "" {
		before = "\U0010FFFF"
	}
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, merchant_id, currency, amount, created_at FROM payouts
		WHERE merchant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, merchantID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("payouts: %w", err)
	}
	return t.withBatches(rows)
}

// Payout loads one of a merchant's payouts with its batches.
func (t *tx) Payout(merchantID, id string) (*paylink.Payout, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, merchant_id, currency, amount, created_at FROM payouts
		WHERE id = $1 AND merchant_id = $2`, id, merchantID)
	if err != nil {
		return nil, fmt.Errorf("payout %s: %w", id, err)
	}
	out, err := t.withBatches(rows)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("payout %s: %w", id, paylink.ErrNotFound)
	}
	return out[0], nil
}

// withBatches scans payouts and names the batches each covers.
func (t *tx) withBatches(rows *sql.Rows) ([]*paylink.Payout, error) {
	out, err := scanPayouts(rows)
	if err != nil {
		return nil, err
	}
	for _, p := range out {
		bs, err := t.batches(`WHERE pb.payout_id = $1 ORDER BY b.created_at, b.id`, p.ID)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			p.BatchIDs = append(p.BatchIDs, b.ID)
		}
	}
	return out, nil
}

// ScanSettlementBatches lists up to limit batches with ids above after.
func (t *tx) ScanSettlementBatches(after string, limit int) ([]*paylink.SettlementBatch, error) {
	return t.batches(`WHERE b.id > $1 ORDER BY b.id LIMIT $2`, after, limit)
}

// ScanPayouts lists up to limit payouts with ids above after.
func (t *tx) ScanPayouts(after string, limit int) ([]*paylink.Payout, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, merchant_id, currency, amount, created_at FROM payouts
		WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("scan payouts: %w", err)
	}
	return scanPayouts(rows)
}

// BatchPostings lists the balance transactions a batch covers.
func (t *tx) BatchPostings(batchID string) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE i.batch_id = $1 ORDER BY p.created_at, p.id`, batchID)
	return t.withLines(rows, err, "batch postings")
}

func scanPayouts(rows *sql.Rows) ([]*paylink.Payout, error) {
	defer rows.Close()
	var out []*paylink.Payout
	for rows.Next() {
		var p paylink.Payout
		var created int64
		if err := rows.Scan(&p.ID, &p.MerchantID, &p.Currency, &p.Amount, &created); err != nil {
			return nil, fmt.Errorf("payouts: %w", err)
		}
		p.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, &p)
	}
	return out, rows.Err()
}
