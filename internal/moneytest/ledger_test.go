package moneytest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/sqlstore"
)

// flow drives the Service directly for one merchant.
type flow struct {
	t   *testing.T
	e   *apitest.Env
	m   *apitest.Merchant
	ctx context.Context
}

func newFlow(t *testing.T, dsn string) *flow { return newFlowWith(t, dsn, paylink.Config{}) }

// newFlowWith starts the Service with cfg on the engine dsn names.
func newFlowWith(t *testing.T, dsn string, cfg paylink.Config) *flow {
	e := apitest.Start(t, apitest.Options{DSN: dsn, Config: cfg})
	return &flow{t: t, e: e, m: e.Onboard(), ctx: context.Background()}
}

func (f *flow) token() string {
	f.t.Helper()
	tok, err := f.e.Service.IssueTransactionToken(f.ctx, f.m.Merchant, f.m.Creds.CompanyToken)
	if err != nil {
		f.t.Fatal(err)
	}
	return tok
}

func (f *flow) card(number string, amount int64, hold, surcharge bool) *paylink.Transaction {
	f.t.Helper()
	cvc := "123"
	if paylink.BrandOf(number) == paylink.BrandAmex {
		cvc = "1234" // an American Express code has 4 digits
	}
	tr, err := f.e.Service.Purchase(f.ctx, f.m.Merchant, paylink.PurchaseRequest{
		CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token(),
		Customer: customer,
		Card:     &paylink.CardDetails{Number: number, ExpiryMonth: 12, ExpiryYear: f.e.Clock.Now().Year() + 2, CVC: cvc, HolderName: "Jo"},
		Amount:   amount, Currency: "AUD", PreAuth: hold, ApplySurcharge: surcharge,
	})
	if err != nil {
		f.t.Fatalf("purchase: %v", err)
	}
	return tr
}

var customer = paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}

func (f *flow) refund(ref string, amount int64) *paylink.Refund {
	f.t.Helper()
	r, _, err := f.e.Service.Refund(f.ctx, f.m.Merchant, ref, paylink.RefundRequest{
		CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token(), Customer: customer, Amount: amount, Currency: "AUD"})
	if err != nil {
		f.t.Fatalf("refund: %v", err)
	}
	return r
}

func (f *flow) debit(account string, amount int64) *paylink.Transaction {
	f.t.Helper()
	tr, err := f.e.Service.DirectDebit(f.ctx, f.m.Merchant, paylink.DirectDebitRequest{
		CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token(),
		Account:  paylink.BankAccount{BSB: "062-000", Number: "1234" + account, HolderName: "Jo Citizen"},
		Customer: customer,
		Amount:   amount, Currency: "AUD"})
	if err != nil {
		f.t.Fatalf("direct debit: %v", err)
	}
	return tr
}

func (f *flow) balance() paylink.Balance {
	f.t.Helper()
	bs, err := f.e.Service.Balances(f.ctx, f.m.Merchant)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == "AUD" {
			return b
		}
	}
	return paylink.Balance{Currency: "AUD"}
}

func (f *flow) verify() []paylink.Discrepancy {
	f.t.Helper()
	d, err := f.e.Service.VerifyLedger(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// Every money movement the Service makes is posted with the payment, and
// the pending balance follows: charges less fees, less refunds; holds,
// cancels, declines and uncleared or dishonoured debits leave it alone.
func TestMovementsArePosted(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		want := int64(0)
		// 10.50 + the default credit surcharge (0.13) = 10.63; fee 1.75% + 0.30 = 0.49.
		p := f.card("4111111111111111", 1050, false, true)
		if p.Status != paylink.StatusApproved || p.Total != 1063 {
			t.Fatalf("purchase: got %s %d, want APPROVED 1063", p.Status, p.Total)
		}
		want += 1063 - 49
		if got := f.balance().Pending; got != want {
			t.Fatalf("after a purchase: pending got %d, want %d", got, want)
		}
		f.refund(p.Reference, 300)
		want -= 300
		hold := f.card("4111111111111111", 2000, true, false)
		if got := f.balance().Pending; got != want {
			t.Fatalf("a hold moved the balance: pending got %d, want %d", got, want)
		}
		captured, err := f.e.Service.Capture(f.ctx, f.m.Merchant, hold.Reference, paylink.CaptureRequest{
			CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token(), Amount: 1200, Currency: "AUD"})
		if err != nil || captured.Status != paylink.StatusApproved {
			t.Fatalf("capture: %v %+v", err, captured)
		}
		want += 1200 - 51 // 1.75% of 12.00 + 0.30 = 0.51
		cancelled := f.card("4111111111111111", 900, true, false)
		if _, err := f.e.Service.Cancel(f.ctx, f.m.Merchant, cancelled.Reference, paylink.CancelRequest{
			CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token()}); err != nil {
			t.Fatal(err)
		}
		if d := f.card("4000000000000002", 500, false, false); d.Status != paylink.StatusDeclined {
			t.Fatalf("decline card: got %s", d.Status)
		}
		cleared := f.debit("0001", 10000)
		if d := f.debit(processor.AccountInsufficientFunds, 700); d.Status != paylink.StatusPending {
			t.Fatalf("debit: got %s, want PENDING", d.Status)
		}
		if got := f.balance().Pending; got != want {
			t.Fatalf("uncleared debits moved the balance: pending got %d, want %d", got, want)
		}
		f.e.Clock.Advance(f.e.Service.Config().DirectDebitClearing + time.Minute)
		if _, err := f.e.Service.ClearDirectDebits(f.ctx); err != nil {
			t.Fatal(err)
		}
		want += 10000 - cleared.Details.DirectDebitFee
		if _, _, err := f.e.Service.RefundDirectDebit(f.ctx, f.m.Merchant, cleared.Reference, paylink.RefundRequest{
			CompanyToken: f.m.Creds.CompanyToken, TransactionToken: f.token(), Customer: customer, Amount: 2500, Currency: "AUD"}); err != nil {
			t.Fatal(err)
		}
		want -= 2500
		b := f.balance()
		if b.Pending != want || b.Available != 0 || b.PaidOut != 0 {
			t.Errorf("balance: got %+v, want pending %d", b, want)
		}
		if d := f.verify(); len(d) != 0 {
			t.Errorf("verify: got %v, want no discrepancy", d)
		}
	})
}

// Verification finds a posting that does not balance, a posting with no
// payment behind it, balance transactions that disagree with the
// balances, and a payout without its posting.
func TestVerifyFindsDiscrepancies(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		declined := f.card("4000000000000002", 500, false, false)
		approved := f.card("4111111111111111", 1000, false, false)
		if d := f.verify(); len(d) != 0 {
			t.Fatalf("before tampering: got %v, want none", d)
		}
		post := func(p *paylink.Posting) {
			p.MerchantID, p.Currency, p.CreatedAt = f.m.ID, "AUD", f.e.Clock.Now()
			if err := f.e.Store.Update(f.ctx, func(tx paylink.Tx) error { return tx.AddPosting(p) }); err != nil {
				t.Fatal(err)
			}
		}
		post(&paylink.Posting{ID: "bt_x1", Key: "charge:" + declined.Reference, Kind: paylink.PostingCharge, Reference: declined.Reference,
			Amount: 500, Net: 500, Lines: []paylink.LedgerLine{{Account: paylink.AccountAcquirerReceivable, Amount: 500}, {Account: paylink.AccountMerchantPending, Amount: -500}}})
		post(&paylink.Posting{ID: "bt_x2", Key: "refund:rf_x", Kind: paylink.PostingRefund, Reference: approved.Reference, RefundReference: "rf_x",
			Lines: []paylink.LedgerLine{{Account: paylink.AccountMerchantPending, Amount: 100}}})
		orphan := &paylink.Payout{ID: "po_orphan", MerchantID: f.m.ID, Currency: "AUD", Amount: 100, CreatedAt: f.e.Clock.Now()}
		if err := f.e.Store.Update(f.ctx, func(tx paylink.Tx) error { return tx.CreatePayout(orphan) }); err != nil {
			t.Fatal(err)
		}
		found := map[string]int{}
		for _, d := range f.verify() {
			found[d.Reference]++
		}
		if found[declined.Reference] != 1 || found[approved.Reference] != 3 || found[f.m.ID+"/AUD"] != 1 || found["po_orphan"] != 1 {
			t.Errorf("got discrepancies %v, want the orphan charge, the unbalanced orphan refund three times (unbalanced, nothing behind it, a pending line that is not its net), the balance and the payout without a posting", found)
		}
	})
}

// TestVerifyFindsOrphanLines: on PostgreSQL ledger lines carry no foreign
// key to their posting (migration 0021), so `ledger verify` checks it: a
// line naming a posting that does not exist is reported, and a sound
// ledger has nothing to report. (SQLite keeps the key and refuses such a
// line.)
func TestVerifyFindsOrphanLines(t *testing.T) {
	f := newFlow(t, pg.Database(t))
	f.card("4111111111111111", 1050, false, true)
	if d := f.verify(); len(d) != 0 {
		t.Fatalf("a sound ledger: got %+v, want nothing", d)
	}
	_, err := f.e.Store.DB().Exec(`INSERT INTO ledger_lines (posting_id, line_no, merchant_id, account, currency, amount, fee_code)
		VALUES ('bt_missing', 0, $1, 'merchant_pending', 'AUD', 100, '')`, f.m.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := f.verify()
	if len(d) != 1 || d[0].Reference != "bt_missing" {
		t.Errorf("got %+v, want the line without its posting reported", d)
	}
}

// TestVerifyFindsAPostingWithoutLines: on PostgreSQL ledger lines carry
// no foreign key to their posting (migration 0021), so a posting can lose
// its lines (a TRUNCATE skips the triggers), and on either engine a
// posting written by hand through the store can have none. `ledger
// verify` reports it once and goes on, rather than stopping at it.
func TestVerifyFindsAPostingWithoutLines(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		sound := f.card("4111111111111111", 1050, false, true)
		stray := *sound
		stray.Reference = sound.Reference + "x"
		err := f.e.Store.Update(f.ctx, func(tx paylink.Tx) error {
			if err := tx.CreateTransaction(&stray); err != nil {
				return err
			}
			return tx.AddPosting(&paylink.Posting{ID: "bt_nolines", Key: "charge:" + stray.Reference, Kind: paylink.PostingCharge,
				MerchantID: f.m.ID, Currency: "AUD", Reference: stray.Reference, CreatedAt: f.e.Clock.Now()})
		})
		if err != nil {
			t.Fatal(err)
		}
		d := f.verify()
		if len(d) != 1 || d[0].Reference != stray.Reference || !strings.Contains(d[0].Problem, "has no lines") {
			t.Errorf("got %+v, want the posting of %s reported once as having no lines", d, stray.Reference)
		}
	})
}

// TestVerifyFindsPaymentsOfNoMerchant: on PostgreSQL transactions and
// postings carry no foreign key to their merchant (migration 0023), so
// `ledger verify` checks it: a payment and its posting naming a merchant
// that does not exist are reported once, under that merchant's id. SQLite
// keeps the keys and refuses them, storing nothing.
func TestVerifyFindsPaymentsOfNoMerchant(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		sound := f.card("4111111111111111", 1050, false, true)
		if d := f.verify(); len(d) != 0 {
			t.Fatalf("a sound ledger: got %+v, want nothing", d)
		}
		stray := *sound
		stray.Reference, stray.MerchantID = sound.Reference+"x", "MGONE"
		p, err := paylink.TransactionPosting(&stray, paylink.StatusProcessing, paylink.PricingOf(f.m.Merchant))
		if err != nil {
			t.Fatal(err)
		}
		p.ID, p.CreatedAt = "bt_stray", stray.CreatedAt
		err = f.e.Store.Update(f.ctx, func(tx paylink.Tx) error {
			if err := tx.CreateTransaction(&stray); err != nil {
				return err
			}
			return tx.AddPosting(p)
		})
		d := f.verify()
		if f.e.Store.Engine() == sqlstore.SQLite {
			if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") || len(d) != 0 {
				t.Errorf("SQLite: got %v and %+v, want the write refused by the foreign key and nothing to report", err, d)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(d) != 1 || d[0].Reference != "MGONE" || !strings.Contains(d[0].Problem, "2 postings and payments") {
			t.Errorf("got %+v, want the payment and posting of merchant MGONE reported once", d)
		}
	})
}

// TestVerifyFindsTotalsThatDisagree: the totals kept beside the journal
// are checked against what they sum: a payment's refunded total against
// its refunds, a batch's net against the balance transactions it covers,
// a payout's amount against its batches. Each, changed by hand, is
// reported under its own reference.
func TestVerifyFindsTotalsThatDisagree(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		sold := f.card("4111111111111111", 1050, false, true)
		f.refund(sold.Reference, 300)
		f.e.Clock.Advance(time.Minute)
		res, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now())
		if err != nil || len(res.Batches) != 1 || len(res.Payouts) != 1 {
			t.Fatalf("settle: got %+v, %v; want one batch and one payout", res, err)
		}
		if d := f.verify(); len(d) != 0 {
			t.Fatalf("a sound ledger: got %+v, want nothing", d)
		}
		batch, payout := res.Batches[0].ID, res.Payouts[0].ID
		db := f.e.WriterDB(t)
		for q, arg := range map[string]string{
			`UPDATE transactions SET refunded = refunded + 1 WHERE reference = $1`: sold.Reference,
			`UPDATE settlement_batches SET net = net + 1 WHERE id = $1`:            batch,
			`UPDATE payouts SET amount = amount + 2 WHERE id = $1`:                 payout,
		} {
			if _, err := db.Exec(q, arg); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		want := map[string]string{
			sold.Reference: "refunds (all but FAILED ones) hold 300",
			batch:          "the balance transactions it covers net",
			payout:         "the batches it paid out net",
		}
		found := map[string]bool{}
		for _, d := range f.verify() {
			if w, ok := want[d.Reference]; ok && strings.Contains(d.Problem, w) {
				found[d.Reference] = true
			}
		}
		for ref, w := range want {
			if !found[ref] {
				t.Errorf("%s: got %+v, want a discrepancy saying %q", ref, f.verify(), w)
			}
		}
	})
}

// TestVerifyFindsRecordsMovedToAnotherOwner: a payment, refund,
// settlement batch or payout changed by hand to another merchant,
// currency or day (or a batch to another count) no longer agrees with
// its posting or with the rows it covers, and each is reported (ledger
// sweep: only amounts were compared, so a payment moved to another
// merchant, who could then refund it, was reported sound).
func TestVerifyFindsRecordsMovedToAnotherOwner(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		other := f.e.Onboard()
		a, b, c := f.card("4111111111111111", 1000, false, false), f.card("4111111111111111", 2000, false, false), f.card("4111111111111111", 1500, false, false)
		f.refund(a.Reference, 300)
		rb, rc := f.refund(b.Reference, 400), f.refund(c.Reference, 200)
		f.e.Clock.Advance(48 * time.Hour)
		f.card("4111111111111111", 700, false, false)
		f.e.Clock.Advance(time.Hour)
		res, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now())
		if err != nil || len(res.Batches) != 2 || len(res.Payouts) != 1 {
			t.Fatalf("settle: got %+v, %v; want two batches and one payout", res, err)
		}
		if d := f.verify(); len(d) != 0 {
			t.Fatalf("a sound ledger: got %+v, want nothing", d)
		}
		first, second, payout := res.Batches[0].ID, res.Batches[1].ID, res.Payouts[0].ID
		db := f.e.WriterDB(t)
		for _, q := range []struct{ sql, arg string }{
			{`UPDATE transactions SET currency = 'NZD' WHERE reference = $1`, a.Reference},
			{`UPDATE transactions SET merchant_id = '` + other.ID + `' WHERE reference = $1`, b.Reference},
			{`UPDATE refunds SET currency = 'NZD' WHERE reference = $1`, rb.Reference},
			{`UPDATE refunds SET merchant_id = '` + other.ID + `' WHERE reference = $1`, rc.Reference},
			{`UPDATE settlement_batches SET day = '2001-01-01', count = count + 3 WHERE id = $1`, first},
			{`UPDATE settlement_batches SET merchant_id = '` + other.ID + `' WHERE id = $1`, second},
			{`UPDATE payouts SET currency = 'NZD' WHERE id = $1`, payout},
		} {
			if _, err := db.Exec(q.sql, q.arg); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
		found := f.verify()
		for _, w := range []struct{ ref, says string }{
			{a.Reference, "charge posting is " + f.m.ID + " AUD's, the record " + f.m.ID + " NZD's"},
			{b.Reference, "the record " + other.ID + " AUD's"},
			{rb.Reference, "refund posting is " + f.m.ID + " AUD's, the record " + f.m.ID + " NZD's"},
			{rc.Reference, "the record " + other.ID + " AUD's"},
			{first, "2001-01-01's, 6 of the balance transactions it covers are"},
			{first, "counts 9 balance transactions, it covers 6"},
			{second, "settlement batch is " + other.ID + " AUD"},
			{payout, "payout is " + f.m.ID + " NZD's, its posting " + f.m.ID + " AUD's"},
		} {
			if !slices.ContainsFunc(found, func(d paylink.Discrepancy) bool {
				return d.Reference == w.ref && strings.Contains(d.Problem, w.says)
			}) {
				t.Errorf("%s: want a discrepancy saying %q; got %+v", w.ref, w.says, found)
			}
		}
	})
}

// TestVerifyFindsAReplacedLine: SQLite's INSERT OR REPLACE rewrites a row
// without the DELETE trigger that guards the journal, and the schema does
// not refuse it for ledger rows (a trigger on every insert costs about 20
// µs a purchase; docs/ledger.md): `ledger verify` reports the rewritten
// line, whose posting no longer balances.
func TestVerifyFindsAReplacedLine(t *testing.T) {
	f := newFlow(t, "")
	sold := f.card("4111111111111111", 1050, false, true)
	if d := f.verify(); len(d) != 0 {
		t.Fatalf("a sound ledger: got %+v, want nothing", d)
	}
	raw := f.e.WriterDB(t) // a hand-written statement, as an operator's would be
	_, err := raw.Exec(`INSERT OR REPLACE INTO ledger_lines (posting_id, line_no, merchant_id, account, currency, amount, fee_code)
		SELECT posting_id, line_no, merchant_id, account, currency, amount + 100, fee_code FROM ledger_lines
		WHERE posting_id = (SELECT id FROM ledger_postings WHERE reference = $1) AND line_no = 0`, sold.Reference)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range f.verify() {
		found = found || d.Reference == sold.Reference
	}
	if !found {
		t.Errorf("verify after a line was replaced: got %+v, want %s reported", f.verify(), sold.Reference)
	}
}

// TestVerifyFindsLinesAddedToAPosting: balanced lines added to a posting
// by hand (a plain INSERT, which the journal's append-only triggers let
// through on both engines) kept every posting balanced and the sum of
// pending and available right, so verify was silent (ledger sweep):
// lines moving 50.00 from pending to available made the next payout pay
// out 50.00 that no batch settled, and lines in another currency or of
// another merchant moved balances verify never read. Each is reported
// under its payment, and the payout refuses to pay what the batches do
// not account for.
func TestVerifyFindsLinesAddedToAPosting(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		other := f.e.Onboard()
		moved, yen, elsewhere := f.card("4111111111111111", 10000, false, false),
			f.card("4111111111111111", 2000, false, false), f.card("4111111111111111", 3000, false, false)
		db := f.e.WriterDB(t)
		for _, add := range []struct {
			ref, merchant, currency string
			lines                   [2]struct{ account, amount string }
		}{
			{moved.Reference, f.m.ID, "AUD", [2]struct{ account, amount string }{{"merchant_available", "-5000"}, {"merchant_pending", "5000"}}},
			{yen.Reference, f.m.ID, "JPY", [2]struct{ account, amount string }{{"acquirer_receivable", "700"}, {"fee_revenue", "-700"}}},
			{elsewhere.Reference, other.ID, "AUD", [2]struct{ account, amount string }{{"acquirer_receivable", "300"}, {"fee_revenue", "-300"}}},
		} {
			_, err := db.Exec(`INSERT INTO ledger_lines (posting_id, line_no, merchant_id, account, currency, amount, fee_code)
				SELECT id, 10, $2, '`+add.lines[0].account+`', $3, `+add.lines[0].amount+`, '' FROM ledger_postings WHERE reference = $1
				UNION ALL SELECT id, 11, $2, '`+add.lines[1].account+`', $3, `+add.lines[1].amount+`, '' FROM ledger_postings WHERE reference = $1`,
				add.ref, add.merchant, add.currency)
			if err != nil {
				t.Fatal(err)
			}
		}
		found := f.verify()
		for _, w := range []struct{ ref, says string }{
			{moved.Reference, "adds 4795 to pending and 5000 to available, its net is 9795"},
			{yen.Reference, "has a line of another merchant or currency than its own"},
			{elsewhere.Reference, "has a line of another merchant or currency than its own"},
		} {
			if !slices.ContainsFunc(found, func(d paylink.Discrepancy) bool {
				return d.Reference == w.ref && strings.Contains(d.Problem, w.says)
			}) {
				t.Errorf("%s: want a discrepancy saying %q; got %+v", w.ref, w.says, found)
			}
		}
		f.e.Clock.Advance(time.Hour)
		res, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now())
		if err == nil || !strings.Contains(err.Error(), "is not the net of the batches not paid out yet") || len(res.Payouts) != 0 {
			t.Errorf("settle: got %+v, %v; want no payout and the error naming the difference", res, err)
		}
	})
}

// Verification reads one snapshot: run while payments and refunds are
// made, it reports nothing. Read page by page, each in a read of its
// own, it reported a payment approved after the postings were read as
// one without its postings, and a refund reserved after its payment was
// read as a refunded total that disagrees.
func TestVerifyWhilePaymentsAreMade(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		var done atomic.Bool
		errs := make(chan error, 1)
		go func() { errs <- f.traffic(&done) }()
		for i := 0; i < 25; i++ {
			if d := f.verify(); len(d) != 0 {
				t.Errorf("verify %d while payments are made: got %v, want no discrepancy", i, d)
				break
			}
		}
		done.Store(true)
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		if d := f.verify(); len(d) != 0 {
			t.Errorf("verify after: got %v, want no discrepancy", d)
		}
	})
}

// traffic makes surcharged purchases and refunds part of each until done.
func (f *flow) traffic(done *atomic.Bool) error {
	m, creds := f.m.Merchant, f.m.Creds
	for n := 0; !done.Load(); n++ {
		tok, err := f.e.Service.IssueTransactionToken(f.ctx, m, creds.CompanyToken)
		if err != nil {
			return err
		}
		p, err := f.e.Service.Purchase(f.ctx, m, paylink.PurchaseRequest{
			CompanyToken: creds.CompanyToken, TransactionToken: tok, Customer: customer,
			Card:   &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: f.e.Clock.Now().Year() + 2, CVC: "123", HolderName: "Jo"},
			Amount: 1000 + int64(n), Currency: "AUD", ApplySurcharge: true})
		if err != nil {
			return fmt.Errorf("purchase %d: %w", n, err)
		}
		if tok, err = f.e.Service.IssueTransactionToken(f.ctx, m, creds.CompanyToken); err != nil {
			return err
		}
		if _, _, err := f.e.Service.Refund(f.ctx, m, p.Reference, paylink.RefundRequest{
			CompanyToken: creds.CompanyToken, TransactionToken: tok, Customer: customer, Amount: 300, Currency: "AUD"}); err != nil {
			return fmt.Errorf("refund %d: %w", n, err)
		}
	}
	return nil
}
