package moneytest

import (
	"context"
	"github.com/paylink/paylink/internal/sqlstore"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// Settlement moves every balance transaction before the cut-off from
// pending to available in one batch per day, a payout takes the available
// balance to paid out, and neither a second run nor racing runs settle or
// pay anything twice.
func TestSettleAndPayOut(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		p := f.card("4111111111111111", 10000, false, false) // fee 2.05
		f.refund(p.Reference, 1000)
		f.e.Clock.Advance(24 * time.Hour)
		f.card("5555555555554444", 5000, false, false) // next day; fee 1.18
		late := f.e.Clock.Now()
		f.e.Clock.Advance(time.Hour)
		f.card("4111111111111111", 2000, false, false) // after the cut-off; fee 0.65
		f.e.Clock.Advance(time.Second)                 // the payout is newer than every payment
		before := f.balance()
		if before.Pending != 10000-205-1000+5000-118+2000-65 {
			t.Fatalf("pending before settlement: got %d", before.Pending)
		}

		var wg sync.WaitGroup
		results := make([]*paylink.SettleResult, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := f.e.Service.Settle(f.ctx, late.Add(time.Second))
				if err != nil {
					t.Errorf("settle: %v", err)
				}
				results[i] = res
			}()
		}
		wg.Wait()
		var batches, payouts int
		var paid int64
		for _, r := range results {
			batches += len(r.Batches)
			payouts += len(r.Payouts)
			for _, p := range r.Payouts {
				paid += p.Amount
			}
		}
		want := int64(10000 - 205 - 1000 + 5000 - 118)
		if batches != 2 || payouts != 1 || paid != want {
			t.Fatalf("4 racing settlements: got %d batches, %d payouts of %d; want 2 batches (two days), 1 payout of %d", batches, payouts, paid, want)
		}
		b := f.balance()
		if b.Pending != 2000-65 || b.Available != 0 || b.PaidOut != want {
			t.Errorf("balance after settlement: got %+v", b)
		}
		again, err := f.e.Service.Settle(f.ctx, late.Add(time.Second))
		if err != nil || len(again.Batches) != 0 || len(again.Payouts) != 0 {
			t.Errorf("second run: got %+v, %v; want nothing", again, err)
		}
		bts, _, err := f.e.Service.BalanceTransactions(f.ctx, f.m.Merchant, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var net int64
		settled := 0
		for _, bt := range bts {
			net += bt.Net
			if bt.SettlementBatch != "" {
				settled++
			}
		}
		if len(bts) != 5 || settled != 3 || net != b.Pending+b.Available {
			t.Errorf("balance transactions: got %d (%d settled) net %d; want 5 (3 settled) net %d", len(bts), settled, net, b.Pending+b.Available)
		}
		if bts[0].Kind != paylink.PostingPayout || bts[0].Amount != -want {
			t.Errorf("newest balance transaction: got %s %d, want the payout -%d", bts[0].Kind, bts[0].Amount, want)
		}
		pos, _, err := f.e.Service.Payouts(f.ctx, f.m.Merchant, "", 10)
		if err != nil || len(pos) != 1 || len(pos[0].BatchIDs) != 2 {
			t.Errorf("payouts: got %+v, %v; want one covering two batches", pos, err)
		}
		if d := f.verify(); len(d) != 0 {
			t.Errorf("verify: got %v", d)
		}
	})
}

// TestADayThatNetsToNothingSettles: a merchant whose card fee is billable
// (invoiced, not deducted) sells and refunds in full on one day, so the
// day's batch nets to zero. It settles (a posting with the pending and
// available pair at zero), the merchant's later days settle and pay out,
// and a merchant settled after it is not held back. Before, the batch's
// posting had no lines, was refused, and every run stopped at it.
func TestADayThatNetsToNothingSettles(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		e := apitest.Start(t, apitest.Options{DSN: dsn})
		billed := &flow{t: t, e: e, ctx: context.Background(), m: e.Onboard(func(n *paylink.NewMerchant) {
			p := paylink.DefaultPricing()
			p.Billable = []string{paylink.FeeServiceBlended}
			n.Settings.Pricing = &p
		})}
		other := &flow{t: t, e: e, ctx: context.Background(), m: e.Onboard()}
		sale := billed.card("4111111111111111", 1000, false, false)
		billed.refund(sale.Reference, 1000)
		other.card("4111111111111111", 1000, false, false) // fee 0.48
		e.Clock.Advance(time.Minute)
		res, err := e.Service.Settle(billed.ctx, e.Clock.Now())
		if err != nil || len(res.Batches) != 2 || len(res.Payouts) != 1 || res.Payouts[0].Amount != 1000-48 {
			t.Fatalf("settle: got %+v, %v; want two batches (one at zero) and the other merchant's payout of 9.52", res, err)
		}
		if b := billed.balance(); b.Pending != 0 || b.Available != 0 || b.PaidOut != 0 {
			t.Errorf("balance after the zero day: got %+v, want nothing anywhere", b)
		}
		e.Clock.Advance(24 * time.Hour)
		billed.card("4111111111111111", 5000, false, false)
		e.Clock.Advance(time.Minute)
		if res, err := e.Service.Settle(billed.ctx, e.Clock.Now()); err != nil || len(res.Payouts) != 1 || res.Payouts[0].Amount != 5000 {
			t.Fatalf("the next day: got %+v, %v; want a payout of the 50.00 sale (its fee billed, not deducted)", res, err)
		}
		if d := billed.verify(); len(d) != 0 {
			t.Errorf("verify: got %v", d)
		}
	})
}

// The scheduled settlement settles what was made before the last daily
// cut-off and leaves what came after it pending.
func TestSettleDueAtTheDailyCutoff(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		start := time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC)
		e := apitest.Start(t, apitest.Options{DSN: dsn, Clock: apitest.NewClock(start),
			Config: paylink.Config{SettlementCutoff: 8 * time.Hour}})
		f := &flow{t: t, e: e, m: e.Onboard(), ctx: context.Background()}
		f.card("4111111111111111", 1000, false, false) // 06:00, before the 08:00 cut-off
		e.Clock.Advance(3 * time.Hour)
		f.card("4111111111111111", 2000, false, false) // 09:00, after it
		res, err := e.Service.SettleDue(f.ctx)
		if err != nil || len(res.Batches) != 1 || res.Batches[0].Count != 1 || len(res.Payouts) != 1 || res.Payouts[0].Amount != 1000-48 {
			t.Fatalf("settle due at 09:00: got %+v, %v; want the 06:00 payment settled and paid out (9.52)", res, err)
		}
		if b := f.balance(); b.Pending != 2000-65 || b.PaidOut != 1000-48 {
			t.Errorf("balance: got %+v, want the 09:00 payment still pending", b)
		}
	})
}

// TestSettleDueWaitsOutTheGrace: right after the cut-off the scheduled
// settlement leaves the ending day alone, since a payment stamped before
// the cut-off may still be committing (it would land in a second batch
// and payout of that day); SettlementGrace later it settles the day.
func TestSettleDueWaitsOutTheGrace(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		cutoff := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
		e := apitest.Start(t, apitest.Options{DSN: dsn, Clock: apitest.NewClock(cutoff.Add(-time.Second)),
			Config: paylink.Config{SettlementCutoff: 8 * time.Hour}})
		f := &flow{t: t, e: e, m: e.Onboard(), ctx: context.Background()}
		f.card("4111111111111111", 1000, false, false) // 07:59:59
		e.Clock.Advance(time.Second + paylink.SettlementGrace - time.Second)
		if res, err := e.Service.SettleDue(f.ctx); err != nil || len(res.Batches) != 0 {
			t.Fatalf("settle due within the grace: got %+v, %v; want nothing settled yet", res, err)
		}
		e.Clock.Advance(2 * time.Second)
		if res, err := e.Service.SettleDue(f.ctx); err != nil || len(res.Batches) != 1 || len(res.Payouts) != 1 || res.Payouts[0].Amount != 1000-48 {
			t.Fatalf("settle due after the grace: got %+v, %v; want the 07:59:59 payment settled and paid out (9.52)", res, err)
		}
	})
}

// TestSettleReportsOnlyWhatCommitted: an account whose settlement fails
// (here its payout's lines, refused by a trigger, on PostgreSQL only at
// the commit that carries the held-back writes) is rolled back and named
// in the error, and the result lists only the other merchant's committed
// batch and payout.
func TestSettleReportsOnlyWhatCommitted(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		other := &flow{t: t, e: f.e, m: f.e.Onboard(), ctx: f.ctx}
		f.card("4111111111111111", 1000, false, false)
		other.card("4111111111111111", 1000, false, false)
		refusePayoutLines(t, f.e, f.m.ID)
		f.e.Clock.Advance(time.Minute)
		res, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now())
		if err == nil || !strings.Contains(err.Error(), f.m.ID) || strings.Contains(err.Error(), other.m.ID) {
			t.Errorf("settle: got %v, want an error naming %s alone", err, f.m.ID)
		}
		if len(res.Batches) != 1 || res.Batches[0].MerchantID != other.m.ID || len(res.Payouts) != 1 || res.Payouts[0].MerchantID != other.m.ID {
			t.Errorf("result: got %d batches and %d payouts, want the other merchant's one of each", len(res.Batches), len(res.Payouts))
		}
		if ps, _, err := f.e.Service.Payouts(f.ctx, f.m.Merchant, "", 10); err != nil || len(ps) != 0 {
			t.Errorf("payouts of the refused merchant: got %d, %v; want none", len(ps), err)
		}
	})
}

// refusePayoutLines makes the database refuse merchant mid's payout
// lines, with a statement of the operator's own.
func refusePayoutLines(t *testing.T, e *apitest.Env, mid string) {
	t.Helper()
	stmts := []string{`CREATE FUNCTION refuse_payout() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
		IF NEW.account = 'merchant_paid_out' AND NEW.merchant_id = '` + mid + `' THEN RAISE EXCEPTION 'bank file rejected'; END IF;
		RETURN NEW; END $$`,
		`CREATE TRIGGER refuse_payout BEFORE INSERT ON ledger_lines FOR EACH ROW EXECUTE FUNCTION refuse_payout()`}
	if e.Store.Engine() == sqlstore.SQLite {
		stmts = []string{`CREATE TRIGGER refuse_payout BEFORE INSERT ON ledger_lines
			WHEN NEW.account = 'merchant_paid_out' AND NEW.merchant_id = '` + mid + `'
			BEGIN SELECT RAISE(ABORT, 'bank file rejected'); END`}
	}
	db := e.WriterDB(t)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestSettleCutShortStops: a run whose deadline passes (the job's
// timeout, Ctrl-C) finishes the account it was on, reports it settled,
// and stops there, saying how many it did not try, rather than failing
// each of them at once (and counting each as a database outage). (The
// CLI sweep: the account under way was cancelled in its COMMIT, reported
// failed though it had committed, and its payout never printed.)
func TestSettleCutShortStops(t *testing.T) {
	f := newFlow(t, pg.Database(t))
	f.card("4111111111111111", 1000, false, false)
	for range 2 {
		(&flow{t: t, e: f.e, m: f.e.Onboard(), ctx: f.ctx}).card("4111111111111111", 1000, false, false)
	}
	if _, err := f.e.Store.DB().Exec(`CREATE FUNCTION slow_batch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$;
		CREATE TRIGGER slow_batch BEFORE INSERT ON settlement_batches FOR EACH ROW EXECUTE FUNCTION slow_batch()`); err != nil {
		t.Fatal(err)
	}
	f.e.Clock.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(f.ctx, time.Second)
	defer cancel()
	res, err := f.e.Service.Settle(ctx, f.e.Clock.Now())
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "2 more accounts not tried") {
		t.Errorf("a run cut short: got %v, want one error saying 2 more accounts were not tried", err)
	}
	if res == nil || len(res.Batches) != 1 || len(res.Payouts) != 1 {
		t.Fatalf("a run cut short: got %+v, want the account under way settled and reported", res)
	}
	var batches int
	if err := f.e.Store.DB().QueryRow(`SELECT COUNT(*) FROM settlement_batches`).Scan(&batches); err != nil || batches != 1 {
		t.Errorf("batches committed: got %d (%v), want the one reported", batches, err)
	}
}

func TestLastCutoff(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 11, 23, h, m, 0, 0, time.UTC) }
	tests := []struct {
		now    time.Time
		cutoff time.Duration
		want   time.Time
	}{
		{day(10, 0), 0, day(0, 0)},
		{day(10, 0), 8 * time.Hour, day(8, 0)},
		{day(7, 59), 8 * time.Hour, day(8, 0).AddDate(0, 0, -1)},
		{day(8, 0), 8 * time.Hour, day(8, 0)},
		{day(23, 0).In(time.FixedZone("AEDT", 11*3600)), 22 * time.Hour, day(22, 0)},
	}
	for _, tc := range tests {
		if got := paylink.LastCutoff(tc.now, tc.cutoff); !got.Equal(tc.want) {
			t.Errorf("LastCutoff(%v, %v): got %v, want %v", tc.now, tc.cutoff, got, tc.want)
		}
	}
}

// TestReportHasAColumnPerDeductedFeeCode: the settlement report has one
// column per fee code deducted from a row; a billable fee (invoiced, not
// deducted) has none, as its column would only ever read 0.00.
func TestReportHasAColumnPerDeductedFeeCode(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		e := apitest.Start(t, apitest.Options{DSN: dsn})
		pr := paylink.DefaultPricing()
		pr.ServiceProtectPercent = 1000 // 0.1%, deducted
		pr.ServiceTransFee = 100_000    // 0.10, billable
		pr.Billable = []string{paylink.FeeServiceTrans}
		f := &flow{t: t, e: e, m: e.Onboard(func(n *paylink.NewMerchant) { n.Settings.Pricing = &pr }), ctx: context.Background()}
		f.card("4111111111111111", 10000, false, false)
		f.e.Clock.Advance(time.Second)
		if _, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		rep, err := f.e.Service.SettlementReport(f.ctx, f.m.Merchant, f.e.Clock.Now().UTC().Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{paylink.FeeServiceBlended, paylink.FeeServiceProtect}
		if !slices.Equal(rep.FeeCodes, want) || len(rep.Rows) != 1 || len(rep.Rows[0].Fees) != 2 {
			t.Errorf("fee columns %v, rows %+v; want columns %v and one row with those two fees", rep.FeeCodes, rep.Rows, want)
		}
	})
}
