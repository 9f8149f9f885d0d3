// Package storetest is the conformance suite that every paylink.Store
// passes: the same tests run against SQLite and PostgreSQL.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// Opener returns a fresh, empty, migrated store for one test.
type Opener func(t *testing.T) paylink.Store

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	tests := map[string]func(*testing.T, paylink.Store){
		"Merchants":                  testMerchants,
		"MerchantsAtEnds":            testMerchantsAtEnds,
		"TransactionTokenRace":       testTokenRace,
		"TransactionTokenRules":      testTokenRules,
		"Cards":                      testCards,
		"TransactionCompareAndSet":   testTransactionCAS,
		"TransactionLookups":         testTransactionLookups,
		"TransactionState":           testTransactionState,
		"RefundedNeverExceedsTotal":  testRefundRace,
		"Refunds":                    testRefunds,
		"UpdateErrorRollsBackOnlyFn": testUpdateIsolation,
		"SnapshotSeesOneMoment":      testSnapshot,
		"FailedInsertFailsUpdate":    testFailedInsertFailsUpdate,
		"MerchantAfterTxUpdate":      testMerchantAfterTransactionUpdate,
		"IdempotencyKeys":            testIdempotencyKeys,
		"WipeSpentCards":             testWipeSpentCards,
		// Direct debit refunds.
		"RefundSettlement": testRefundSettlement,
		// Card lifecycle.
		"TransactionByReference":              testTransactionByReference,
		"RefundCompletionCompareAndSet":       testRefundCompletionCAS,
		"ReleaseRefundedGivesReservationBack": testReleaseRefundedGivesTheReservationBack,
		// Webhooks
		"WebhookClaimRace":   testWebhookClaimRace,
		"WebhookLease":       testWebhookLease,
		"WebhookFinishBatch": testWebhookFinishBatch,
		"WebhookBacklog":     testWebhookBacklog,
		"WebhookHeld":        testWebhookHeld,
		"WebhookHeldPending": testWebhookHeldPendingOnly,
		"WebhookProbeOldest": testWebhookProbeOldest,
		// Payment links.
		"PaymentLinks":             testPaymentLinks,
		"PaymentLinkList":          testPaymentLinkList,
		"PaymentLinkCompareAndSet": testPaymentLinkCAS,
		"LinkDecidingPayment":      testLinkDecidingPayment,
		// Ledger.
		"Ledger":          testLedger,
		"LedgerPostsOnce": testLedgerPostsOnce,
		"LedgerByteOrder": testLedgerListsInByteOrder,
		// Key rotation.
		"SecretRotation": testSecretRotation,
		// Audit log.
		"AuditLog":       testAuditLog,
		"AuditRollsBack": testAuditRollsBack,
		// Recovery.
		"CountInStatus": testCountInStatus,
		"InStatusPages": testInStatusPages,
		// The merchant dashboard.
		"APIKeyRoll":    testAPIKeyRoll,
		"SearchColumns": testSearchColumns,
		"ScopedHistory": testScopedHistory,
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, open(t))
		})
	}
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func update(t *testing.T, s paylink.Store, fn func(paylink.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

func view(t *testing.T, s paylink.Store, fn func(paylink.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("view: %v", err)
	}
}

// testSnapshot: the reads of one Snapshot see the database as of its
// first, whatever commits between them; View sees the commit after it.
func testSnapshot(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	a := NewTransaction(m, "pr_na"+m.ID, "", 500)
	b := NewTransaction(m, "pr_nb"+m.ID, "", 700)
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(a) })
	err := s.Snapshot(context.Background(), func(tx paylink.Tx) error {
		if _, err := tx.TransactionState(m.ID, a.Reference); err != nil {
			return err
		}
		update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(b) })
		if got, err := tx.TransactionState(m.ID, b.Reference); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("a payment committed after the snapshot's first read: got %+v, %v; want ErrNotFound", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	view(t, s, func(tx paylink.Tx) error {
		_, err := tx.TransactionState(m.ID, b.Reference)
		return err
	})
}

var merchantSeq atomic.Int64

// NewMerchant stores a merchant with unique secrets and returns it.
func NewMerchant(t *testing.T, s paylink.Store) *paylink.Merchant {
	t.Helper()
	n := merchantSeq.Add(1)
	m := &paylink.Merchant{
		ID: fmt.Sprintf("M%d_%d", time.Now().UnixNano(), n), Name: "Acme Pty Ltd", TradingName: "Acme", Country: "AU",
		APIKeyHash:       paylink.HashSecret(fmt.Sprintf("key-%d-%d", time.Now().UnixNano(), n)),
		CompanyTokenHash: paylink.HashSecret(fmt.Sprintf("company-%d-%d", time.Now().UnixNano(), n)),
		Settings:         paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()},
		CreatedAt:        t0,
	}
	update(t, s, func(tx paylink.Tx) error { return tx.CreateMerchant(m) })
	return m
}

func testMerchants(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	view(t, s, func(tx paylink.Tx) error {
		key, err := tx.APIKeyByHash(m.APIKeyHash)
		if err != nil {
			return err
		}
		if key.MerchantID != m.ID || key.ID != m.APIKeyID() || !key.ExpiresAt.IsZero() {
			t.Errorf("got first api key %+v, want %s of %s without an end", key, m.APIKeyID(), m.ID)
		}
		got, err := tx.Merchant(m.ID)
		if err != nil {
			return err
		}
		if got.ID != m.ID || got.TradingName != "Acme" || !bytes.Equal(got.CompanyTokenHash, m.CompanyTokenHash) {
			t.Errorf("got merchant %+v, want %+v", got, m)
		}
		if got.Settings.Surcharge != paylink.DefaultSurchargeRates() {
			t.Errorf("got settings %+v, want default surcharge rates", got.Settings)
		}
		if _, err := tx.APIKeyByHash(paylink.HashSecret("nope")); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("unknown key: got %v, want ErrNotFound", err)
		}
		return nil
	})
	settings := m.Settings
	settings.Webhook.Domains = []string{"hooks.example.com"}
	update(t, s, func(tx paylink.Tx) error { return tx.UpdateMerchantSettings(m.ID, settings) })
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Merchant(m.ID)
		if err != nil {
			return err
		}
		if len(got.Settings.Webhook.Domains) != 1 {
			t.Errorf("got domains %v, want [hooks.example.com]", got.Settings.Webhook.Domains)
		}
		all, err := tx.ListMerchants()
		if err != nil || len(all) == 0 {
			t.Errorf("list merchants: got %d, %v", len(all), err)
		}
		return nil
	})
}

// testMerchantsAtEnds: the lowest and highest mids, each merchant once,
// in mid order, whether the two ends overlap or not.
func testMerchantsAtEnds(t *testing.T, s paylink.Store) {
	var ids []string
	for range 5 {
		ids = append(ids, NewMerchant(t, s).ID)
	}
	slices.Sort(ids)
	for _, c := range []struct {
		n    int
		want []string
	}{
		{0, nil},
		{1, []string{ids[0], ids[4]}},
		{2, []string{ids[0], ids[1], ids[3], ids[4]}},
		{3, ids},
		{10, ids},
	} {
		view(t, s, func(tx paylink.Tx) error {
			ms, err := tx.MerchantsAtEnds(c.n)
			var got []string
			for _, m := range ms {
				got = append(got, m.ID)
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("MerchantsAtEnds(%d) = %v, %v; want %v", c.n, got, err, c.want)
			}
			return nil
		})
	}
}

// spend spends a transaction token's hash in its own transaction.
func spend(s paylink.Store, h []byte, expires time.Time) error {
	return s.Update(context.Background(), func(tx paylink.Tx) error { return tx.SpendTransactionToken(h, expires, "pr_spender") })
}

func testTokenRace(t *testing.T, s paylink.Store) {
	h, expires := paylink.HashSecret("race-"+t.Name()), t0.Add(5*time.Minute)
	var wins atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := spend(s, h, expires)
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, paylink.ErrTokenSpent) {
				t.Errorf("spend: got %v, want nil or ErrTokenSpent", err)
			}
		}()
	}
	wg.Wait()
	if got := wins.Load(); got != 1 {
		t.Fatalf("got %d successful spendings, want exactly 1", got)
	}
}

func testTokenRules(t *testing.T, s paylink.Store) {
	h, other := paylink.HashSecret("rules-"+t.Name()), paylink.HashSecret("other-"+t.Name())
	if err := spend(s, h, t0.Add(5*time.Minute)); err != nil {
		t.Fatalf("first spending: got %v, want nil", err)
	}
	if err := spend(s, h, t0.Add(5*time.Minute)); !errors.Is(err, paylink.ErrTokenSpent) {
		t.Errorf("second spending: got %v, want ErrTokenSpent", err)
	}
	err := s.Update(context.Background(), func(tx paylink.Tx) error {
		if err := tx.SpendTransactionToken(other, t0.Add(2*time.Hour), "pr_other"); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("a failing transaction committed")
	}
	if err := spend(s, other, t0.Add(2*time.Hour)); err != nil {
		t.Errorf("spending rolled back with its transaction: got %v, want nil", err)
	}
	update(t, s, func(tx paylink.Tx) error {
		n, err := tx.DeleteSpentTransactionTokens(t0.Add(time.Hour))
		if err != nil || n < 1 {
			t.Errorf("delete spent: got %d, %v; want at least the expired one", n, err)
		}
		return nil
	})
	if err := spend(s, other, t0.Add(2*time.Hour)); !errors.Is(err, paylink.ErrTokenSpent) {
		t.Errorf("a token not yet expired was forgotten: got %v, want ErrTokenSpent", err)
	}
	update(t, s, func(tx paylink.Tx) error {
		if by, err := tx.TransactionTokenSpender(other, t0.Add(2*time.Hour)); err != nil || by != "pr_spender" {
			t.Errorf("spender of a spent token: got %q, %v; want pr_spender", by, err)
		}
		if _, err := tx.TransactionTokenSpender(paylink.HashSecret("never-"+t.Name()), t0.Add(2*time.Hour)); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("spender of a token never spent: got %v, want ErrNotFound", err)
		}
		return nil
	})
	if err := spend(s, paylink.HashSecret("never-"+t.Name()), t0.Add(2*time.Hour)); err != nil {
		t.Errorf("a token asked about, never spent: got %v, want it still free", err)
	}
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.ReleaseTransactionToken(other, t0.Add(2*time.Hour), "pr_not_the_spender"); err != nil {
			t.Errorf("release by another operation: %v", err)
		}
		return nil
	})
	if err := spend(s, other, t0.Add(2*time.Hour)); !errors.Is(err, paylink.ErrTokenSpent) {
		t.Errorf("a token released by an operation that did not spend it: got %v, want still ErrTokenSpent", err)
	}
	update(t, s, func(tx paylink.Tx) error { return tx.ReleaseTransactionToken(other, t0.Add(2*time.Hour), "pr_spender") })
	if err := spend(s, other, t0.Add(2*time.Hour)); err != nil {
		t.Errorf("a token released by its spender: got %v, want it free again", err)
	}
}

func newCard(m *paylink.Merchant, token string, multi bool) *paylink.Card {
	return &paylink.Card{
		Token: token, MerchantID: m.ID, MultiUse: multi, CustomerID: "cus_1", CreatedAt: t0,
		Sealed: paylink.SealedSecret{KeyID: "k1", Ciphertext: []byte{1, 2, 3}},
		Info:   paylink.CardInfo{Masked: "411111******1111", Brand: "visa", Funding: "CREDIT", Country: "AU", ExpiryMonth: 12, ExpiryYear: 2030, Fingerprint: "fp"},
	}
}

func testCards(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	single, multi := newCard(m, "single"+m.ID, false), newCard(m, "multi"+m.ID, true)
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateCard(single); err != nil {
			return err
		}
		return tx.CreateCard(multi)
	})
	update(t, s, func(tx paylink.Tx) error {
		got, err := tx.Card(m.ID, multi.Token)
		if err != nil || got.Info.Masked != "411111******1111" || !got.MultiUse || !bytes.Equal(got.Sealed.Ciphertext, []byte{1, 2, 3}) {
			t.Errorf("card: got %+v, %v", got, err)
		}
		if _, err := tx.Card(other.ID, multi.Token); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("other merchant's card: got %v, want ErrNotFound", err)
		}
		if err := tx.MarkCardUsed(single.Token, t0); err != nil {
			t.Errorf("first use: %v", err)
		}
		if err := tx.MarkCardUsed(single.Token, t0); !errors.Is(err, paylink.ErrConflict) {
			t.Errorf("second use: got %v, want ErrConflict", err)
		}
		if err := tx.InvalidateCard(other.ID, multi.Token, t0); !errors.Is(err, paylink.ErrConflict) {
			t.Errorf("invalidate by other merchant: got %v, want ErrConflict", err)
		}
		if err := tx.InvalidateCard(m.ID, multi.Token, t0); err != nil {
			t.Errorf("invalidate: %v", err)
		}
		if err := tx.InvalidateCard(m.ID, multi.Token, t0); !errors.Is(err, paylink.ErrConflict) {
			t.Errorf("invalidate twice: got %v, want ErrConflict", err)
		}
		got, _ = tx.Card(m.ID, multi.Token)
		if got.InvalidatedAt.IsZero() {
			t.Errorf("invalidated_at not recorded")
		}
		return nil
	})
}

// NewTransaction returns an unsaved APPROVED transaction of m.
func NewTransaction(m *paylink.Merchant, ref, invoice string, total int64) *paylink.Transaction {
	return &paylink.Transaction{
		Reference: ref, MerchantID: m.ID, InvoiceNumber: invoice, PaymentType: paylink.PaymentTypeCard,
		Channel: paylink.ChannelAPI, Status: paylink.StatusApproved, Currency: "AUD", Amount: total, Total: total,
		CreatedAt: t0, UpdatedAt: t0, ProcessedAt: t0,
		Details: paylink.TransactionDetails{Customer: paylink.Customer{Email: "jo@example.com"}, AuthCode: "123456"},
	}
}

func testTransactionCAS(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_cas"+m.ID, "", 1000)
	tr.Status, tr.PreAuth, tr.PreAuthAmount = paylink.StatusPreAuthorised, true, 1000
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(context.Background(), func(tx paylink.Tx) error {
				cur, err := tx.Transaction(m.ID, tr.Reference)
				if err != nil {
					return err
				}
				if cur.Status != paylink.StatusPreAuthorised {
					return paylink.ErrConflict
				}
				c := *cur
				c.Status, c.Total = paylink.StatusApproved, int64(100*(i+1))
				mine := c
				mine.Version = tr.Version // every racer read version 1 at the start
				return tx.UpdateTransaction(&mine)
			})
			if err == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("got %d winners of the compare-and-set, want 1", wins.Load())
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Transaction(m.ID, tr.Reference)
		if err != nil {
			return err
		}
		if got.Status != paylink.StatusApproved || got.Version != 2 {
			t.Errorf("got status %s version %d, want APPROVED version 2", got.Status, got.Version)
		}
		return nil
	})
}

// testTransactionState: the status look-up's read finds a transaction by
// purchase reference alone (an invoice number is the Service's rule,
// orderAnswer), with the columns it shows, and nothing of another
// merchant's.
func testTransactionState(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	a := NewTransaction(m, "pr_sa"+m.ID, "INV-S", 500)
	b := NewTransaction(m, "pr_sb"+m.ID, "INV-S", 700)
	b.CreatedAt, b.Status, b.Currency = t0.Add(time.Second), paylink.StatusDeclined, "JPY"
	p := NewTransaction(m, "pr_sp"+m.ID, "", 900)
	p.Status, p.ProcessedAt = paylink.StatusProcessing, time.Time{}
	update(t, s, func(tx paylink.Tx) error {
		for _, tr := range []*paylink.Transaction{a, b, p} {
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
		}
		return nil
	})
	want := func(tr *paylink.Transaction) paylink.TransactionState {
		return paylink.TransactionState{Reference: tr.Reference, InvoiceNumber: tr.InvoiceNumber, Status: tr.Status,
			Total: tr.Total, Currency: tr.Currency, ProcessedAt: tr.ProcessedAt}
	}
	view(t, s, func(tx paylink.Tx) error {
		for _, c := range []struct {
			merchant, ref string
			want          *paylink.Transaction
		}{
			{m.ID, a.Reference, a}, {m.ID, b.Reference, b}, {m.ID, p.Reference, p},
			{m.ID, "INV-S", nil}, {other.ID, a.Reference, nil}, {other.ID, "INV-S", nil}, {m.ID, "", nil}, {m.ID, "pr_none", nil},
		} {
			got, err := tx.TransactionState(c.merchant, c.ref)
			if c.want == nil {
				if !errors.Is(err, paylink.ErrNotFound) {
					t.Errorf("%q of %s: got %+v, %v; want ErrNotFound", c.ref, c.merchant, got, err)
				}
				continue
			}
			if err != nil || !reflect.DeepEqual(*got, want(c.want)) {
				t.Errorf("%q: got %+v, %v; want %+v", c.ref, got, err, want(c.want))
			}
		}
		return nil
	})
}

func testTransactionLookups(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	a := NewTransaction(m, "pr_a"+m.ID, "INV-1", 500)
	b := NewTransaction(m, "pr_b"+m.ID, "INV-1", 700)
	b.CreatedAt = t0.Add(time.Second)
	pending := NewTransaction(m, "pr_p"+m.ID, "", 900)
	pending.Status, pending.UpdatedAt = paylink.StatusPreAuthorised, t0.Add(-8*24*time.Hour)
	update(t, s, func(tx paylink.Tx) error {
		for _, tr := range []*paylink.Transaction{a, b, pending} {
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.NewestByInvoice(m.ID, "INV-1")
		if err != nil || got.Reference != b.Reference || !got.CreatedAt.Equal(b.CreatedAt) || got.PaymentLinkID != "" {
			t.Errorf("by invoice: got %+v, %v; want the newest, %s at %v", got, err, b.Reference, b.CreatedAt)
		}
		if full, err := tx.Transaction(m.ID, b.Reference); err != nil || full.Details.AuthCode != "123456" || !full.ProcessedAt.Equal(t0) {
			t.Errorf("round trip: got %+v, %v", full, err)
		}
		if _, err := tx.Transaction(other.ID, a.Reference); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("other merchant: got %v, want ErrNotFound", err)
		}
		if _, err := tx.NewestByInvoice(m.ID, ""); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("empty invoice: got %v, want ErrNotFound", err)
		}
		list, err := tx.TransactionsInStatus(paylink.StatusPreAuthorised, t0.Add(-7*24*time.Hour), paylink.Position{}, 10)
		if err != nil || len(list) != 1 || list[0].Reference != pending.Reference {
			t.Errorf("in status: got %d, %v; want the one old hold", len(list), err)
		}
		return nil
	})
}

func testRefundRace(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_r"+m.ID, "", 1000)
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	var wins atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(context.Background(), func(tx paylink.Tx) error { return tx.AddRefunded(tr.Reference, 300, t0) })
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, paylink.ErrConflict) {
				t.Errorf("add refunded: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 3 {
		t.Errorf("got %d refunds of 3.00 against 10.00, want 3", wins.Load())
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Transaction(m.ID, tr.Reference)
		if err != nil {
			return err
		}
		if got.Refunded != 900 {
			t.Errorf("got refunded %d, want 900", got.Refunded)
		}
		return nil
	})
}

func testRefunds(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_f"+m.ID, "", 1000)
	r := &paylink.Refund{Reference: "rf_1" + m.ID, MerchantID: m.ID, TransactionReference: tr.Reference, InvoiceNumber: "R-1",
		Status: paylink.StatusApproved, Currency: "AUD", Amount: 250, CreatedAt: t0}
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(tr); err != nil {
			return err
		}
		return tx.CreateRefund(r)
	})
	view(t, s, func(tx paylink.Tx) error {
		for _, key := range []string{"R-1", tr.Reference} {
			got, err := tx.RefundByInvoice(m.ID, key)
			if err != nil || got.Reference != r.Reference || got.Amount != 250 {
				t.Errorf("refund by %s: got %+v, %v", key, got, err)
			}
		}
		if got, err := tx.Refund(m.ID, r.Reference); err != nil || got.TransactionReference != tr.Reference {
			t.Errorf("refund: got %+v, %v", got, err)
		}
		return nil
	})
}

func testUpdateIsolation(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	results := make([]error, 20)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Update(context.Background(), func(tx paylink.Tx) error {
				tr := NewTransaction(m, fmt.Sprintf("pr_iso%d%s", i, m.ID), "", 100)
				if err := tx.CreateTransaction(tr); err != nil {
					return err
				}
				if i%2 == 1 {
					return errBoom // must roll back this insert only
				}
				return nil
			})
		}()
	}
	wg.Wait()
	view(t, s, func(tx paylink.Tx) error {
		for i, err := range results {
			_, lerr := tx.Transaction(m.ID, fmt.Sprintf("pr_iso%d%s", i, m.ID))
			switch {
			case i%2 == 1 && (!errors.Is(err, errBoom) || !errors.Is(lerr, paylink.ErrNotFound)):
				t.Errorf("update %d: got %v and lookup %v; want boom and rolled back", i, err, lerr)
			case i%2 == 0 && (err != nil || lerr != nil):
				t.Errorf("update %d: got %v and lookup %v; want committed", i, err, lerr)
			}
		}
		return nil
	})
}
