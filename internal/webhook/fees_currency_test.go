package webhook_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestFixedAmountsPerCurrency: a merchant whose pricing has its own fixed
// amounts for JPY is charged them on a JPY purchase, in the webhook's fee
// detail and in the ledger alike, while its KWD purchase keeps the
// default fixed amounts (0.30 counted in dinars). Priced by hand:
// 1.75% of 1000 yen + 30 yen = 47.50 yen (posted as 48) and the 5 yen
// transaction fee; 1.75% of 10.000 KWD + 0.300 = 0.475 KWD.
func TestFixedAmountsPerCurrency(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	rc := newReceiver(t, 200)
	m := onboard(env, rc.URL+"/hook", func(n *paylink.NewMerchant) {
		p := paylink.DefaultPricing()
		p.FixedIn = map[string]paylink.FixedFees{"JPY": {Blended: 30_000_000, Amex: 30_000_000, ServiceTrans: 5_000_000}}
		n.Settings.Pricing = &p
	})
	tests := []struct {
		currency, amount string
		lines            string
		fee, net         int64
	}{
		{"JPY", "1000", "SERVICE_BLENDED_FEE 47.50 JPY, SERVICE_TRANS_FEE 5.00 JPY, ", 53, 947},
		{"KWD", "10.000", "SERVICE_BLENDED_FEE 0.475 KWD, ", 475, 9525},
	}
	for _, tt := range tests {
		t.Run(tt.currency, func(t *testing.T) {
			before := len(rc.requests())
			ref := purchase(t, env, m, "4111111111111111", tt.amount, func(b map[string]any) { apitest.Set(b, "purchase.currency", tt.currency) })
			env.WaitWebhooks()
			got := rc.requests()
			if len(got) != before+1 {
				t.Fatalf("got %d new webhooks, want 1", len(got)-before)
			}
			if lines := feeLines(decode(t, got[before].Body)); lines != tt.lines {
				t.Errorf("fee lines: got %q, want %q", lines, tt.lines)
			}
			var posts []*paylink.Posting
			err := env.Store.View(context.Background(), func(tx paylink.Tx) error {
				var err error
				posts, err = tx.PostingsOf(ref)
				return err
			})
			if err != nil || len(posts) != 1 || posts[0].Fee != tt.fee || posts[0].Net != tt.net {
				t.Fatalf("postings: got %+v, %v; want one with fee %d and net %d", posts, err, tt.fee, tt.net)
			}
		})
	}
}

// feeLines prints a webhook's fee lines as "CODE amount currency, ...".
func feeLines(w map[string]any) string {
	var out string
	detail, _ := w["fee_detail"].(map[string]any)
	lines, _ := detail["fee_lines"].([]any)
	for _, l := range lines {
		line, _ := l.(map[string]any)
		out += fmt.Sprintf("%v %v %v, ", line["fee_code"], line["fee_amount"], line["currency"])
	}
	return out
}
