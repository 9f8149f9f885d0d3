package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// The merchant dashboard's queries (migration 0016): API keys, payment
// search, the payment timeline's sources and the reconciliation list.

// conds builds a WHERE clause whose placeholders are numbered as they are
// added, so optional filters need no "($1 = ” OR ...)" tricks that keep
// a planner from using an index.
type conds struct {
	parts []string
	args  []any
}

// add appends a condition; each ? in it becomes the next $n, bound to
// the next of args.
func (c *conds) add(cond string, args ...any) {
	var b strings.Builder
	for _, r := range cond {
		if r == '?' {
			b.WriteString(c.arg(args[0]))
			args = args[1:]
			continue
		}
		b.WriteRune(r)
	}
	c.parts = append(c.parts, b.String())
}

// arg binds v to the next placeholder and returns it.
func (c *conds) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// in appends "col IN (...)" for values; nothing when there are none.
func in[T any](c *conds, col string, values []T) {
	if len(values) == 0 {
		return
	}
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	c.add(col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ")+")", args...)
}

// where is the clause, "" when there are no conditions.
func (c *conds) where() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

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
	rows, err := t.q.QueryContext(t.ctx, `SELECT kind, reference, currency, file_amount, ledger_amount, file_line
		FROM reconciliation_variances WHERE reconciliation_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("variances of %s: %w", id, err)
	}
	defer rows.Close()
	var out []paylink.Variance
	for rows.Next() {
		var v paylink.Variance
		if err := rows.Scan(&v.Kind, &v.Reference, &v.Currency, &v.FileAmount, &v.LedgerAmount, &v.Line); err != nil {
			return nil, fmt.Errorf("variances of %s: %w", id, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
