package sqlstore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

const transactionColumns = `reference, merchant_id, invoice_number, payment_type, channel, status, version, currency,
	amount, surcharge, fee, total, pre_auth, pre_auth_amount, refunded, card_token, payment_link_id,
	created_at, updated_at, processed_at, secret_key_id, secret_sealed, details`

func scanTransaction(row interface{ Scan(...any) error }) (*paylink.Transaction, error) {
	var t paylink.Transaction
	var created, updated int64
	var processed sql.NullInt64
	var details, status string
	err := row.Scan(&t.Reference, &t.MerchantID, &t.InvoiceNumber, &t.PaymentType, &t.Channel, &status, &t.Version, &t.Currency,
		&t.Amount, &t.Surcharge, &t.Fee, &t.Total, &t.PreAuth, &t.PreAuthAmount, &t.Refunded, &t.CardToken, &t.PaymentLinkID,
		&created, &updated, &processed, &t.Secret.KeyID, &t.Secret.Ciphertext, &details)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(details), &t.Details); err != nil {
		return nil, fmt.Errorf("transaction %s details: %w", t.Reference, err)
	}
	t.Status = paylink.Status(status)
	t.CreatedAt, t.UpdatedAt, t.ProcessedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC(), fromMicros(processed)
	return &t, nil
}

// CreateTransaction inserts a transaction at version 1, with its
// customer email and card last four copied out of details for search.
func (t *tx) CreateTransaction(tr *paylink.Transaction) error {
	details, err := toJSON(tr.Details)
	if err != nil {
		return err
	}
	tr.Version = 1
	return t.execLater("insert transaction", `INSERT INTO transactions (reference, merchant_id, invoice_number, payment_type, channel, status, version, currency,
		amount, surcharge, fee, total, pre_auth, pre_auth_amount, refunded, card_token, payment_link_id,
		created_at, updated_at, processed_at, secret_key_id, secret_sealed, details, customer_email, card_last4)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)`,
		tr.Reference, tr.MerchantID, tr.InvoiceNumber, tr.PaymentType, tr.Channel, string(tr.Status), tr.Version, tr.Currency,
		tr.Amount, tr.Surcharge, tr.Fee, tr.Total, tr.PreAuth, tr.PreAuthAmount, tr.Refunded, tr.CardToken, tr.PaymentLinkID,
		tr.CreatedAt.UnixMicro(), tr.UpdatedAt.UnixMicro(), micros(tr.ProcessedAt), tr.Secret.KeyID, tr.Secret.Ciphertext, details,
		paylink.SearchEmail(tr.Details.Customer.Email), tr.CardLast4())
}

// Transaction loads a transaction of a merchant by reference.
func (t *tx) Transaction(merchantID, reference string) (*paylink.Transaction, error) {
	tr, err := scanTransaction(t.q.QueryRowContext(t.ctx, `SELECT `+transactionColumns+`
		FROM transactions WHERE reference = $1 AND merchant_id = $2`, reference, merchantID))
	if err != nil {
		return nil, notFound("load transaction", err)
	}
	return tr, nil
}

// newestByInvoiceQuery repeats transactions_invoice's WHERE and follows
// its order (migration 0022): the index alone answers it.
const newestByInvoiceQuery = `SELECT reference, payment_link_id, created_at FROM transactions
	WHERE merchant_id = $1 AND invoice_number = $2 AND invoice_number <> '' ORDER BY created_at DESC, reference DESC LIMIT 1`

// NewestByInvoice returns the newest transaction with an invoice number.
func (t *tx) NewestByInvoice(merchantID, invoice string) (*paylink.OrderCandidate, error) {
	c, err := scanCandidate(t.q.QueryRowContext(t.ctx, newestByInvoiceQuery, merchantID, invoice))
	if err != nil {
		return nil, notFound("load the newest transaction of an invoice number", err)
	}
	return c, nil
}

func scanCandidate(row interface{ Scan(...any) error }) (*paylink.OrderCandidate, error) {
	var c paylink.OrderCandidate
	var created int64
	if err := row.Scan(&c.Reference, &c.PaymentLinkID, &created); err != nil {
		return nil, err
	}
	c.CreatedAt = time.UnixMicro(created).UTC()
	return &c, nil
}

// TransactionState reads the few columns a status look-up shows, by
// purchase reference (primary key), without the details JSON.
func (t *tx) TransactionState(merchantID, reference string) (*paylink.TransactionState, error) {
	st, err := scanTransactionState(t.q.QueryRowContext(t.ctx, `SELECT reference, invoice_number, status, total, currency, processed_at
		FROM transactions WHERE reference = $1 AND merchant_id = $2`, reference, merchantID))
	if err != nil {
		return nil, notFound("load transaction state", err)
	}
	return st, nil
}

func scanTransactionState(row interface{ Scan(...any) error }) (*paylink.TransactionState, error) {
	var st paylink.TransactionState
	var status string
	var processed sql.NullInt64
	if err := row.Scan(&st.Reference, &st.InvoiceNumber, &status, &st.Total, &st.Currency, &processed); err != nil {
		return nil, err
	}
	st.Status, st.ProcessedAt = paylink.Status(status), fromMicros(processed)
	return &st, nil
}

// UpdateTransaction writes the mutable fields if the version still matches.
func (t *tx) UpdateTransaction(tr *paylink.Transaction) error {
	details, err := toJSON(tr.Details)
	if err != nil {
		return err
	}
	args := []any{string(tr.Status), tr.Amount, tr.Surcharge, tr.Fee, tr.Total, tr.PreAuthAmount, tr.UpdatedAt.UnixMicro(),
		micros(tr.ProcessedAt), details, paylink.SearchEmail(tr.Details.Customer.Email), tr.CardLast4(), tr.Reference, tr.Version}
	if p, ok := t.q.(*pipeline); ok {
		err = t.updateTransactionPrefetch(p, args)
	} else {
		err = t.execOne("update transaction", `UPDATE transactions SET `+transactionSet+` WHERE reference = $12 AND version = $13`, args...)
	}
	if err != nil {
		return err
	}
	tr.Version++
	return nil
}

// transactionSet is the assignment list of UpdateTransaction.
const transactionSet = `status = $1, version = version + 1, amount = $2, surcharge = $3,
		fee = $4, total = $5, pre_auth_amount = $6, updated_at = $7, processed_at = $8, details = $9,
		customer_email = $10, card_last4 = $11`

// updateTransactionPrefetch is UpdateTransaction on a PostgreSQL write
// transaction: the same statement also returns the transaction's
// merchant, kept for a Merchant call that comes next (a status change's
// posting and webhooks read it at once: a round trip saved). Any other
// statement in between drops it, so it is never older than a read made
// instead would be in the same database transaction.
func (t *tx) updateTransactionPrefetch(p *pipeline, args []any) error {
	m, err := scanMerchant(p.QueryRowContext(t.ctx, `UPDATE transactions SET `+transactionSet+`
		FROM merchants m WHERE reference = $12 AND version = $13 AND m.id = transactions.merchant_id
		RETURNING `+prefixed("m.", merchantColumns), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return paylink.ErrConflict
	}
	if err != nil {
		return fmt.Errorf("update transaction: %w", err)
	}
	t.prefetched, t.prefetchedAt = m, p.statements
	return nil
}

// takePrefetched returns the merchant UpdateTransaction read if it is
// merchant id and no statement ran since, and forgets it.
func (t *tx) takePrefetched(id string) *paylink.Merchant {
	m := t.prefetched
	t.prefetched = nil
	p, ok := t.q.(*pipeline)
	if m == nil || !ok || m.ID != id || p.statements != t.prefetchedAt {
		return nil
	}
	return m
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// AddRefunded adds to the refunded total while it stays within the total.
// The amount's bare comparison with 0 is cast: PostgreSQL would infer a
// 32-bit parameter from the literal and refuse a refund over 21,474,836.47.
func (t *tx) AddRefunded(reference string, amount int64, now time.Time) error {
	return t.execOne("add refunded", `UPDATE transactions SET refunded = refunded + $1, version = version + 1, updated_at = $2
		WHERE reference = $3 AND status = $4 AND CAST($5 AS BIGINT) > 0 AND refunded + $6 <= total`,
		amount, now.UnixMicro(), reference, string(paylink.StatusApproved), amount, amount)
}

// waitingStatuses is the WHERE clause of the partial index
// transactions_waiting (migration 0020), word for word: the statuses the
// jobs look for. A query that repeats it may use the index.
const waitingStatuses = `status IN ('PENDING', 'PROCESSING', 'UNKNOWN', 'REQUIRES_AUTHENTICATION', 'PRE_AUTHORISED')`

// transactionsInStatusQuery reads the waiting transactions of a status
// after a position (updated_at, reference) through the partial index
// transactions_waiting (the redundant updated_at >= $3 bounds the range).
const transactionsInStatusQuery = `SELECT ` + transactionColumns + ` FROM transactions
	WHERE status = $1 AND updated_at < $2 AND ` + waitingStatuses + `
	AND updated_at >= $3 AND (updated_at > $3 OR reference > $4) ORDER BY updated_at, reference LIMIT $5`

// checkWaiting refuses a status the waiting index does not hold (one
// that waitingStatuses does not name).
func checkWaiting(status paylink.Status) error {
	if strings.Contains(waitingStatuses, "'"+string(status)+"'") {
		return nil
	}
	return fmt.Errorf("transactions in status %s: only waiting statuses are indexed", status)
}

// TransactionsInStatus lists transactions in a waiting status (see
// waitingStatuses) not updated since a cutoff, after a position.
func (t *tx) TransactionsInStatus(status paylink.Status, updatedBefore time.Time, after paylink.Position, limit int) ([]*paylink.Transaction, error) {
	if err := checkWaiting(status); err != nil {
		return nil, err
	}
	rows, err := t.q.QueryContext(t.ctx, transactionsInStatusQuery, string(status), updatedBefore.UnixMicro(),
		positionMicros(after), after.Reference, limit)
	if err != nil {
		return nil, fmt.Errorf("transactions in status: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Transaction
	for rows.Next() {
		tr, err := scanTransaction(rows)
		if err != nil {
			return nil, fmt.Errorf("transactions in status: %w", err)
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}

// positionMicros is a Position's time as stored; the zero Position is
// before every stored time.
func positionMicros(p paylink.Position) int64 {
	if p.At.IsZero() {
		return math.MinInt64
	}
	return p.At.UnixMicro()
}

const refundColumns = `reference, merchant_id, transaction_reference, invoice_number, status, currency, amount, created_at, details`

func scanRefund(row interface{ Scan(...any) error }) (*paylink.Refund, error) {
	var r paylink.Refund
	var created int64
	var details, status string
	if err := row.Scan(&r.Reference, &r.MerchantID, &r.TransactionReference, &r.InvoiceNumber, &status, &r.Currency,
		&r.Amount, &created, &details); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(details), &r.Details); err != nil {
		return nil, fmt.Errorf("refund %s details: %w", r.Reference, err)
	}
	r.Status, r.CreatedAt = paylink.Status(status), time.UnixMicro(created).UTC()
	return &r, nil
}

// CreateRefund inserts a refund.
func (t *tx) CreateRefund(r *paylink.Refund) error {
	details, err := toJSON(r.Details)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO refunds (`+refundColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.Reference, r.MerchantID, r.TransactionReference, r.InvoiceNumber, string(r.Status), r.Currency, r.Amount,
		r.CreatedAt.UnixMicro(), details)
	if err != nil {
		return fmt.Errorf("insert refund: %w", err)
	}
	return nil
}

// Refund loads a refund of a merchant by refund reference.
func (t *tx) Refund(merchantID, reference string) (*paylink.Refund, error) {
	r, err := scanRefund(t.q.QueryRowContext(t.ctx, `SELECT `+refundColumns+` FROM refunds WHERE reference = $1 AND merchant_id = $2`,
		reference, merchantID))
	if err != nil {
		return nil, notFound("load refund", err)
	}
	return r, nil
}

// refundByInvoiceQuery finds, in this order, the newest refund with an
// invoice number, the newest refund of a purchase reference and the
// newest refund of the purchases with that invoice number: one branch
// each, each answered by its index (refunds_invoice, refunds_transaction,
// transactions_invoice with refunds_transaction), where one OR of the
// three was a scan of every refund on PostgreSQL.
const refundByInvoiceQuery = `SELECT ` + refundColumns + ` FROM (
	SELECT * FROM (SELECT 0 AS branch, ` + refundColumns + ` FROM refunds
		WHERE merchant_id = $1 AND invoice_number = $2 AND invoice_number <> ''
		ORDER BY created_at DESC, reference DESC LIMIT 1) AS by_refund_invoice
	UNION ALL
	SELECT * FROM (SELECT 1 AS branch, ` + refundColumns + ` FROM refunds
		WHERE merchant_id = $3 AND transaction_reference = $4
		ORDER BY created_at DESC, reference DESC LIMIT 1) AS by_purchase
	UNION ALL
	SELECT * FROM (SELECT 2 AS branch, ` + refundColumns + ` FROM refunds
		WHERE merchant_id = $5 AND transaction_reference IN (SELECT reference FROM transactions
			WHERE merchant_id = $6 AND invoice_number = $7 AND invoice_number <> '')
		ORDER BY created_at DESC, reference DESC LIMIT 1) AS by_purchase_invoice
) AS found ORDER BY branch LIMIT 1`

// RefundByInvoice loads the newest refund with an invoice number, or
// failing that the newest refund of a purchase reference, or failing
// that the newest refund of the purchases with that invoice number.
func (t *tx) RefundByInvoice(merchantID, invoice string) (*paylink.Refund, error) {
	r, err := scanRefund(t.q.QueryRowContext(t.ctx, refundByInvoiceQuery,
		merchantID, invoice, merchantID, invoice, merchantID, merchantID, invoice))
	if err != nil {
		return nil, notFound("load refund by invoice", err)
	}
	return r, nil
}

// UpdateRefund moves a refund out of status from (compare-and-set).
func (t *tx) UpdateRefund(r *paylink.Refund, from paylink.Status) error {
	details, err := toJSON(r.Details)
	if err != nil {
		return err
	}
	return t.execOne("update refund", `UPDATE refunds SET status = $1, details = $2 WHERE reference = $3 AND status = $4`,
		string(r.Status), details, r.Reference, string(from))
}

// CountInStatus counts the transactions and refunds in a status.
func (t *tx) CountInStatus(status paylink.Status) (int, error) {
	if err := checkWaiting(status); err != nil {
		return 0, err
	}
	var n int
	err := t.q.QueryRowContext(t.ctx, `SELECT (SELECT COUNT(*) FROM transactions WHERE status = $1 AND `+waitingStatuses+`)
		+ (SELECT COUNT(*) FROM refunds WHERE status = $1)`, string(status)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count in status: %w", err)
	}
	return n, nil
}

// RefundsInStatus lists refunds in a status created before a cutoff,
// after a position (created_at, reference).
func (t *tx) RefundsInStatus(status paylink.Status, createdBefore time.Time, after paylink.Position, limit int) ([]*paylink.Refund, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+refundColumns+` FROM refunds
		WHERE status = $1 AND created_at < $2 AND created_at >= $3 AND (created_at > $3 OR reference > $4)
		ORDER BY created_at, reference LIMIT $5`,
		string(status), createdBefore.UnixMicro(), positionMicros(after), after.Reference, limit)
	if err != nil {
		return nil, fmt.Errorf("refunds in status: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, fmt.Errorf("refunds in status: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TransactionByReference loads a transaction by reference, unscoped.
func (t *tx) TransactionByReference(reference string) (*paylink.Transaction, error) {
	tr, err := scanTransaction(t.q.QueryRowContext(t.ctx, `SELECT `+transactionColumns+`
		FROM transactions WHERE reference = $1`, reference))
	if err != nil {
		return nil, notFound("load transaction by reference", err)
	}
	return tr, nil
}
