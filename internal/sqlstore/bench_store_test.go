package sqlstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/sqlstore"
)

// BenchmarkStorePurchaseWrites is the store layer alone: the database
// work of one card purchase, with values made beforehand and no Service,
// vault or processor. In one transaction (the in-process sandbox) a
// single Update spends a transaction token, creates the transaction
// approved and appends its history event and ledger posting (a card
// given for one purchase and approved at once is not stored). With
// PROCESSING first (a remote acquirer), the first Update spends the
// token, vaults the card and creates the transaction PROCESSING, and the
// second reads the merchant and records the approval. Compared with BenchmarkPurchaseSQLite, it shows how much
// of a purchase's CPU is the store's.
func BenchmarkStorePurchaseWrites(b *testing.B) {
	b.Run("one-transaction", func(b *testing.B) { benchStorePurchases(b, storePurchaseInOne) })
	b.Run("processing-first", func(b *testing.B) { benchStorePurchases(b, storePurchase) })
}

func benchStorePurchases(b *testing.B, purchase func(context.Context, paylink.Store, *paylink.Merchant, int64, time.Time) error) {
	st, err := sqlstore.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Now().UTC()
	m := &paylink.Merchant{ID: "Mbench", Name: "Bench", TradingName: "Bench", Country: "AU",
		APIKeyHash: paylink.HashSecret("key"), CompanyTokenHash: paylink.HashSecret("company"),
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}, CreatedAt: now}
	if err := st.Update(ctx, func(tx paylink.Tx) error { return tx.CreateMerchant(m) }); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	b.SetParallelism(128)
	before := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := purchase(ctx, st, m, seq.Add(1), now); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/purchase")
}

// purchaseValues are purchase number n's card and PROCESSING transaction.
func purchaseValues(m *paylink.Merchant, n int64, now time.Time) (*paylink.Card, *paylink.Transaction) {
	card := &paylink.Card{Token: fmt.Sprintf("ct_%016d", n), MerchantID: m.ID, CreatedAt: now, UsedAt: now,
		Sealed: paylink.SealedSecret{KeyID: "k1", Ciphertext: make([]byte, 44)},
		Info: paylink.CardInfo{Masked: "411111******1111", Brand: "visa", Funding: "CREDIT", Country: "AU",
			ExpiryMonth: 12, ExpiryYear: 2040, Fingerprint: "fp"}}
	t := &paylink.Transaction{Reference: fmt.Sprintf("pr_%016d", n), MerchantID: m.ID, PaymentType: paylink.PaymentTypeCard,
		Channel: paylink.ChannelAPI, Status: paylink.StatusProcessing, Currency: "AUD", Amount: 1000, Surcharge: 15,
		Total: 1015, CardToken: card.Token, CreatedAt: now, UpdatedAt: now,
		Details: paylink.TransactionDetails{Customer: paylink.Customer{IPAddress: "203.0.113.9", Timezone: "UTC"}, Card: &card.Info}}
	return card, t
}

// storePurchaseInOne makes purchase number n's one store transaction: a
// card given for this purchase alone and approved at once is not stored.
func storePurchaseInOne(ctx context.Context, st paylink.Store, m *paylink.Merchant, n int64, now time.Time) error {
	_, t := purchaseValues(m, n, now)
	return st.Update(ctx, func(tx paylink.Tx) error {
		if err := tx.SpendTransactionToken(paylink.HashSecret(t.Reference), now.Add(5*time.Minute), t.Reference); err != nil {
			return err
		}
		t.Status, t.ProcessedAt, t.Details.AuthCode, t.CardToken = paylink.StatusApproved, now, "123456", ""
		if err := tx.CreateTransaction(t); err != nil {
			return err
		}
		return postAndRecord(tx, m, t, n, now)
	})
}

// postAndRecord appends t's approval posting and history event.
func postAndRecord(tx paylink.Tx, m *paylink.Merchant, t *paylink.Transaction, n int64, now time.Time) error {
	p, err := paylink.TransactionPosting(t, paylink.StatusProcessing, paylink.PricingOf(m))
	if err != nil {
		return err
	}
	p.ID, p.CreatedAt = fmt.Sprintf("bt_%016d", n), now
	if err := tx.AddPosting(p); err != nil {
		return err
	}
	return tx.AddEvent(&paylink.Event{MerchantID: m.ID, Reference: t.Reference, Type: "APPROVED",
		Data: `{"currency":"AUD","status":"APPROVED","total":1015,"version":1}`, CreatedAt: now})
}

// storePurchase makes purchase number n's two store transactions.
func storePurchase(ctx context.Context, st paylink.Store, m *paylink.Merchant, n int64, now time.Time) error {
	card, t := purchaseValues(m, n, now)
	ref := t.Reference
	err := st.Update(ctx, func(tx paylink.Tx) error {
		if err := tx.SpendTransactionToken(paylink.HashSecret(ref), now.Add(5*time.Minute), ref); err != nil {
			return err
		}
		if err := tx.CreateCard(card); err != nil {
			return err
		}
		return tx.CreateTransaction(t)
	})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	err = st.Update(ctx, func(tx paylink.Tx) error {
		mm, err := tx.Merchant(m.ID)
		if err != nil {
			return err
		}
		t.Status, t.ProcessedAt, t.Details.AuthCode = paylink.StatusApproved, now, "123456"
		if err := tx.UpdateTransaction(t); err != nil {
			return err
		}
		return postAndRecord(tx, mm, t, n, now)
	})
	if err != nil {
		return fmt.Errorf("record outcome: %w", err)
	}
	return nil
}
