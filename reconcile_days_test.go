package paylink_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
)

// TestRefundApprovedOnALaterDayReconciles: a refund asked for on one day
// whose answer was lost, approved by recovery on the next, is in the
// acquirer's file of the day it was asked for and in the ledger of the
// day it was approved. Its line matches its posting all the same (by
// reference, whatever the day): before, it was missing_in_ledger in that
// file and could never reconcile.
func TestRefundApprovedOnALaterDayReconciles(t *testing.T) {
	start := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	for name, dsn := range map[string]string{"sqlite": "", "postgres": pg.Database(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			env := apitest.Start(t, apitest.Options{DSN: dsn, Clock: apitest.NewClock(start),
				Config: paylink.Config{ProcessorTimeout: 50 * time.Millisecond}})
			m := env.Onboard()
			paid := env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "20.00"))
			ref := paid.Str("purchase.purchase_reference")
			env.Sandbox.SetSilent(true)
			rf := env.Post("/v5/purchase/"+ref+"/refund", m, map[string]any{
				"token":    map[string]any{"company_token": m.Creds.CompanyToken, "transaction_token": env.TransactionToken(m)},
				"customer": map[string]any{"ip_address": "203.0.113.7", "timezone": "UTC"},
				"refund":   map[string]any{"amount": "5", "currency": "AUD"},
			})
			if rf.Status != http.StatusOK || rf.Str("refund.status") != "PENDING" {
				t.Fatalf("refund with its answer lost: got %d %s, want 200 PENDING", rf.Status, rf.Raw)
			}
			env.Sandbox.SetSilent(false)
			env.Clock.Advance(2 * time.Hour) // the next day
			if _, err := env.Service.RecoverInterrupted(ctx); err != nil {
				t.Fatal(err)
			}
			day := start.Format(time.DateOnly)
			records, err := env.Service.AcquirerSettlement(ctx, day)
			if err != nil || len(records) != 2 {
				t.Fatalf("the acquirer's file of %s: got %+v, %v; want the payment and the refund", day, records, err)
			}
			rec, err := env.Service.Reconcile(ctx, day+".csv", records)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Matched != 2 || len(rec.Variances) != 0 {
				t.Errorf("got %d matched and variances %+v, want both matched and none", rec.Matched, rec.Variances)
			}
		})
	}
}
