package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// querier is what a tx runs its statements on: database/sql (sqlReads,
// stmtCache) or a PostgreSQL write transaction (pipeline).
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) row
}

// row is a single-row result: a *sql.Row, or on a pipeline a row read in
// a batch or the failure of a held-back write, neither of which
// database/sql can carry.
type row interface{ Scan(dest ...any) error }

// sqlQuerier is what *sql.DB, *sql.Tx and *sql.Conn have in common.
type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// sqlReads is a querier on database/sql.
type sqlReads struct{ sqlQuerier }

// QueryRowContext runs a single-row query.
func (q sqlReads) QueryRowContext(ctx context.Context, query string, args ...any) row {
	return q.sqlQuerier.QueryRowContext(ctx, query, args...)
}

// tx implements paylink.Tx on a querier.
type tx struct {
	ctx context.Context
	q   querier
	// postgres enables the few clauses only PostgreSQL has (SKIP LOCKED).
	postgres bool
	// prefetched is the merchant a PostgreSQL UpdateTransaction read in
	// its own statement, for a Merchant call that comes next; see
	// UpdateTransaction.
	prefetched *paylink.Merchant
	// prefetchedAt is the pipeline's statement count when it was read.
	prefetchedAt int64
}

func (t *tx) exec(query string, args ...any) (sql.Result, error) {
	return t.q.ExecContext(t.ctx, query, args...)
}

// execLater runs a write whose only possible outcome the caller reads is
// success, or a failure that ends the whole transaction (a plain insert).
// On PostgreSQL it is held back and sent with the transaction's next
// round trip (see pipeline); a failure is then reported by the next
// statement and by the commit, wrapped with op.
func (t *tx) execLater(op, query string, args ...any) error {
	if p, ok := t.q.(*pipeline); ok {
		p.queue(queued{op: op, query: query, args: args})
		return nil
	}
	if _, err := t.exec(query, args...); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// insertOnce runs insert, a plain INSERT of a row whose key must be new,
// and returns taken when the key is there already. On SQLite the insert
// runs at once, with ON CONFLICT DO NOTHING, and taken is this call's
// answer. On PostgreSQL it is held back like execLater's writes, and the
// unique violation fails the transaction's next round trip and its
// commit as taken (wrapped with op): the store's Tx documents which
// methods may answer late (paylink.Store.Update).
func (t *tx) insertOnce(op string, taken error, insert string, args ...any) error {
	if p, ok := t.q.(*pipeline); ok {
		p.queue(queued{op: op, query: insert, args: args, taken: taken})
		return nil
	}
	err := t.execOne(op, insert+" ON CONFLICT DO NOTHING", args...)
	if errors.Is(err, paylink.ErrConflict) { // nothing inserted: the key is taken
		return taken
	}
	return err
}

// execOne runs a guarded write and returns paylink.ErrConflict when it
// changed no row.
func (t *tx) execOne(op, query string, args ...any) error {
	res, err := t.exec(query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, paylink.ErrConflict)
	}
	return nil
}

// writeRows writes the rows of a VALUES list: n rows of cols
// placeholders each, numbered from $1: "($1, $2), ($3, $4)". With types,
// each value is cast to its column's type (a placeholder in a VALUES list
// has no column to take its type from on PostgreSQL).
func writeRows(b *strings.Builder, n, cols int, types []string) {
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			if types != nil {
				b.WriteString("CAST(")
			}
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(i*cols + c + 1))
			if types != nil {
				b.WriteString(" AS ")
				b.WriteString(types[c])
				b.WriteByte(')')
			}
		}
		b.WriteByte(')')
	}
}

// micros stores a time as unix microseconds, NULL when zero.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros reads a nullable unix-microsecond column.
func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode json: %w", err)
	}
	return string(b), nil
}

// notFound maps sql.ErrNoRows to paylink.ErrNotFound.
func notFound(op string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return paylink.ErrNotFound
	}
	return fmt.Errorf("%s: %w", op, err)
}

// CreateMerchant inserts a merchant and its first API key.
func (t *tx) CreateMerchant(m *paylink.Merchant) error {
	settings, err := toJSON(m.Settings)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO merchants (id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		m.ID, m.Name, m.TradingName, m.Country, m.APIKeyHash, m.CompanyTokenHash, settings, m.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("insert merchant: %w", err)
	}
	return t.insertAPIKey(&paylink.APIKey{ID: paylink.APIKeyID(m.APIKeyHash), MerchantID: m.ID, Hash: m.APIKeyHash, CreatedAt: m.CreatedAt})
}

const merchantColumns = `id, name, trading_name, country, api_key_hash, company_token_hash, settings, created_at`

func scanMerchant(row interface{ Scan(...any) error }) (*paylink.Merchant, error) {
	var m paylink.Merchant
	var settings string
	var created int64
	if err := row.Scan(&m.ID, &m.Name, &m.TradingName, &m.Country, &m.APIKeyHash, &m.CompanyTokenHash, &settings, &created); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &m.Settings); err != nil {
		return nil, fmt.Errorf("merchant %s settings: %w", m.ID, err)
	}
	m.CreatedAt = time.UnixMicro(created).UTC()
	return &m, nil
}

// Merchant loads a merchant by mid.
func (t *tx) Merchant(id string) (*paylink.Merchant, error) {
	if m := t.takePrefetched(id); m != nil {
		return m, nil
	}
	m, err := scanMerchant(t.q.QueryRowContext(t.ctx, `SELECT `+merchantColumns+` FROM merchants WHERE id = $1`, id))
	if err != nil {
		return nil, notFound("load merchant", err)
	}
	return m, nil
}

// ListMerchants lists all merchants, oldest first.
func (t *tx) ListMerchants() ([]*paylink.Merchant, error) {
	return t.merchants(`SELECT ` + merchantColumns + ` FROM merchants ORDER BY created_at, id`)
}

// MerchantsAtEnds lists the n merchants with the lowest mids and the n
// with the highest, each once, by mid: two index range reads however
// many merchants there are.
func (t *tx) MerchantsAtEnds(n int) ([]*paylink.Merchant, error) {
	first, err := t.merchants(`SELECT `+merchantColumns+` FROM merchants ORDER BY id LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	last, err := t.merchants(`SELECT `+merchantColumns+` FROM merchants ORDER BY id DESC LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	slices.Reverse(last)
	for len(last) > 0 && len(first) > 0 && last[0].ID <= first[len(first)-1].ID {
		last = last[1:]
	}
	return append(first, last...), nil
}

// merchants runs a query of merchantColumns.
func (t *tx) merchants(query string, args ...any) ([]*paylink.Merchant, error) {
	rows, err := t.q.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list merchants: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Merchant
	for rows.Next() {
		m, err := scanMerchant(rows)
		if err != nil {
			return nil, fmt.Errorf("list merchants: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// LockMerchantSettings holds the lock of one merchant's settings.
func (t *tx) LockMerchantSettings(merchantID string) error {
	return t.lock("settings/" + merchantID)
}

// lock takes the transaction-scoped lock called name. On PostgreSQL it
// is an advisory lock; SQLite's single writer runs write transactions
// one at a time, so there it is already held.
func (t *tx) lock(name string) error {
	if !t.postgres {
		return nil
	}
	if _, err := t.exec(`SELECT pg_advisory_xact_lock(hashtext($1))`, name); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}

// UpdateMerchantSettings replaces a merchant's settings.
func (t *tx) UpdateMerchantSettings(id string, s paylink.MerchantSettings) error {
	settings, err := toJSON(s)
	if err != nil {
		return err
	}
	err = t.execOne("update merchant settings", `UPDATE merchants SET settings = $1 WHERE id = $2`, settings, id)
	if errors.Is(err, paylink.ErrConflict) {
		return paylink.ErrNotFound
	}
	return err
}

// SpendTransactionToken records a token as spent; the primary key
// (expires_at, hash) refuses a second spending, and lets the clean-up
// delete by expiry without another index. On PostgreSQL the refusal
// comes with the next round trip (insertOnce).
func (t *tx) SpendTransactionToken(hash []byte, expiresAt time.Time, spentBy string) error {
	return t.insertOnce("spend transaction token", paylink.ErrTokenSpent,
		`INSERT INTO spent_transaction_tokens (expires_at, hash, spent_by) VALUES ($1, $2, $3)`, expiresAt.UnixMicro(), hash, spentBy)
}

// ReleaseTransactionToken deletes a token's row if spentBy spent it.
func (t *tx) ReleaseTransactionToken(hash []byte, expiresAt time.Time, spentBy string) error {
	if _, err := t.exec(`DELETE FROM spent_transaction_tokens WHERE expires_at = $1 AND hash = $2 AND spent_by = $3`,
		expiresAt.UnixMicro(), hash, spentBy); err != nil {
		return fmt.Errorf("release transaction token: %w", err)
	}
	return nil
}

// TransactionTokenSpender reads who spent a token. It first tries to
// spend the token itself, which on PostgreSQL waits for a transaction
// still spending it (a commit whose answer was lost may still be under
// way) to end; if that spends it, the token was free, and the row goes
// again.
func (t *tx) TransactionTokenSpender(hash []byte, expiresAt time.Time) (string, error) {
	const op = "transaction token spender"
	res, err := t.exec(`INSERT INTO spent_transaction_tokens (expires_at, hash, spent_by) VALUES ($1, $2, '')
		ON CONFLICT (expires_at, hash) DO NOTHING`, expiresAt.UnixMicro(), hash)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	} else if n == 1 {
		if _, err := t.exec(`DELETE FROM spent_transaction_tokens WHERE expires_at = $1 AND hash = $2`, expiresAt.UnixMicro(), hash); err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		return "", paylink.ErrNotFound
	}
	var by string
	err = t.q.QueryRowContext(t.ctx, `SELECT spent_by FROM spent_transaction_tokens WHERE expires_at = $1 AND hash = $2`,
		expiresAt.UnixMicro(), hash).Scan(&by)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return by, nil
}

// DeleteSpentTransactionTokens forgets spent tokens that expired before
// the cutoff.
func (t *tx) DeleteSpentTransactionTokens(before time.Time) (int64, error) {
	res, err := t.exec(`DELETE FROM spent_transaction_tokens WHERE expires_at < $1`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("delete spent transaction tokens: %w", err)
	}
	return res.RowsAffected()
}

// CreateCard inserts a vaulted card.
func (t *tx) CreateCard(c *paylink.Card) error {
	info, err := toJSON(c.Info)
	if err != nil {
		return err
	}
	return t.execLater("insert card", `INSERT INTO cards (token, merchant_id, key_id, pan_sealed, fingerprint, fingerprint_key_id, info, multi_use, customer_id, created_at, used_at, invalidated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		c.Token, c.MerchantID, c.Sealed.KeyID, c.Sealed.Ciphertext, c.Info.Fingerprint, c.FingerprintKeyID, info, c.MultiUse, c.CustomerID,
		c.CreatedAt.UnixMicro(), micros(c.UsedAt), micros(c.InvalidatedAt))
}

// Card loads a card token of a merchant. The fingerprint column, which
// key rotation rewrites, is the card's fingerprint; the copy in info is
// the one from tokenisation.
func (t *tx) Card(merchantID, token string) (*paylink.Card, error) {
	var c paylink.Card
	var info, fingerprint string
	var created int64
	var used, invalidated sql.NullInt64
	err := t.q.QueryRowContext(t.ctx, `SELECT token, merchant_id, key_id, pan_sealed, fingerprint, fingerprint_key_id, info, multi_use, customer_id, created_at, used_at, invalidated_at
		FROM cards WHERE token = $1 AND merchant_id = $2`, token, merchantID).
		Scan(&c.Token, &c.MerchantID, &c.Sealed.KeyID, &c.Sealed.Ciphertext, &fingerprint, &c.FingerprintKeyID, &info, &c.MultiUse, &c.CustomerID, &created, &used, &invalidated)
	if err != nil {
		return nil, notFound("load card", err)
	}
	if err := json.Unmarshal([]byte(info), &c.Info); err != nil {
		return nil, fmt.Errorf("card info: %w", err)
	}
	c.Info.Fingerprint = fingerprint
	c.CreatedAt, c.UsedAt, c.InvalidatedAt = time.UnixMicro(created).UTC(), fromMicros(used), fromMicros(invalidated)
	return &c, nil
}

// MarkCardUsed spends a single-use card token.
func (t *tx) MarkCardUsed(token string, now time.Time) error {
	return t.execOne("mark card used", `UPDATE cards SET used_at = $1 WHERE token = $2 AND used_at IS NULL AND invalidated_at IS NULL`,
		now.UnixMicro(), token)
}

// InvalidateCard permanently invalidates a card token.
func (t *tx) InvalidateCard(merchantID, token string, now time.Time) error {
	return t.execOne("invalidate card", `UPDATE cards SET invalidated_at = $1 WHERE token = $2 AND merchant_id = $3 AND invalidated_at IS NULL`,
		now.UnixMicro(), token, merchantID)
}

// WipeSpentCards erases sealed numbers of cards that can no longer pay.
func (t *tx) WipeSpentCards(before time.Time, limit int) (int64, error) {
	res, err := t.exec(`UPDATE cards SET pan_sealed = $1, key_id = '' WHERE token IN (
		SELECT token FROM cards WHERE key_id <> '' AND (
			(multi_use = $2 AND used_at IS NOT NULL AND used_at < $3) OR (invalidated_at IS NOT NULL AND invalidated_at < $4))
		LIMIT $5)`, []byte{}, false, before.UnixMicro(), before.UnixMicro(), limit)
	if err != nil {
		return 0, fmt.Errorf("wipe spent cards: %w", err)
	}
	return res.RowsAffected()
}

// AddEvent appends an event to a payment's history (the events table;
// the audit log is AddAuditEvent's).
func (t *tx) AddEvent(e *paylink.Event) error {
	return t.execLater("insert event", `INSERT INTO events (merchant_id, reference, type, data, created_at) VALUES ($1, $2, $3, $4, $5)`,
		e.MerchantID, e.Reference, e.Type, e.Data, e.CreatedAt.UnixMicro())
}
