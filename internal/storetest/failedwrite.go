package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paylink/paylink"
)

// testFailedInsertFailsUpdate: an insert that fails fails the whole
// Update and commits nothing, wherever the failure shows, and a refused
// transaction token spending or posting is reported as such
// (ErrTokenSpent, ErrConflict). On PostgreSQL these inserts are held
// back and sent with the transaction's next round trip, so the failure is
// reported by a later statement or by the commit rather than by the
// insert itself; the outcome must be the same.
func testFailedInsertFailsUpdate(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	taken := newCard(m, "taken"+m.ID, true)
	spent, postedKey := paylink.HashSecret("spent-"+m.ID), "charge:posted:"+m.ID
	update(t, s, func(tx paylink.Tx) error {
		return errors.Join(tx.CreateCard(taken), tx.SpendTransactionToken(spent, t0.Add(time.Hour), "pr_failed"),
			tx.AddPosting(posting(m, "bt_posted"+m.ID, postedKey, 100)))
	})
	inserts := []struct {
		name   string
		insert func(tx paylink.Tx, id string) error
		want   error // nil: any error
	}{
		{"duplicate card", func(tx paylink.Tx, _ string) error {
			return tx.CreateCard(newCard(m, taken.Token, false)) // the token is the primary key
		}, nil},
		{"spent token", func(tx paylink.Tx, _ string) error {
			return tx.SpendTransactionToken(spent, t0.Add(time.Hour), "pr_failed")
		}, paylink.ErrTokenSpent},
		{"posted key", func(tx paylink.Tx, id string) error {
			return tx.AddPosting(posting(m, "bt_"+id, postedKey, 100))
		}, paylink.ErrConflict},
	}
	tests := []struct {
		name string
		then func(tx paylink.Tx) error // runs after the failing insert
	}{
		{"failure found at commit", func(paylink.Tx) error { return nil }},
		{"failure found by a later read", func(tx paylink.Tx) error {
			_, err := tx.Merchant(m.ID)
			return err
		}},
		{"failure found by a later guarded write", func(tx paylink.Tx) error {
			return tx.UpdateMerchantSettings(m.ID, m.Settings)
		}},
		{"failure ignored by the function", func(tx paylink.Tx) error {
			tx.Merchant(m.ID) // an error here is dropped: the commit must still fail
			return nil
		}},
	}
	for _, ins := range inserts {
		for _, tt := range tests {
			t.Run(ins.name+"/"+tt.name, func(t *testing.T) {
				ref := "ev_" + ins.name + tt.name + m.ID
				err := s.Update(context.Background(), func(tx paylink.Tx) error {
					ev := &paylink.Event{MerchantID: m.ID, Reference: ref, Type: "transaction.APPROVED", Data: "{}", CreatedAt: t0}
					if err := tx.AddEvent(ev); err != nil {
						return err
					}
					return errors.Join(ins.insert(tx, ref), tt.then(tx))
				})
				switch {
				case err == nil:
					t.Fatalf("got a committed update, want the %s's error", ins.name)
				case errors.Is(err, paylink.ErrUnavailable):
					t.Errorf("got %v, want the %s's error, not an unreachable database", err, ins.name)
				case ins.want != nil && !errors.Is(err, ins.want):
					t.Errorf("got %v, want %v", err, ins.want)
				}
				view(t, s, func(tx paylink.Tx) error {
					evs, err := tx.Events(m.ID, []string{ref})
					if len(evs) != 0 {
						t.Errorf("got %d events of a failed update, want none", len(evs))
					}
					return err
				})
			})
		}
	}
	view(t, s, func(tx paylink.Tx) error {
		got, err := tx.Card(m.ID, taken.Token)
		if err == nil && !got.MultiUse {
			t.Errorf("the stored card was overwritten by the failed insert")
		}
		return err
	})
}

// testMerchantAfterTransactionUpdate: a merchant read right after a
// transaction update is the merchant's current row in that database
// transaction, also when its settings changed in between (on PostgreSQL
// the update returns the merchant for the read that follows it), and a
// stale update is still a conflict.
func testMerchantAfterTransactionUpdate(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	tr := NewTransaction(m, "pr_prefetch"+m.ID, "", 1000)
	update(t, s, func(tx paylink.Tx) error { return tx.CreateTransaction(tr) })
	changed := m.Settings
	changed.Webhook.URL = "https://example.com/changed"
	tests := []struct {
		name    string
		between func(tx paylink.Tx) error
		wantURL string
	}{
		{"read next", func(paylink.Tx) error { return nil }, m.Settings.Webhook.URL},
		{"settings changed in between", func(tx paylink.Tx) error { return tx.UpdateMerchantSettings(m.ID, changed) }, changed.Webhook.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *paylink.Merchant
			err := s.Update(context.Background(), func(tx paylink.Tx) error {
				if err := tx.UpdateTransaction(tr); err != nil {
					return err
				}
				if err := tt.between(tx); err != nil {
					return err
				}
				var err error
				got, err = tx.Merchant(m.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != m.ID || got.Settings.Webhook.URL != tt.wantURL {
				t.Errorf("got merchant %s with webhook %q, want %s with %q", got.ID, got.Settings.Webhook.URL, m.ID, tt.wantURL)
			}
		})
	}
	stale := *tr
	stale.Version = 1
	err := s.Update(context.Background(), func(tx paylink.Tx) error { return tx.UpdateTransaction(&stale) })
	if !errors.Is(err, paylink.ErrConflict) {
		t.Errorf("stale update: got %v, want a conflict", err)
	}
}
