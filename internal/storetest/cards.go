package storetest

import (
	"testing"
	"time"

	"github.com/paylink/paylink"
)

func testWipeSpentCards(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	spent, unused := newCard(m, "spent"+m.ID, false), newCard(m, "unused"+m.ID, false)
	stored, invalidated := newCard(m, "stored"+m.ID, true), newCard(m, "invalid"+m.ID, true)
	recent := newCard(m, "recent"+m.ID, false)
	spent.UsedAt, invalidated.InvalidatedAt, recent.UsedAt = t0, t0, t0.Add(2*time.Hour)
	update(t, s, func(tx paylink.Tx) error {
		for _, c := range []*paylink.Card{spent, unused, stored, invalidated, recent} {
			if err := tx.CreateCard(c); err != nil {
				return err
			}
		}
		n, err := tx.WipeSpentCards(t0.Add(time.Hour), 100)
		if err != nil || n != 2 {
			t.Errorf("wiped %d, %v; want the spent and the invalidated card", n, err)
		}
		if n, _ := tx.WipeSpentCards(t0.Add(time.Hour), 100); n != 0 {
			t.Errorf("second run wiped %d, want 0", n)
		}
		return nil
	})
	view(t, s, func(tx paylink.Tx) error {
		for _, c := range []struct {
			token string
			wiped bool
		}{{spent.Token, true}, {invalidated.Token, true}, {unused.Token, false}, {stored.Token, false}, {recent.Token, false}} {
			got, err := tx.Card(m.ID, c.token)
			if err != nil {
				return err
			}
			if wiped := got.Sealed.KeyID == "" && len(got.Sealed.Ciphertext) == 0; wiped != c.wiped {
				t.Errorf("card %s: got wiped %v, want %v", c.token, wiped, c.wiped)
			}
			if got.Info.Masked != "411111******1111" {
				t.Errorf("card %s: the description must stay, got %+v", c.token, got.Info)
			}
		}
		return nil
	})
}
