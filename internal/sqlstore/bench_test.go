package sqlstore_test

import (
	"bytes"
	"context"
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
	v, err := vault.New(bytes.Repeat([]byte{9}, vault.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	svc := paylink.NewService(paylink.Config{}, paylink.Deps{Store: st, Vault: v, Processor: &processor.Sandbox{}})
	ctx := context.Background()
	m, creds, err := svc.CreateMerchant(ctx, paylink.NewMerchant{Name: "Bench", TradingName: "Bench", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}})
	if err != nil {
		b.Fatal(err)
	}
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
			t, err := svc.Purchase(ctx, m, paylink.PurchaseRequest{
				CompanyToken: creds.CompanyToken, TransactionToken: tok,
				Customer: paylink.Customer{IPAddress: "203.0.113.9", Timezone: "UTC"},
				Card:     &paylink.CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: 2040, CVC: "123"},
				Amount:   1000, Currency: "AUD", ApplySurcharge: true,
			})
			if err != nil || t.Status != paylink.StatusApproved {
				b.Errorf("purchase: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "purchases/s")
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/purchase")
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
