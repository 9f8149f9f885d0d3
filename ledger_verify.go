package paylink

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// Discrepancy is one way the journal disagrees with itself or with the
// payments it records.
type Discrepancy struct {
	Reference string // the payment, refund or posting concerned
	Problem   string
}

// verifyPage is how many rows verification reads per query.
const verifyPage = 500

// VerifyLedger checks the whole journal: every line has its posting;
// every posting and payment names a merchant that exists; every posting
// balances; every
// approved payment, cleared or dishonoured debit and approved refund has
// exactly its postings, for its amount; every settlement batch and payout
// has its posting for its amount; a batch's net is the net of the balance
// transactions it covers, and a payout's amount the net of its batches;
// a payment's refunded total is what its refunds hold (all but FAILED
// ones); nothing else is posted; and for every merchant and currency the
// balance transactions' net sums to pending plus available. It returns
// every discrepancy found, none when the ledger is sound.
func (s *Service) VerifyLedger(ctx context.Context) ([]Discrepancy, error) {
	v := verifier{postings: map[string]*Posting{}, net: map[string]int64{}, held: map[string]int64{}, merchants: map[string]int{},
		batched: map[string]int64{}, paid: map[string]int64{}, refunded: map[string]*refundTotals{},
		batchOwners: map[string]*owners{}, payoutOwners: map[string]*owners{}}
	err := s.store.Snapshot(ctx, func(tx Tx) error { return v.read(tx) })
	if err != nil {
		return nil, fmt.Errorf("verify ledger: %w", err)
	}
	v.checkLeftovers()
	v.checkBalances()
	v.checkRefunded()
	sort.SliceStable(v.found, func(i, j int) bool { return v.found[i].Reference < v.found[j].Reference })
	return v.found, nil
}

// read checks every row tx reads: one snapshot, so that payments made
// while it runs neither appear half made nor move between its pages.
func (v *verifier) read(tx Tx) error {
	if err := scanPostings(tx, v.addPosting); err != nil {
		return err
	}
	if err := scanTransactions(tx, v.checkTransaction); err != nil {
		return err
	}
	if err := scanRefunds(tx, v.checkRefund); err != nil {
		return err
	}
	if err := scanSettlements(tx, v.checkBatch, v.checkPayout); err != nil {
		return err
	}
	if err := v.checkLines(tx); err != nil {
		return err
	}
	return v.checkMerchants(tx)
}

// verifier accumulates what verification has seen.
type verifier struct {
	postings map[string]*Posting // by key; removed once accounted for
	net      map[string]int64    // merchant/currency: sum of balance transactions' net
	held     map[string]int64    // merchant/currency: pending + available from the lines
	batched  map[string]int64    // batch id: net of the balance transactions it covers
	paid     map[string]int64    // payout id: net of the batches it paid out
	// batchOwners and payoutOwners are whose, in what currency and of
	// what day, the balance transactions a batch covers and the batches
	// a payout paid out are.
	batchOwners, payoutOwners map[string]*owners
	refunded                  map[string]*refundTotals // payment reference, when it has refunds or a refunded total
	// merchants counts the postings and payments naming each merchant id.
	merchants map[string]int
	found     []Discrepancy
}

func (v *verifier) report(ref, format string, args ...any) {
	v.found = append(v.found, Discrepancy{Reference: ref, Problem: fmt.Sprintf(format, args...)})
}

func (v *verifier) addPosting(p *Posting) {
	switch {
	case len(p.Lines) == 0:
		v.report(p.Reference, "posting %s has no lines", p.Key)
	case !p.Balanced():
		v.report(p.Reference, "posting %s does not balance", p.Key)
	}
	if p.Net != p.Amount-p.Fee || p.Fee < 0 {
		v.report(p.Reference, "posting %s: net %d is not amount %d less fee %d", p.Key, p.Net, p.Amount, p.Fee)
	}
	pending, available := v.checkMerchantLines(p)
	v.merchants[p.MerchantID]++
	k := p.MerchantID + "/" + p.Currency
	if p.MovesBalance() {
		v.net[k] += p.Net
	}
	v.held[k] += pending + available
	if p.SettlementBatch != "" {
		v.batched[p.SettlementBatch] += p.Net
		ownersOf(v.batchOwners, p.SettlementBatch).add(owner{p.MerchantID, p.Currency, p.CreatedAt.UTC().Format(time.DateOnly)})
	}
	v.postings[p.Key] = p
}

// checkMerchantLines reports a posting whose lines on the merchant's
// pending and available balances are not what its kind moves: a balance
// transaction moves its net into pending and nothing into available, a
// settlement moves one amount from pending to available, a payout takes
// its amount from available. A balanced pair of lines added to a posting,
// or a line moved from one of the two accounts to the other, would
// otherwise leave the balances' sum right and the next payout wrong. It
// returns what the posting adds to each (credits, so positive for money
// the merchant is owed).
func (v *verifier) checkMerchantLines(p *Posting) (pending, available int64) {
	pending, available = -lineSum(p, AccountMerchantPending), -lineSum(p, AccountMerchantAvailable)
	var ok bool
	switch p.Kind {
	case PostingSettlement:
		ok = pending == -available
	case PostingPayout:
		ok = pending == 0 && available == p.Net
	default:
		ok = pending == p.Net && available == 0
	}
	if !ok {
		v.report(p.Reference, "%s posting %s adds %d to pending and %d to available, its net is %d",
			p.Kind, p.Key, pending, available, p.Net)
	}
	return pending, available
}

// refundTotals is a payment's refunded total as stored and as its
// refunds add up.
type refundTotals struct{ stored, held int64 }

// refundsOf is the totals of payment ref, started at zero.
func (v *verifier) refundsOf(ref string) *refundTotals {
	r := v.refunded[ref]
	if r == nil {
		r = &refundTotals{}
		v.refunded[ref] = r
	}
	return r
}

// expect accounts for the posting key, which must exist, be o's (its
// merchant's, in its currency) and move gross. A posting without lines
// (on PostgreSQL lines carry no foreign key to their posting, migration
// 0021) moves nothing; addPosting reported it.
func (v *verifier) expect(ref string, o owner, kind PostingKind, key string, gross int64) {
	p, ok := v.postings[key]
	if !ok {
		v.report(ref, "no %s posting", kind)
		return
	}
	delete(v.postings, key)
	if got := (owner{p.MerchantID, p.Currency, ""}); got != o {
		v.report(ref, "%s posting is %s's, the record %s's", kind, got, o)
	}
	if len(p.Lines) == 0 {
		return
	}
	if got := abs(p.Lines[0].Amount); got != gross {
		v.report(ref, "%s posting is for %d, want %d", kind, got, gross)
	}
}

func (v *verifier) checkTransaction(t *Transaction) {
	v.merchants[t.MerchantID]++
	if t.Refunded != 0 {
		v.refundsOf(t.Reference).stored = t.Refunded
	}
	key := func(k PostingKind) string { return string(k) + ":" + t.Reference }
	o := owner{t.MerchantID, t.Currency, ""}
	if t.PaymentType != PaymentTypeBankAccount {
		if t.Status == StatusApproved {
			v.expect(t.Reference, o, PostingCharge, key(PostingCharge), t.Total)
		}
		return
	}
	_, submitted := v.postings[key(PostingDirectDebitSubmit)]
	switch {
	case t.Status == StatusPending:
		v.expect(t.Reference, o, PostingDirectDebitSubmit, key(PostingDirectDebitSubmit), t.Total)
	case t.Status == StatusApproved:
		v.expect(t.Reference, o, PostingDirectDebitSubmit, key(PostingDirectDebitSubmit), t.Total)
		v.expect(t.Reference, o, PostingDirectDebitClear, key(PostingDirectDebitClear), t.Total)
	case t.Status == StatusDeclined && submitted:
		v.expect(t.Reference, o, PostingDirectDebitSubmit, key(PostingDirectDebitSubmit), t.Total)
		v.expect(t.Reference, o, PostingDirectDebitDishonor, key(PostingDirectDebitDishonor), t.Total)
	}
}

func (v *verifier) checkRefund(r *Refund) {
	if r.Status != StatusFailed { // a FAILED refund gave its reservation back
		v.refundsOf(r.TransactionReference).held += r.Amount
	}
	if r.Status != StatusApproved {
		return
	}
	for _, kind := range []PostingKind{PostingRefund, PostingDirectDebitRefund} {
		if _, ok := v.postings[string(kind)+":"+r.Reference]; ok {
			v.expect(r.Reference, owner{r.MerchantID, r.Currency, ""}, kind, string(kind)+":"+r.Reference, r.Amount)
			return
		}
	}
	v.report(r.Reference, "no refund posting")
}

// checkBatch accounts for a batch's settlement posting, which must move
// exactly the batch's net from pending to available.
func (v *verifier) checkBatch(b *SettlementBatch) {
	key := string(PostingSettlement) + ":" + b.ID
	p, ok := v.postings[key]
	if !ok {
		v.report(b.ID, "settlement batch has no settlement posting")
		return
	}
	delete(v.postings, key)
	if got := -lineSum(p, AccountMerchantAvailable); got != b.Net {
		v.report(b.ID, "settlement posting makes %d available, the batch's net is %d", got, b.Net)
	}
	if covered := v.batched[b.ID]; covered != b.Net {
		v.report(b.ID, "settlement batch's net is %d, the balance transactions it covers net %d", b.Net, covered)
	}
	v.checkOwners(b.ID, "settlement batch", owner{b.MerchantID, b.Currency, b.Day}, p, v.batchOwners[b.ID], "balance transactions it covers")
	if covered := v.batchOwners[b.ID].count(); covered != b.Count {
		v.report(b.ID, "settlement batch counts %d balance transactions, it covers %d", b.Count, covered)
	}
	if b.PayoutID != "" {
		v.paid[b.PayoutID] += b.Net
		ownersOf(v.payoutOwners, b.PayoutID).add(owner{b.MerchantID, b.Currency, ""})
	}
}

// checkPayout accounts for a payout's posting, for the payout's amount.
func (v *verifier) checkPayout(po *Payout) {
	key := string(PostingPayout) + ":" + po.ID
	p, ok := v.postings[key]
	if !ok {
		v.report(po.ID, "payout has no payout posting")
		return
	}
	delete(v.postings, key)
	if got := lineSum(p, AccountMerchantAvailable); got != po.Amount {
		v.report(po.ID, "payout posting takes %d from available, the payout is %d", got, po.Amount)
	}
	if batches := v.paid[po.ID]; batches != po.Amount {
		v.report(po.ID, "payout is %d, the batches it paid out net %d", po.Amount, batches)
	}
	v.checkOwners(po.ID, "payout", owner{po.MerchantID, po.Currency, ""}, p, v.payoutOwners[po.ID], "batches it paid out")
}

// checkOwners reports a batch or payout, id, whose own merchant,
// currency (and day), o, are not its posting's, p, nor those of the rows
// it covers, covered.
func (v *verifier) checkOwners(id, what string, o owner, p *Posting, covered *owners, rows string) {
	if got := (owner{p.MerchantID, p.Currency, o.day}); got != o {
		v.report(id, "%s is %s's, its posting %s's", what, o, got)
	}
	if covered == nil {
		return
	}
	for got := range covered.seen {
		if got != o {
			v.report(id, "%s is %s's, %d of the %s are %s's", what, o, covered.seen[got], rows, got)
		}
	}
}

// owner is whose a ledger record is: a merchant, a currency and, for a
// settlement batch and what it covers, a UTC day ("" otherwise).
type owner struct{ merchant, currency, day string }

func (o owner) String() string {
	if o.day == "" {
		return o.merchant + " " + o.currency
	}
	return o.merchant + " " + o.currency + " " + o.day
}

// owners counts the rows of each owner that a batch or payout covers.
type owners struct{ seen map[owner]int }

// ownersOf is the owners of id in m, started empty.
func ownersOf(m map[string]*owners, id string) *owners {
	o := m[id]
	if o == nil {
		o = &owners{seen: map[owner]int{}}
		m[id] = o
	}
	return o
}

func (o *owners) add(w owner) { o.seen[w]++ }

// count is how many rows were seen, 0 for none.
func (o *owners) count() int {
	if o == nil {
		return 0
	}
	n := 0
	for _, c := range o.seen {
		n += c
	}
	return n
}

// checkRefunded reports payments whose refunded total is not what their
// refunds hold.
func (v *verifier) checkRefunded() {
	for ref, r := range v.refunded {
		if r.stored != r.held {
			v.report(ref, "payment's refunded total is %d, its refunds (all but FAILED ones) hold %d", r.stored, r.held)
		}
	}
}

// lineSum is the sum of a posting's lines on one account.
func lineSum(p *Posting, a LedgerAccount) int64 {
	var sum int64
	for _, l := range p.Lines {
		if l.Account == a {
			sum += l.Amount
		}
	}
	return sum
}

// checkLeftovers reports postings that no payment, refund, batch or
// payout accounts for.
func (v *verifier) checkLeftovers() {
	for _, p := range v.postings {
		v.report(p.Reference, "%s posting %s has nothing in that state behind it", p.Kind, p.Key)
	}
}

func (v *verifier) checkBalances() {
	for k, held := range v.held {
		if v.net[k] != held {
			v.report(k, "balance transactions net %d, but pending + available is %d", v.net[k], held)
		}
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// scanPostings, scanTransactions, scanRefunds and scanSettlements call
// fn for every row tx reads, a page at a time.
func scanPostings(tx Tx, fn func(*Posting)) error {
	return scanAll(func(after string) (string, int, error) {
		ps, err := tx.ScanPostings(after, verifyPage)
		for _, p := range ps {
			fn(p)
			after = p.ID
		}
		return after, len(ps), err
	})
}

// checkLines reports ledger lines whose posting does not exist,
// and postings with lines of another merchant or currency (up to
// verifyPage of each: one is already a broken journal).
func (v *verifier) checkLines(tx Tx) error {
	ids, err := tx.OrphanLedgerLines(verifyPage)
	if err != nil {
		return fmt.Errorf("verify ledger lines: %w", err)
	}
	for _, id := range ids {
		v.report(id, "ledger lines name posting %s, which does not exist", id)
	}
	misfiled, err := tx.MisfiledLedgerLines(verifyPage)
	if err != nil {
		return fmt.Errorf("verify ledger lines: %w", err)
	}
	for _, p := range misfiled {
		v.report(p.Reference, "posting %s has a line of another merchant or currency than its own", p.Key)
	}
	return nil
}

// checkMerchants reports merchant ids that postings or payments name but
// no merchant has: on PostgreSQL neither carries a foreign key to its
// merchant (migration 0023).
func (v *verifier) checkMerchants(tx Tx) error {
	ms, err := tx.ListMerchants()
	if err != nil {
		return fmt.Errorf("verify merchants: %w", err)
	}
	for _, m := range ms {
		delete(v.merchants, m.ID)
	}
	for id, n := range v.merchants {
		v.report(id, "%d postings and payments name merchant %s, which does not exist", n, id)
	}
	return nil
}

func scanTransactions(tx Tx, fn func(*Transaction)) error {
	return scanAll(func(after string) (string, int, error) {
		ts, err := tx.ScanTransactions(after, verifyPage)
		for _, t := range ts {
			fn(t)
			after = t.Reference
		}
		return after, len(ts), err
	})
}

func scanRefunds(tx Tx, fn func(*Refund)) error {
	return scanAll(func(after string) (string, int, error) {
		rs, err := tx.ScanRefunds(after, verifyPage)
		for _, r := range rs {
			fn(r)
			after = r.Reference
		}
		return after, len(rs), err
	})
}

func scanSettlements(tx Tx, batch func(*SettlementBatch), payout func(*Payout)) error {
	err := scanAll(func(after string) (string, int, error) {
		bs, err := tx.ScanSettlementBatches(after, verifyPage)
		for _, b := range bs {
			batch(b)
			after = b.ID
		}
		return after, len(bs), err
	})
	if err != nil {
		return err
	}
	return scanAll(func(after string) (string, int, error) {
		ps, err := tx.ScanPayouts(after, verifyPage)
		for _, p := range ps {
			payout(p)
			after = p.ID
		}
		return after, len(ps), err
	})
}

// scanAll runs page until it returns a short page.
func scanAll(page func(after string) (string, int, error)) error {
	after := ""
	for {
		var n int
		var err error
		if after, n, err = page(after); err != nil {
			return err
		}
		if n < verifyPage {
			return nil
		}
	}
}
