package moneytest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// The worked example of docs/ledger.md, posting by posting: a 10.50 AUD
// surcharged Visa purchase, 3.00 of it refunded, settled and paid out.
func TestLedgerWorkedExample(t *testing.T) {
	engines(t, func(t *testing.T, dsn string) {
		f := newFlow(t, dsn)
		p := f.card("4111111111111111", 1050, false, true)
		r := f.refund(p.Reference, 300)
		f.e.Clock.Advance(time.Second)
		res, err := f.e.Service.Settle(f.ctx, f.e.Clock.Now())
		if err != nil || len(res.Batches) != 1 || len(res.Payouts) != 1 {
			t.Fatalf("settle: %+v, %v", res, err)
		}
		batch, payout := res.Batches[0].ID, res.Payouts[0].ID
		want := map[string]string{
			"charge:" + p.Reference: "acquirer_receivable 10.63 / fee_revenue -0.49 SERVICE_BLENDED_FEE / merchant_pending -10.14",
			"refund:" + r.Reference: "merchant_pending 3.00 / acquirer_receivable -3.00",
			"settlement:" + batch:   "settlement_cash 7.63 / acquirer_receivable -7.63 / merchant_pending 7.14 / merchant_available -7.14",
			"payout:" + payout:      "merchant_available 7.14 / merchant_paid_out -7.14",
		}
		got := map[string]string{}
		for _, ref := range []string{p.Reference, batch, payout} {
			var ps []*paylink.Posting
			err := f.e.Store.View(f.ctx, func(tx paylink.Tx) error {
				var err error
				ps, err = tx.PostingsOf(ref)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, post := range ps {
				got[post.Key] = describe(post)
			}
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: got %q, want %q", k, got[k], w)
			}
		}
		if b := f.balance(); b.Pending != 0 || b.Available != 0 || b.PaidOut != 714 {
			t.Errorf("balance: got %+v, want paid out 7.14", b)
		}
	})
}

// describe writes a posting's lines as "account amount [fee code]".
func describe(p *paylink.Posting) string {
	cur, _ := paylink.LookupCurrency(p.Currency)
	var parts []string
	for _, l := range p.Lines {
		s := fmt.Sprintf("%s %s", l.Account, paylink.FormatAmount(l.Amount, cur))
		if l.FeeCode != "" {
			s += " " + l.FeeCode
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " / ")
}
