package sqlstore_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// benchPurchases measures durable card purchases end to end through the
// Service (transaction token issued and consumed, card vaulted, processor
// asked, outcome recorded): two commits per purchase (issuing the
// stateless token writes nothing), with as many
// concurrent clients as -cpu times SetParallelism.
func benchPurchases(b *testing.B, st paylink.Store) {
	svc, m, creds := benchMerchant(b, st)
	ctx := context.Background()
	b.SetParallelism(128)
	before := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tok, err := svc.IssueTransactionToken(ctx, m, creds.CompanyToken)
			if err != nil {
				b.Error(err)
				return
			}
			if err := benchPurchase(ctx, svc, m, creds, tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "purchases/s")
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/purchase")
}

// benchMerchant makes a Service on st with a merchant that surcharges.
func benchMerchant(b testing.TB, st paylink.Store) (*paylink.Service, *paylink.Merchant, paylink.Credentials) {
	v, err := vault.New(bytes.Repeat([]byte{9}, vault.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := paylink.NewService(paylink.Config{}, paylink.Deps{Store: st, Vault: v, Processor: &processor.Sandbox{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close(context.Background()) })
	m, creds, err := svc.CreateMerchant(context.Background(), paylink.NewMerchant{Name: "Bench", TradingName: "Bench", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}})
	if err != nil {
		b.Fatal(err)
	}
	return svc, m, creds
}

// benchPurchase makes the flow's surcharged card purchase with token tok.
func benchPurchase(ctx context.Context, svc *paylink.Service, m *paylink.Merchant, creds paylink.Credentials, tok string) error {
	t, err := svc.Purchase(ctx, m, paylink.PurchaseRequest{
		CompanyToken: creds.CompanyToken, TransactionToken: tok,
		Customer: paylink.Customer{IPAddress: "203.0.113.9", Timezone: "UTC"},
		Card:     &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: 2040, CVC: "123"},
		Amount:   1000, Currency: "AUD", ApplySurcharge: true,
	})
	if err != nil {
		return fmt.Errorf("purchase: %w", err)
	}
	if t.Status != paylink.StatusApproved {
		return fmt.Errorf("purchase: got status %s, want %s", t.Status, paylink.StatusApproved)
	}
	return nil
}

// BenchmarkFlowRoundTripsPostgres reports the network round trips to
// PostgreSQL of each Service call of the flow (transaction token, then
// purchase), one flow at a time so that the counts are the calls' own.
func BenchmarkFlowRoundTripsPostgres(b *testing.B) {
	var rt sqlstore.RoundTrips
	st, err := sqlstore.OpenCounted(context.Background(), pg.Database(b), &rt)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, m, creds := benchMerchant(b, st)
	ctx := context.Background()
	var token, purchase int64
	b.ResetTimer()
	for range b.N {
		start := rt.Load()
		tok, err := svc.IssueTransactionToken(ctx, m, creds.CompanyToken)
		if err != nil {
			b.Fatal(err)
		}
		issued := rt.Load()
		if err := benchPurchase(ctx, svc, m, creds, tok); err != nil {
			b.Fatal(err)
		}
		token, purchase = token+issued-start, purchase+rt.Load()-issued
	}
	b.ReportMetric(float64(token)/float64(b.N), "roundtrips/token")
	b.ReportMetric(float64(purchase)/float64(b.N), "roundtrips/purchase")
}

// cpuTime is the process's user plus system CPU time so far: CPU per
// operation holds across machines and load better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkPurchaseSQLite(b *testing.B) {
	st, err := sqlstore.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchPurchases(b, st)
	batches, updates := st.WriterStats()
	b.ReportMetric(float64(updates)/float64(batches), "updates/commit")
}

func BenchmarkPurchasePostgres(b *testing.B) {
	dsn := pg.Database(b)
	st, err := sqlstore.Open(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchPurchases(b, st)
}
