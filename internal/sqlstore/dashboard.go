package sqlstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// The merchant dashboard's queries (migration 0016): payment search, the
// payment timeline's sources, the home page's daily volume and the
// reconciliation list.

// Events lists the merchant's history events of the references.
func (t *tx) Events(merchantID string, references []string) ([]*paylink.Event, error) {
	var c conds
	in(&c, "reference", references)
	c.add("merchant_id = ?", merchantID)
	rows, err := t.q.QueryContext(t.ctx, `SELECT merchant_id, reference, type, data, created_at FROM events`+c.where()+` ORDER BY id`, c.args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Event
	for rows.Next() {
		var e paylink.Event
		var created int64
		if err := rows.Scan(&e.MerchantID, &e.Reference, &e.Type, &e.Data, &created); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, &e)
	}
	return out, rows.Err()
}

// SearchTransactions runs a payment list query. Without a search the
// page walks transactions_merchant_created backwards from the cursor,
// filtering as it goes. A search is a union of indexed lookups (the
// primary key, transactions_invoice, transactions_customer_email,
// transactions_card_last4) joined to the table by primary key, so that
// neither engine walks the merchant's payments to find a few.
func (t *tx) SearchTransactions(q paylink.PaymentQuery) ([]*paylink.Transaction, error) {
	query, args := searchQuery(q)
	rows, err := t.q.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("search transactions: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Transaction
	for rows.Next() {
		tr, err := scanTransaction(rows)
		if err != nil {
			return nil, fmt.Errorf("search transactions: %w", err)
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}

// searchQuery builds SearchTransactions' query. The lookups repeat the
// WHERE clauses of the partial indexes they read (migration 0022: no
// entry for an empty invoice number, email or last four digits), which
// is how a planner knows it may use them.
func searchQuery(q paylink.PaymentQuery) (string, []any) {
	var c conds
	from := ` FROM transactions`
	if q.Search != "" {
		var l conds
		lookups := `SELECT CAST(` + l.arg(q.Search) + ` AS TEXT) AS ref
			UNION SELECT reference FROM transactions WHERE merchant_id = ` + l.arg(q.MerchantID) + ` AND invoice_number IN (` + l.arg(q.Search) + `, ` + l.arg(strings.ToUpper(q.Search)) + `) AND invoice_number <> ''
			UNION SELECT reference FROM transactions WHERE merchant_id = ` + l.arg(q.MerchantID) + ` AND customer_email = ` + l.arg(q.SearchEmail) + ` AND customer_email <> ''`
		if q.SearchLast4 != "" {
			lookups += ` UNION SELECT reference FROM transactions WHERE merchant_id = ` + l.arg(q.MerchantID) + ` AND card_last4 = ` + l.arg(q.SearchLast4) + ` AND card_last4 <> ''`
		}
		from = ` FROM (` + lookups + `) found JOIN transactions ON transactions.reference = found.ref`
		c.args = l.args
	}
	c.add("merchant_id = ?", q.MerchantID)
	in(&c, "status", q.Statuses)
	in(&c, "payment_type", q.Methods)
	if !q.From.IsZero() {
		c.add("created_at >= ?", q.From.UnixMicro())
	}
	if !q.To.IsZero() {
		c.add("created_at < ?", q.To.UnixMicro())
	}
	if q.Currency != "" {
		c.add("currency = ?", q.Currency)
	}
	if q.MinTotal > 0 {
		c.add("total >= ?", q.MinTotal)
	}
	if q.MaxTotal > 0 {
		c.add("total <= ?", q.MaxTotal)
	}
	if !q.BeforeCreated.IsZero() {
		c.add("(created_at < ? OR (created_at = ? AND reference < ?))", q.BeforeCreated.UnixMicro(), q.BeforeCreated.UnixMicro(), q.BeforeReference)
	}
	query := `SELECT ` + transactionColumns + from + c.where() +
		` ORDER BY created_at DESC, reference DESC LIMIT ` + c.arg(q.Limit)
	return query, c.args
}

// RefundsOf lists the merchant's refunds of a transaction, oldest first.
func (t *tx) RefundsOf(merchantID, transactionReference string) ([]*paylink.Refund, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+refundColumns+` FROM refunds
		WHERE merchant_id = $1 AND transaction_reference = $2 ORDER BY created_at, reference`, merchantID, transactionReference)
	if err != nil {
		return nil, fmt.Errorf("refunds of %s: %w", transactionReference, err)
	}
	defer rows.Close()
	var out []*paylink.Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, fmt.Errorf("refunds of %s: %w", transactionReference, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AuditEventsAbout lists the merchant's audit rows about the objects.
func (t *tx) AuditEventsAbout(merchantID string, objectIDs []string) ([]*paylink.AuditEvent, error) {
	if len(objectIDs) == 0 {
		return nil, nil
	}
	var c conds
	c.add("merchant_id = ?", merchantID)
	in(&c, "object_id", objectIDs)
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, `+auditColumns+` FROM audit_log`+c.where()+` ORDER BY id`, c.args...)
	if err != nil {
		return nil, fmt.Errorf("audit events about: %w", err)
	}
	return scanAuditEvents(rows)
}

// Reconciliations lists the latest runs with their variances.
func (t *tx) Reconciliations(limit int) ([]*paylink.Reconciliation, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT id, file_name, days, matched, created_at FROM reconciliations
		ORDER BY created_at DESC, id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list reconciliations: %w", err)
	}
	var out []*paylink.Reconciliation
	for rows.Next() {
		var r paylink.Reconciliation
		var days string
		var created int64
		if err := rows.Scan(&r.ID, &r.FileName, &days, &r.Matched, &created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list reconciliations: %w", err)
		}
		if days != "" {
			r.Days = strings.Split(days, ",")
		}
		r.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, &r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list reconciliations: %w", err)
	}
	for _, r := range out {
		if r.Variances, err = t.variances(r.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// variances lists a run's variances in the order they were found.
func (t *tx) variances(id string) ([]paylink.Variance, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+varianceColumns+`
		FROM reconciliation_variances v WHERE v.reconciliation_id = $1 ORDER BY v.seq`, id)
	if err != nil {
		return nil, fmt.Errorf("variances of %s: %w", id, err)
	}
	defer rows.Close()
	var out []paylink.Variance
	for rows.Next() {
		var v paylink.Variance
		if err := rows.Scan(varianceFields(&v)...); err != nil {
			return nil, fmt.Errorf("variances of %s: %w", id, err)
		}
		out = append(out, sidesOf(v))
	}
	return out, rows.Err()
}

// varianceColumns are a variance's columns (table alias v), read by
// varianceFields.
const varianceColumns = `v.kind, v.reference, v.merchant_id, v.currency, v.ledger_currency, v.file_amount, v.ledger_amount, v.file_line`

// varianceFields are where varianceColumns are scanned to; sidesOf then
// puts the currencies on their sides.
func varianceFields(v *paylink.Variance) []any {
	return []any{&v.Kind, &v.Reference, &v.MerchantID, &v.FileCurrency, &v.LedgerCurrency, &v.FileAmount, &v.LedgerAmount, &v.Line}
}

// sidesOf puts a stored variance's currencies on their sides: the
// currency column is the ledger's for missing_in_file, which has no file
// line, and is both sides' for amount_differs; a row an older build
// stored has no ledger_currency (0037), so this also gives it its
// ledger's currency wherever the currency column tells it.
func sidesOf(v paylink.Variance) paylink.Variance {
	switch v.Kind {
	case paylink.VarianceMissingInFile:
		v.FileCurrency, v.LedgerCurrency = "", v.FileCurrency
	case paylink.VarianceAmount:
		v.LedgerCurrency = v.FileCurrency
	}
	return v
}

// DailyVolume sums a merchant's transactions by UTC day and currency.
func (t *tx) DailyVolume(merchantID string, since time.Time) ([]paylink.DailyVolume, error) {
	const day = int64(24 * time.Hour / time.Microsecond)
	rows, err := t.q.QueryContext(t.ctx, `SELECT created_at / $1 AS day, currency, COUNT(*),
		CAST(SUM(CASE WHEN status IN ($2, $3, $4) THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status IN ($2, $3, $4, $5, $6) THEN 1 ELSE 0 END) AS BIGINT),
		CAST(SUM(CASE WHEN status = $2 THEN total ELSE 0 END) AS BIGINT), CAST(SUM(refunded) AS BIGINT)
		FROM transactions WHERE merchant_id = $7 AND created_at >= $8 GROUP BY day, currency ORDER BY day, currency`,
		day, string(paylink.StatusApproved), string(paylink.StatusPreAuthorised), string(paylink.StatusPreAuthorisedReversed),
		string(paylink.StatusDeclined), string(paylink.StatusFailed), merchantID, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("daily volume: %w", err)
	}
	defer rows.Close()
	var out []paylink.DailyVolume
	for rows.Next() {
		var v paylink.DailyVolume
		var d int64
		if err := rows.Scan(&d, &v.Currency, &v.Count, &v.Approved, &v.Answered, &v.Gross, &v.Refunded); err != nil {
			return nil, fmt.Errorf("daily volume: %w", err)
		}
		v.Day = time.UnixMicro(d * day).UTC()
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("daily volume: %w", err)
	}
	return out, nil
}
