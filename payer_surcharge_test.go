package paylink_test

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// TestDirectDebitFeeIsTheSurchargeEverywhere: a direct debit fee passed
// on to the payer is the surcharge of the settlement report and of the
// payments export, as it is of the webhook, so that amount plus
// surcharge is what the payer paid in each.
func TestDirectDebitFeeIsTheSurchargeEverywhere(t *testing.T) {
	engines(t, func(t *testing.T, r *rig) {
		debit, err := r.svc.DirectDebit(ctx, r.m.Merchant, paylink.DirectDebitRequest{CompanyToken: r.m.Creds.CompanyToken,
			TransactionToken: r.token(), Amount: 94000, Currency: "AUD", ApplyFee: true,
			Account:  paylink.BankAccount{BSB: "062-000", Number: "12345678", HolderName: "Jo Citizen"},
			Customer: paylink.Customer{IPAddress: "203.0.113.7", Timezone: "UTC"}})
		if err != nil || debit.Fee == 0 {
			t.Fatalf("direct debit: %+v, %v; want one with its fee passed on", debit, err)
		}
		r.env.Clock.Advance(r.svc.Config().DirectDebitClearing + time.Second)
		if _, err := r.svc.ClearDirectDebits(ctx); err != nil {
			t.Fatal(err)
		}
		r.env.Clock.Advance(time.Second)
		if _, err := r.svc.Settle(ctx, r.env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		rep, err := r.svc.SettlementReport(ctx, r.m.Merchant, r.env.Clock.Now().UTC().Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, row := range rep.Rows {
			if row.Reference == debit.Reference && row.Type == paylink.PostingDirectDebitClear {
				found = true
				if row.Gross != debit.Total || row.Surcharge != debit.Fee {
					t.Errorf("report row: gross %d surcharge %d, want %d and the fee %d", row.Gross, row.Surcharge, debit.Total, debit.Fee)
				}
			}
		}
		if !found {
			t.Fatalf("report: no charge row for %s in %+v", debit.Reference, rep.Rows)
		}
		var buf bytes.Buffer
		if err := r.svc.WritePaymentsCSV(ctx, &buf, r.m.Merchant, paylink.PaymentFilter{}); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("export: %v, %v", rows, err)
		}
		aud, _ := paylink.LookupCurrency("AUD")
		if rows[0][7] != "surcharge" || rows[1][7] != paylink.FormatAmount(debit.Fee, aud) || rows[1][8] != paylink.FormatAmount(debit.Total, aud) {
			t.Errorf("export: header %v row %v, want the fee %d as surcharge and the total %d", rows[0], rows[1], debit.Fee, debit.Total)
		}
	})
}
