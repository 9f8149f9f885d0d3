package sqlstore

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/paylink/paylink"
)

// Ledger persistence: postings and their lines are only ever inserted
// (the schema's triggers refuse updates and deletes).

// AddPosting appends p and its lines. A posting whose key exists already
// is refused with paylink.ErrConflict: every event is posted once (on
// PostgreSQL with the next round trip, see insertOnce).
func (t *tx) AddPosting(p *paylink.Posting) error {
	err := t.insertOnce("insert posting "+p.Key, paylink.ErrConflict, `INSERT INTO ledger_postings (id, posting_key, kind,
		merchant_id, currency, reference, refund_reference, amount, fee, net, moves_balance, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		p.ID, p.Key, string(p.Kind), p.MerchantID, p.Currency, p.Reference, p.RefundReference,
		p.Amount, p.Fee, p.Net, p.MovesBalance(), p.CreatedAt.UnixMicro())
	if err != nil {
		return err
	}
	if len(p.Lines) == 0 {
		return nil
	}
	args := make([]any, 0, lineColumns*len(p.Lines))
	for i, l := range p.Lines {
		args = append(args, p.ID, i, p.MerchantID, string(l.Account), p.Currency, l.Amount, l.FeeCode)
	}
	return t.execLater("insert posting lines "+p.Key, insertLines(len(p.Lines)), args...)
}

// lineColumns is how many values insertLines takes per line.
const lineColumns = 7

// insertLines is one INSERT of n ledger lines: one statement per posting
// instead of one per line.
func insertLines(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ledger_lines (posting_id, line_no, merchant_id, account, currency, amount, fee_code) VALUES `)
	writeRows(&b, n, lineColumns, nil)
	return b.String()
}

// OrphanLedgerLines lists up to limit posting ids named by lines with no
// posting: on PostgreSQL lines carry no foreign key (migration 0021).
func (t *tx) OrphanLedgerLines(limit int) ([]string, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT DISTINCT l.posting_id FROM ledger_lines l
		WHERE NOT EXISTS (SELECT 1 FROM ledger_postings p WHERE p.id = l.posting_id)
		ORDER BY l.posting_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("orphan ledger lines: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("orphan ledger lines: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// MisfiledLedgerLines lists up to limit postings (their id, key and
// reference, without lines) with a line that names another merchant or
// currency than the posting: balances are summed by the line's currency.
func (t *tx) MisfiledLedgerLines(limit int) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT p.id, p.posting_key, p.reference FROM ledger_postings p
		WHERE EXISTS (SELECT 1 FROM ledger_lines l WHERE l.posting_id = p.id
			AND (l.merchant_id <> p.merchant_id OR l.currency <> p.currency))
		ORDER BY p.id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("misfiled ledger lines: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Posting
	for rows.Next() {
		p := &paylink.Posting{}
		if err := rows.Scan(&p.ID, &p.Key, &p.Reference); err != nil {
			return nil, fmt.Errorf("misfiled ledger lines: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// LedgerBalances sums a merchant's lines by account and currency. The
// lines are reached through the merchant's postings (index
// ledger_postings_balance) and the lines' primary key: a line carries no
// index of its own, so writing it is one B-tree insert (migration 0017).
func (t *tx) LedgerBalances(merchantID string) ([]paylink.AccountBalance, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT l.account, l.currency, SUM(l.amount)
		FROM ledger_postings p JOIN ledger_lines l ON l.posting_id = p.id
		WHERE p.merchant_id = $1 GROUP BY l.account, l.currency ORDER BY l.currency, l.account`, merchantID)
	if err != nil {
		return nil, fmt.Errorf("ledger balances: %w", err)
	}
	defer rows.Close()
	var out []paylink.AccountBalance
	for rows.Next() {
		var b paylink.AccountBalance
		var account string
		if err := rows.Scan(&account, &b.Currency, &b.Amount); err != nil {
			return nil, fmt.Errorf("ledger balances: %w", err)
		}
		b.Account = paylink.LedgerAccount(account)
		out = append(out, b)
	}
	return out, rows.Err()
}

// postingColumns are read from postingsFrom: a posting with the batch
// that settled it ("" while pending).
const (
	postingColumns = `p.id, p.posting_key, p.kind, p.merchant_id, p.currency, p.reference, p.refund_reference,
	p.amount, p.fee, p.net, p.created_at, COALESCE(i.batch_id, '')`
	postingsFrom = ` FROM ledger_postings p LEFT JOIN settlement_items i ON i.posting_id = p.id `
)

// BalanceTransactions lists the merchant's postings that move its
// balance, newest first, starting below the id before ("" for the newest).
func (t *tx) BalanceTransactions(merchantID, before string, limit int) ([]*paylink.Posting, error) {
	if before == "" {
		before = "\U0010FFFF"
	}
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE p.merchant_id = $1 AND p.moves_balance = $2 AND p.id < $3 ORDER BY p.id DESC LIMIT $4`,
		merchantID, true, before, limit)
	if err != nil {
		return nil, fmt.Errorf("balance transactions: %w", err)
	}
	return scanPostings(rows)
}

// BalanceTransaction loads one of the merchant's postings that moves its
// balance, without lines; ErrNotFound when it has none with that id.
func (t *tx) BalanceTransaction(merchantID, id string) (*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE p.id = $1 AND p.merchant_id = $2 AND p.moves_balance = $3`, id, merchantID, true)
	if err != nil {
		return nil, fmt.Errorf("balance transaction %s: %w", id, err)
	}
	ps, err := scanPostings(rows)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("balance transaction %s: %w", id, paylink.ErrNotFound)
	}
	return ps[0], nil
}

// PostingsOf lists every posting of a reference (a purchase reference, a
// batch id or a payout id) with its lines, oldest first.
func (t *tx) PostingsOf(reference string) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE p.reference = $1 ORDER BY p.id`, reference)
	return t.withLines(rows, err, "postings of "+reference)
}

// withLines loads the lines of the postings a query returned, in one
// query for all of them (not one per posting).
func (t *tx) withLines(rows *sql.Rows, queryErr error, op string) ([]*paylink.Posting, error) {
	if queryErr != nil {
		return nil, fmt.Errorf("%s: %w", op, queryErr)
	}
	ps, err := scanPostings(rows)
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	byID := make(map[string]*paylink.Posting, len(ps))
	args := make([]any, len(ps))
	marks := make([]string, len(ps))
	for i, p := range ps {
		byID[p.ID], args[i], marks[i] = p, p.ID, fmt.Sprintf("$%d", i+1)
	}
	lines, err := t.q.QueryContext(t.ctx, `SELECT posting_id, account, amount, fee_code FROM ledger_lines
		WHERE posting_id IN (`+strings.Join(marks, ", ")+`) ORDER BY posting_id, line_no`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: lines: %w", op, err)
	}
	defer lines.Close()
	for lines.Next() {
		var id, account string
		var l paylink.LedgerLine
		if err := lines.Scan(&id, &account, &l.Amount, &l.FeeCode); err != nil {
			return nil, fmt.Errorf("%s: lines: %w", op, err)
		}
		l.Account = paylink.LedgerAccount(account)
		byID[id].Lines = append(byID[id].Lines, l)
	}
	return ps, lines.Err()
}

func scanPostings(rows *sql.Rows) ([]*paylink.Posting, error) {
	defer rows.Close()
	var out []*paylink.Posting
	for rows.Next() {
		var p paylink.Posting
		var kind string
		var created int64
		if err := rows.Scan(&p.ID, &p.Key, &kind, &p.MerchantID, &p.Currency, &p.Reference, &p.RefundReference,
			&p.Amount, &p.Fee, &p.Net, &created, &p.SettlementBatch); err != nil {
			return nil, fmt.Errorf("scan posting: %w", err)
		}
		p.Kind, p.CreatedAt = paylink.PostingKind(kind), time.UnixMicro(created).UTC()
		out = append(out, &p)
	}
	return out, rows.Err()
}

// Whole-journal scans for verification, in primary-key order, a page at
// a time, so a verification never holds a long read.

// ScanTransactions lists up to limit transactions with references above after.
func (t *tx) ScanTransactions(after string, limit int) ([]*paylink.Transaction, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+transactionColumns+` FROM transactions
		WHERE reference > $1 ORDER BY reference LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("scan transactions: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Transaction
	for rows.Next() {
		tr, err := scanTransaction(rows)
		if err != nil {
			return nil, fmt.Errorf("scan transactions: %w", err)
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}

// ScanRefunds lists up to limit refunds with references above after.
func (t *tx) ScanRefunds(after string, limit int) ([]*paylink.Refund, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+refundColumns+` FROM refunds
		WHERE reference > $1 ORDER BY reference LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("scan refunds: %w", err)
	}
	defer rows.Close()
	var out []*paylink.Refund
	for rows.Next() {
		r, err := scanRefund(rows)
		if err != nil {
			return nil, fmt.Errorf("scan refunds: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScanPostings lists up to limit postings with ids above after, with
// their lines.
func (t *tx) ScanPostings(after string, limit int) ([]*paylink.Posting, error) {
	rows, err := t.q.QueryContext(t.ctx, `SELECT `+postingColumns+postingsFrom+`
		WHERE p.id > $1 ORDER BY p.id LIMIT $2`, after, limit)
	return t.withLines(rows, err, "scan postings")
}
