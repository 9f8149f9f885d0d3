package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// testAPIKeyRoll: a roll makes the new key current, ends the merchant's
// other keys at the given time unless they end sooner, and leaves other
// merchants' keys alone.
func testAPIKeyRoll(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	roll := func(secret string, at, until time.Time) *paylink.APIKey {
		k := &paylink.APIKey{MerchantID: m.ID, Hash: paylink.HashSecret(secret), CreatedAt: at}
		k.ID = paylink.APIKeyID(k.Hash)
		update(t, s, func(tx paylink.Tx) error { return tx.RollAPIKey(k, until) })
		return k
	}
	second := roll("second-"+m.ID, t0.Add(time.Minute), t0.Add(time.Hour))
	third := roll("third-"+m.ID, t0.Add(2*time.Minute), t0.Add(2*time.Hour))
	view(t, s, func(tx paylink.Tx) error {
		keys, err := tx.APIKeys(m.ID)
		if err != nil {
			return err
		}
		var got []string
		for _, k := range keys {
			got = append(got, k.ID+" "+k.ExpiresAt.Format(time.RFC3339))
		}
		want := []string{third.ID + " 0001-01-01T00:00:00Z", second.ID + " " + t0.Add(2*time.Hour).Format(time.RFC3339),
			m.APIKeyID() + " " + t0.Add(time.Hour).Format(time.RFC3339)}
		if !slices.Equal(got, want) {
			t.Errorf("got keys %q, want %q", got, want)
		}
		if cur, err := tx.Merchant(m.ID); err != nil || !slices.Equal(cur.APIKeyHash, third.Hash) {
			t.Errorf("current key: got %v, want the third key", err)
		}
		if k, err := tx.APIKeyByHash(other.APIKeyHash); err != nil || !k.ExpiresAt.IsZero() {
			t.Errorf("other merchant's key: got %+v, %v; want it current", k, err)
		}
		return nil
	})
	k := &paylink.APIKey{ID: "key_nomerchant", MerchantID: "MNOPE", Hash: paylink.HashSecret("nope"), CreatedAt: t0}
	if err := s.Update(t.Context(), func(tx paylink.Tx) error { return tx.RollAPIKey(k, t0) }); err != paylink.ErrNotFound {
		t.Errorf("unknown merchant: got %v, want ErrNotFound", err)
	}
}

// testSearchColumns: the searched columns follow a transaction's details
// on update, and a search never crosses merchants.
func testSearchColumns(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	tr := NewTransaction(m, "pr_search_"+m.ID, "INV-S", 1000)
	tr.Details.Customer.Email = "Old@Example.com"
	theirs := NewTransaction(other, "pr_search_"+other.ID, "INV-S", 1000)
	theirs.Details.Customer.Email = "new@example.com"
	update(t, s, func(tx paylink.Tx) error {
		if err := tx.CreateTransaction(theirs); err != nil {
			return err
		}
		return tx.CreateTransaction(tr)
	})
	search := func(q paylink.PaymentQuery) []string {
		t.Helper()
		q.MerchantID, q.Limit = m.ID, 10
		var got []string
		view(t, s, func(tx paylink.Tx) error {
			rows, err := tx.SearchTransactions(q)
			for _, r := range rows {
				got = append(got, r.Reference)
			}
			return err
		})
		return got
	}
	if got := search(paylink.PaymentQuery{Search: "x", SearchEmail: "old@example.com"}); !slices.Equal(got, []string{tr.Reference}) {
		t.Errorf("by email before the update: got %v, want %s", got, tr.Reference)
	}
	tr.Details.Customer.Email = "new@example.com"
	tr.Details.Card = &paylink.CardInfo{Masked: "424242******4242"}
	update(t, s, func(tx paylink.Tx) error { return tx.UpdateTransaction(tr) })
	for _, tt := range []struct {
		name string
		q    paylink.PaymentQuery
		want []string
	}{
		{"old email", paylink.PaymentQuery{Search: "x", SearchEmail: "old@example.com"}, nil},
		{"new email", paylink.PaymentQuery{Search: "x", SearchEmail: "new@example.com"}, []string{tr.Reference}},
		{"last 4", paylink.PaymentQuery{Search: "4242", SearchEmail: "4242", SearchLast4: "4242"}, []string{tr.Reference}},
		{"invoice both merchants use", paylink.PaymentQuery{Search: "INV-S", SearchEmail: "inv-s"}, []string{tr.Reference}},
		{"other merchant's reference", paylink.PaymentQuery{Search: theirs.Reference, SearchEmail: theirs.Reference}, nil},
	} {
		if got := search(tt.q); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// testScopedHistory: events, refunds and audit rows of a reference are
// listed only for the merchant that owns them.
func testScopedHistory(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	ref := "pr_history_" + m.ID
	update(t, s, func(tx paylink.Tx) error {
		for _, mid := range []string{m.ID, other.ID} {
			if err := tx.AddEvent(&paylink.Event{MerchantID: mid, Reference: ref, Type: "transaction.APPROVED", Data: "{}", CreatedAt: t0}); err != nil {
				return err
			}
			e := auditRow(mid, paylink.AuditCapture, 0)
			e.ObjectID = ref
			if err := tx.AddAuditEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(tx paylink.Tx) error {
		events, err := tx.Events(m.ID, []string{ref, "rf_none"})
		if err != nil {
			return err
		}
		audit, err := tx.AuditEventsAbout(m.ID, []string{ref})
		if err != nil {
			return err
		}
		if len(events) != 1 || events[0].MerchantID != m.ID || len(audit) != 1 || audit[0].MerchantID != m.ID {
			t.Errorf("got %d events and %d audit rows, want one of each, the merchant's", len(events), len(audit))
		}
		return nil
	})
}
