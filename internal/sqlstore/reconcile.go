package sqlstore

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// AcquirerActivity lists what the sandbox acquirer did in [start, end):
// approved card, wallet and Zip payments by processed time, and their
// approved refunds by creation time.
func (t *tx) AcquirerActivity(start, end time.Time) ([]paylink.AcquirerRecord, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT reference, 'capture', currency, total FROM transactions
		WHERE status = $1 AND payment_type <> $2 AND processed_at >= $3 AND processed_at < $4
		UNION ALL
		SELECT r.reference, 'refund', r.currency, r.amount FROM refunds r JOIN transactions x ON x.reference = r.transaction_reference
		WHERE r.status = $5 AND x.payment_type <> $6 AND r.created_at >= $7 AND r.created_at < $8
		ORDER BY 1`,
		string(paylink.StatusApproved), paylink.PaymentTypeBankAccount, start.UnixMicro(), end.UnixMicro(),
		string(paylink.StatusApproved), paylink.PaymentTypeBankAccount, start.UnixMicro(), end.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("acquirer activity: %w", err)
	}
	defer rows.Close()
	var out []paylink.AcquirerRecord
	for rows.Next() {
		var r paylink.AcquirerRecord
		if err := rows.Scan(&r.Reference, &r.Type, &r.Currency, &r.Amount); err != nil {
			return nil, fmt.Errorf("acquirer activity: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AcquirerPostings lists the charge and refund postings made in [start, end).
func (t *tx) AcquirerPostings(start, end time.Time) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE p.kind IN ('charge', 'refund') AND p.created_at >= $1 AND p.created_at < $2 ORDER BY p.id`,
		start.UnixMicro(), end.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("acquirer postings: %w", err)
	}
	return scanPostings(rows)
}

// AcquirerPostingOf finds the charge posting of purchase reference ref,
// or the refund posting of refund reference ref, made on any day: by the
// postings' reference index, through the refund's purchase for a refund.
func (t *tx) AcquirerPostingOf(ref string) (*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE (p.kind = 'charge' AND p.reference = $1 AND p.refund_reference = '')
		   OR (p.kind = 'refund' AND p.refund_reference = $2
		       AND p.reference = (SELECT r.transaction_reference FROM refunds r WHERE r.reference = $3))
		ORDER BY p.id LIMIT 1`, ref, ref, ref)
	if err != nil {
		return nil, fmt.Errorf("acquirer posting of %s: %w", ref, err)
	}
	ps, err := scanPostings(rows)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, paylink.ErrNotFound
	}
	return ps[0], nil
}

// MerchantOfReference finds the merchant of the payment or refund whose
// reference is ref, by each table's primary key.
func (t *tx) MerchantOfReference(ref string) (string, error) {
	var m string
	err := t.q.QueryRowContext(t.ctx, `SELECT merchant_id FROM transactions WHERE reference = $1
		UNION ALL SELECT merchant_id FROM refunds WHERE reference = $2`, ref, ref).Scan(&m)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("merchant of %s: %w", ref, err)
	}
	return m, nil
}

// merchantVariancesQuery reads a merchant's newest variances through
// reconciliation_variances_merchant (0038), in its order: at most $2
// rows, whatever other merchants' runs hold.
const merchantVariancesQuery = `SELECT ` + varianceColumns + `, r.id, r.file_name, r.created_at
	FROM reconciliation_variances v JOIN reconciliations r ON r.id = v.reconciliation_id
	WHERE v.merchant_id = $1 ORDER BY v.merchant_id, v.reconciliation_id DESC, v.seq LIMIT $2`

// MerchantVariances lists a merchant's newest variances with their runs
// (run ids are time-ordered, so the newest run's id sorts last).
func (t *tx) MerchantVariances(merchantID string, limit int) ([]paylink.RunVariance, error) {
	rows, err := t.q.QueryContext(t.ctx, merchantVariancesQuery, merchantID, limit)
	if err != nil {
		return nil, fmt.Errorf("variances of %s: %w", merchantID, err)
	}
	defer rows.Close()
	var out []paylink.RunVariance
	for rows.Next() {
		var rv paylink.RunVariance
		var created int64
		if err := rows.Scan(append(varianceFields(&rv.Variance), &rv.Run, &rv.File, &created)...); err != nil {
			return nil, fmt.Errorf("variances of %s: %w", merchantID, err)
		}
		rv.Variance, rv.At = sidesOf(rv.Variance), time.UnixMicro(created).UTC()
		out = append(out, rv)
	}
	return out, rows.Err()
}

// CreateReconciliation stores a run and its variances. The currency
// column keeps what older builds read there: the file's currency, or the
// ledger's for missing_in_file, which has no file line; ledger_currency
// is the ledger's.
func (t *tx) CreateReconciliation(r *paylink.Reconciliation) error {
	_, err := t.exec(`INSERT INTO reconciliations (id, file_name, days, matched, variances, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, r.FileName, strings.Join(r.Days, ","), r.Matched, len(r.Variances), r.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert reconciliation: %w", err)
	}
	for i, v := range r.Variances {
		_, err := t.exec(`INSERT INTO reconciliation_variances (reconciliation_id, seq, kind, reference, merchant_id, currency,
			ledger_currency, file_amount, ledger_amount, file_line) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			r.ID, i, v.Kind, v.Reference, v.MerchantID, cmp.Or(v.FileCurrency, v.LedgerCurrency), v.LedgerCurrency,
			v.FileAmount, v.LedgerAmount, v.Line)
		if err != nil {
			return fmt.Errorf("insert variance: %w", err)
		}
	}
	return nil
}
