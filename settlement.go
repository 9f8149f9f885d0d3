package paylink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// SettlementBatch is what the acquirer and bank settled of one merchant
// and currency for one UTC day of postings in one settlement run: the
// balance transactions it covers move from pending to available.
type SettlementBatch struct {
	ID         string
	MerchantID string
	Currency   string
	Day        string // YYYY-MM-DD, the UTC day the covered postings were made
	Count      int    // balance transactions covered
	Net        int64  // their net, moved from pending to available
	CreatedAt  time.Time
	PayoutID   string // the payout that paid it out, "" until then
}

// Payout takes a merchant's available balance in one currency to its
// bank account; it pays out the batches settled since the last payout.
type Payout struct {
	ID         string
	MerchantID string
	Currency   string
	Amount     int64
	BatchIDs   []string
	// BalanceTransactionIDs are the balance transactions the batches
	// covered: what this payout paid out (filled by Service.Payouts).
	BalanceTransactionIDs []string
	// Days are the UTC days of the batches it paid out, oldest first:
	// the days whose settlement reports (SettlementReport) cover it
	// (filled by Service.Payouts).
	Days      []string
	CreatedAt time.Time
}

// MerchantCurrency names one merchant's balance in one currency.
type MerchantCurrency struct {
	MerchantID string
	Currency   string
}

// SettleResult counts what a settlement run did.
type SettleResult struct {
	Batches []*SettlementBatch
	Payouts []*Payout
}

// Settle settles, as the sandbox acquirer and bank would, every balance
// transaction made before cutoff that no batch covers yet: one batch per
// merchant, currency and UTC day, then one payout per merchant and
// currency of its whole available balance, when positive. Each merchant
// and currency is settled in one database transaction under a lock, and a
// balance transaction belongs to at most one batch and a batch to at most
// one payout (unique keys), so running it twice, or on two instances at
// once, settles and pays nothing twice. An account that fails is skipped
// and named in the error, and the result holds what the others settled
// (committed). A run cut short (ctx ends: Ctrl-C, the job's deadline)
// finishes the account under way, so that what it reports is what
// committed, and stops before the next; a database that cannot be
// reached stops it too. Either way it says how many accounts it did not
// try.
func (s *Service) Settle(ctx context.Context, cutoff time.Time) (*SettleResult, error) {
	var accounts []MerchantCurrency
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		accounts, err = tx.UnsettledAccounts(cutoff.UTC())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("settle: %w", err)
	}
	res := &SettleResult{}
	var failed []error
	for i, a := range accounts {
		if err := ctx.Err(); err != nil {
			return res, errors.Join(append(failed, fmt.Errorf("settle: stopped, %d more accounts not tried (from %s %s): %w",
				len(accounts)-i, a.MerchantID, a.Currency, err))...)
		}
		batches, payout, err := s.settleOne(ctx, a, cutoff.UTC())
		switch {
		case err == nil: // committed: only now is it settled
			res.Batches = append(res.Batches, batches...)
			if payout != nil {
				res.Payouts = append(res.Payouts, payout)
			}
		case errors.Is(err, ErrConflict): // another instance settled it
		case ctx.Err() != nil || errors.Is(err, ErrUnavailable): // the rest would fail alike
			return res, errors.Join(append(failed, fmt.Errorf("settle %s %s, and %d more accounts not tried: %w",
				a.MerchantID, a.Currency, len(accounts)-i-1, err))...)
		default: // one account's failure does not hold the others back
			failed = append(failed, fmt.Errorf("settle %s %s: %w", a.MerchantID, a.Currency, err))
		}
	}
	return res, errors.Join(failed...)
}

// settleAccountTimeout bounds one account's settlement once begun: it
// runs to its end even when the run is cut short (a COMMIT cancelled in
// flight may have committed, and the run would report it failed), but
// not for ever on a database that stopped answering: as long as a round
// of the webhook dispatcher's database work at shutdown, alongside which
// it then runs (docs/operations.md, "How long it can take").
const settleAccountTimeout = 30 * time.Second

// settleOne settles and pays out one account in a transaction of its
// own, with the actor of ctx, whether or not ctx ends meanwhile.
func (s *Service) settleOne(ctx context.Context, a MerchantCurrency, cutoff time.Time) ([]*SettlementBatch, *Payout, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleAccountTimeout)
	defer cancel()
	var batches []*SettlementBatch
	var payout *Payout
	err := s.store.Update(ctx, func(tx Tx) error {
		var err error
		if batches, payout, err = s.settleAccount(tx, a, cutoff); err != nil {
			return err
		}
		return s.auditSettlement(ctx, tx, batches, payout)
	})
	return batches, payout, err
}

// settleAccount settles and pays out one merchant and currency inside tx.
func (s *Service) settleAccount(tx Tx, a MerchantCurrency, cutoff time.Time) ([]*SettlementBatch, *Payout, error) {
	if err := tx.LockMerchantLedger(a.MerchantID, a.Currency); err != nil {
		return nil, nil, err
	}
	postings, err := tx.UnsettledPostings(a.MerchantID, a.Currency, cutoff)
	if err != nil {
		return nil, nil, err
	}
	var batches []*SettlementBatch
	for _, day := range byDay(postings) {
		b, err := s.settleDay(tx, a, day)
		if err != nil {
			return nil, nil, err
		}
		batches = append(batches, b)
	}
	payout, err := s.payOut(tx, a)
	return batches, payout, err
}

// auditSettlement records, inside the transaction that made them, each
// batch and the payout of one account's settlement, with the actor of
// ctx: the operator's paylink settle, or the settlement job.
func (s *Service) auditSettlement(ctx context.Context, tx Tx, batches []*SettlementBatch, payout *Payout) error {
	for _, b := range batches {
		if err := s.audit(ctx, tx, AuditEvent{MerchantID: b.MerchantID, Action: AuditBatchCreate, ObjectType: ObjectBatch,
			ObjectID: b.ID, Outcome: OutcomeSuccess,
			Detail: auditMoney(fmt.Sprintf("day=%s balance_transactions=%d", b.Day, b.Count), b.Net, b.Currency)}); err != nil {
			return err
		}
	}
	if payout == nil {
		return nil
	}
	return s.audit(ctx, tx, AuditEvent{MerchantID: payout.MerchantID, Action: AuditPayoutCreate, ObjectType: ObjectPayout,
		ObjectID: payout.ID, Outcome: OutcomeSuccess,
		Detail: auditMoney(fmt.Sprintf("batches=%d", len(payout.BatchIDs)), payout.Amount, payout.Currency)})
}

// byDay groups postings, oldest first, by the UTC day they were made.
func byDay(ps []*Posting) [][]*Posting {
	var out [][]*Posting
	for i, p := range ps {
		if i == 0 || p.CreatedAt.Format(time.DateOnly) != ps[i-1].CreatedAt.Format(time.DateOnly) {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], p)
	}
	return out
}

// settleDay records one batch over covered and posts its settlement.
func (s *Service) settleDay(tx Tx, a MerchantCurrency, covered []*Posting) (*SettlementBatch, error) {
	id, err := s.reference("sb_")
	if err != nil {
		return nil, Internal("batch id", err)
	}
	b := &SettlementBatch{ID: id, MerchantID: a.MerchantID, Currency: a.Currency,
		Day: covered[0].CreatedAt.Format(time.DateOnly), Count: len(covered), CreatedAt: s.now()}
	ids := make([]string, len(covered))
	for i, p := range covered {
		ids[i] = p.ID
		b.Net += p.Net
	}
	if err := tx.CreateSettlementBatch(b, ids); err != nil {
		return nil, err
	}
	p, err := SettlementPosting(b.ID, a.MerchantID, a.Currency, covered)
	if err != nil {
		return nil, Internal("settlement posting", err)
	}
	return b, s.post(tx, p)
}

// payOut pays the merchant's whole available balance, when positive,
// covering every batch not paid out yet. It pays nothing when the two
// disagree (lines written by hand, or a bug): a payout would move money
// the journal cannot account for.
func (s *Service) payOut(tx Tx, a MerchantCurrency) (*Payout, error) {
	rows, err := tx.LedgerBalances(a.MerchantID)
	if err != nil {
		return nil, err
	}
	var available int64
	for _, b := range BalancesOf(rows) {
		if b.Currency == a.Currency {
			available = b.Available
		}
	}
	if available <= 0 {
		return nil, nil
	}
	batches, err := tx.UnpaidBatches(a.MerchantID, a.Currency)
	if err != nil {
		return nil, err
	}
	var settled int64
	for _, b := range batches {
		settled += b.Net
	}
	if settled != available {
		return nil, fmt.Errorf("pay out %s %s: the available balance, %d, is not the net of the batches not paid out yet, %d: "+
			"nothing paid; run paylink ledger verify", a.MerchantID, a.Currency, available, settled)
	}
	id, err := s.reference("po_")
	if err != nil {
		return nil, Internal("payout id", err)
	}
	p := &Payout{ID: id, MerchantID: a.MerchantID, Currency: a.Currency, Amount: available, CreatedAt: s.now()}
	for _, b := range batches {
		p.BatchIDs = append(p.BatchIDs, b.ID)
	}
	if err := tx.CreatePayout(p); err != nil {
		return nil, err
	}
	return p, s.post(tx, PayoutPosting(p.ID, a.MerchantID, a.Currency, p.Amount))
}

// Payouts lists m's payouts newest first, up to limit (1 to
// MaxBalanceTransactions), after the id startingAfter, and reports
// whether more follow.
func (s *Service) Payouts(ctx context.Context, m *Merchant, startingAfter string, limit int) ([]*Payout, bool, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, false, err
	}
	var out []*Payout
	var more bool
	err := s.store.Snapshot(ctx, func(tx Tx) error { // payouts and the batches they cover, of one moment
		if startingAfter != "" {
			if _, err := tx.Payout(m.ID, startingAfter); err != nil {
				return err
			}
		}
		var err error
		if out, err = tx.Payouts(m.ID, startingAfter, limit+1); err != nil {
			return err
		}
		out, more = out[:min(len(out), limit)], len(out) > limit
		for _, p := range out {
			if err := coverOf(tx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, false, unknownCursor("payout")
	}
	if err != nil {
		return nil, false, Internal("payouts", err)
	}
	return out, more, nil
}

// coverOf fills in the balance transactions and the days p pays out.
func coverOf(tx Tx, p *Payout) error {
	for _, b := range p.BatchIDs {
		ps, err := tx.BatchPostings(b)
		if err != nil {
			return err
		}
		for _, bt := range ps {
			p.BalanceTransactionIDs = append(p.BalanceTransactionIDs, bt.ID)
		}
		if len(ps) > 0 { // a batch covers one UTC day
			if day := ps[0].CreatedAt.UTC().Format(time.DateOnly); !slices.Contains(p.Days, day) {
				p.Days = append(p.Days, day)
			}
		}
	}
	slices.Sort(p.Days)
	return nil
}

// LastCutoff is the most recent daily settlement cut-off at or before
// now: the time of day cutoff (since midnight UTC) today or yesterday.
func LastCutoff(now time.Time, cutoff time.Duration) time.Time {
	now = now.UTC()
	c := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).Add(cutoff)
	if c.After(now) {
		c = c.AddDate(0, 0, -1)
	}
	return c
}

// SettlementGrace is how long after a cut-off the scheduled settlement
// waits before settling the day it ends. A posting is stamped when its
// request makes it and committed a moment later, at most MaxRequestTime
// later: a run right at the cut-off would miss a posting stamped before
// it and committed after the run, and the next run would settle it in a
// second batch and payout of that day.
const SettlementGrace = MaxRequestTime

// SettleDue is the scheduled settlement: it settles everything before
// the last daily cut-off (Config.SettlementCutoff) that is at least
// SettlementGrace old. Run often, it does the day's work once and then
// finds nothing to do until the next cut-off.
func (s *Service) SettleDue(ctx context.Context) (*SettleResult, error) {
	return s.Settle(ctx, LastCutoff(s.now().Add(-SettlementGrace), s.cfg.SettlementCutoff))
}
