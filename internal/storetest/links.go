package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// Payment link conformance tests.

func newLink(t *testing.T, s paylink.Store, m *paylink.Merchant) *paylink.PaymentLink {
	t.Helper()
	return newLinkNamed(t, s, m, "")
}

// newLinkNamed is newLink with suffix in its id and token hashes, for a
// merchant's second link.
func newLinkNamed(t *testing.T, s paylink.Store, m *paylink.Merchant, suffix string) *paylink.PaymentLink {
	t.Helper()
	l := &paylink.PaymentLink{
		ID: "lnk_" + m.ID + suffix, MerchantID: m.ID, Status: paylink.LinkUnpaid, Amount: 1050, Currency: "AUD",
		MerchantReference: "ORDER-1", ApplySurcharge: true,
		Customer:      paylink.Customer{FirstName: "Jo", Email: "jo@example.com", Reference: "CUST-9"},
		WebhookURL:    "https://hooks.example.com/pay",
		PageTokenHash: paylink.HashSecret("page-" + m.ID + suffix), VTTokenHash: paylink.HashSecret("vt-" + m.ID + suffix),
		Tokens:     paylink.SealedSecret{KeyID: "k1", Ciphertext: []byte{1, 2, 3}},
		CSRFSecret: "csrf", CreatedAt: t0, UpdatedAt: t0, ExpiresAt: t0.Add(time.Hour),
	}
	update(t, s, func(tx paylink.Tx) error { return tx.CreatePaymentLink(l) })
	return l
}

func testPaymentLinks(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	l := newLink(t, s, m)
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.PaymentLink(m.ID, l.ID)
		if err != nil {
			return err
		}
		if got.Amount != 1050 || got.Customer.Reference != "CUST-9" || got.WebhookURL != l.WebhookURL ||
			!got.ExpiresAt.Equal(l.ExpiresAt) || !got.ClaimedAt.IsZero() || got.Version != 1 || !got.ApplySurcharge {
			t.Errorf("got link %+v, want %+v", got, l)
		}
		for _, h := range [][]byte{l.PageTokenHash, l.VTTokenHash} {
			if got, err := tx.PaymentLinkByTokenHash(h); err != nil || got.ID != l.ID {
				t.Errorf("by token hash: got %v, %v, want link %s", got, err, l.ID)
			}
		}
		if _, err := tx.PaymentLink(other.ID, l.ID); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("other merchant's link: got %v, want ErrNotFound", err)
		}
		if _, err := tx.PaymentLinkByTokenHash(paylink.HashSecret("nope")); !errors.Is(err, paylink.ErrNotFound) {
			t.Errorf("unknown token: got %v, want ErrNotFound", err)
		}
		return nil
	})
	l.ClaimedAt, l.ClaimReference = t0.Add(time.Second), "pr_1"
	update(t, s, func(tx paylink.Tx) error { return tx.UpdatePaymentLink(l) })
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.PaymentLink(m.ID, l.ID)
		if err != nil {
			return err
		}
		if !got.ClaimedAt.Equal(l.ClaimedAt) || got.ClaimReference != "pr_1" || got.Version != 2 {
			t.Errorf("after a claim: got %+v, want claimed by pr_1 at version 2", got)
		}
		return nil
	})
	l.Status, l.PaidReference, l.PaidAt, l.Attempts = paylink.LinkPaid, "pr_1", t0.Add(time.Minute), 2
	l.ClaimedAt, l.ClaimReference = time.Time{}, ""
	update(t, s, func(tx paylink.Tx) error { return tx.UpdatePaymentLink(l) })
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.PaymentLink(m.ID, l.ID)
		if err != nil {
			return err
		}
		if got.Status != paylink.LinkPaid || got.PaidReference != "pr_1" || got.Attempts != 2 || got.Version != 3 ||
			!got.ClaimedAt.IsZero() || got.ClaimReference != "" {
			t.Errorf("after update: got %+v, want paid by pr_1, unclaimed, at version 3", got)
		}
		return nil
	})
}

// testPaymentLinkList lists a merchant's links newest first, up to a
// limit, and never another merchant's.
func testPaymentLinkList(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	newLink(t, s, other)
	first := newLink(t, s, m)
	var want []string
	for i := range 3 {
		l := *first
		l.ID = fmt.Sprintf("lnk_%s_%d", m.ID, i)
		l.CreatedAt = t0.Add(time.Duration(i+1) * time.Minute)
		l.PageTokenHash, l.VTTokenHash = paylink.HashSecret(l.ID+"p"), paylink.HashSecret(l.ID+"v")
		update(t, s, func(tx paylink.Tx) error { return tx.CreatePaymentLink(&l) })
		want = append([]string{l.ID}, want...)
	}
	want = append(want, first.ID) // created at t0, before the others
	for _, limit := range []int{10, 2} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			view(t, s, func(tx paylink.Tx) error {
				got, err := tx.PaymentLinks(m.ID, limit)
				if err != nil {
					return err
				}
				var ids []string
				for _, l := range got {
					ids = append(ids, l.ID)
				}
				w := want[:min(limit, len(want))]
				if fmt.Sprint(ids) != fmt.Sprint(w) {
					t.Errorf("got %v, want %v", ids, w)
				}
				return nil
			})
		})
	}
}

// testPaymentLinkCAS races updates from the same version: exactly one wins.
func testPaymentLinkCAS(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	l := newLink(t, s, m)
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := *l
			mine.ClaimedAt, mine.Attempts = t0.Add(time.Duration(i)*time.Second), 1
			err := s.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdatePaymentLink(&mine) })
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, paylink.ErrConflict) {
				t.Errorf("update: got %v, want nil or ErrConflict", err)
			}
		}()
	}
	wg.Wait()
	if got := wins.Load(); got != 1 {
		t.Fatalf("got %d successful updates from version 1, want exactly 1", got)
	}
}

// testLinkDecidingPayment: a merchant reference names the payment that
// decides the link changed last among those paid or claimed by an
// attempt: the paid payment, else the claiming attempt; nothing for
// another merchant, an unknown reference, or links neither paid nor
// claimed.
func testLinkDecidingPayment(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	paid, claimed := newLinkNamed(t, s, m, "p"), newLinkNamed(t, s, m, "c")
	newLinkNamed(t, s, m, "i") // neither paid nor claimed
	pay := NewTransaction(m, "pr_dp"+m.ID, "", 1050)
	attempt := NewTransaction(m, "pr_dc"+m.ID, "", 1050)
	pay.PaymentLinkID, attempt.PaymentLinkID = paid.ID, claimed.ID
	attempt.CreatedAt = t0.Add(-time.Hour) // stamped earlier: the link's change decides, not this
	update(t, s, func(tx paylink.Tx) error {
		for _, tr := range []*paylink.Transaction{pay, attempt} {
			if err := tx.CreateTransaction(tr); err != nil {
				return err
			}
		}
		paid.Status, paid.PaidReference, paid.UpdatedAt = paylink.LinkPaid, pay.Reference, t0.Add(time.Minute)
		claimed.ClaimReference, claimed.ClaimedAt, claimed.UpdatedAt = attempt.Reference, t0.Add(2*time.Minute), t0.Add(2*time.Minute)
		if err := tx.UpdatePaymentLink(paid); err != nil {
			return err
		}
		return tx.UpdatePaymentLink(claimed)
	})
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.LinkDecidingPayment(m.ID, "ORDER-1")
		if err != nil || got.Reference != attempt.Reference || got.PaymentLinkID != claimed.ID || !got.CreatedAt.Equal(attempt.CreatedAt) {
			t.Errorf("the link changed last: got %+v, %v; want its claiming attempt %s", got, err, attempt.Reference)
		}
		for _, c := range []struct{ merchant, ref string }{{other.ID, "ORDER-1"}, {m.ID, "ORDER-2"}} {
			if got, err := tx.LinkDecidingPayment(c.merchant, c.ref); !errors.Is(err, paylink.ErrNotFound) {
				t.Errorf("%s of %s: got %+v, %v; want ErrNotFound", c.ref, c.merchant, got, err)
			}
		}
		return nil
	})
	update(t, s, func(tx paylink.Tx) error {
		claimed.ClaimReference, claimed.ClaimedAt = "", time.Time{}
		return tx.UpdatePaymentLink(claimed)
	})
	view(t, s, func(tx paylink.Tx) error {
		if got, err := tx.LinkDecidingPayment(m.ID, "ORDER-1"); err != nil || got.Reference != pay.Reference {
			t.Errorf("the claim released: got %+v, %v; want the paid link's payment %s", got, err, pay.Reference)
		}
		return nil
	})
}
