package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paylink/paylink"
)

func posting(m *paylink.Merchant, id, key string, amount int64) *paylink.Posting {
	return &paylink.Posting{ID: id, Key: key, Kind: paylink.PostingCharge, MerchantID: m.ID, Currency: "AUD",
		Reference: "p_" + key, CreatedAt: t0, Amount: amount, Fee: 10, Net: amount - 10,
		Lines: []paylink.LedgerLine{
			{Account: paylink.AccountAcquirerReceivable, Amount: amount},
			{Account: paylink.AccountFeeRevenue, Amount: -10, FeeCode: paylink.FeeServiceBlended},
			{Account: paylink.AccountMerchantPending, Amount: -(amount - 10)},
		}}
}

// testLedgerListsInByteOrder: balance transactions and payouts are listed
// newest first by id, and their ids (time-ordered, mixed-case base62) are
// in time order byte by byte only: under a linguistic collation, as a
// PostgreSQL cluster made with en-US has, "bt_a" sorts before "bt_B".
func testLedgerListsInByteOrder(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	suffixes := []string{"B", "Z", "a", "b"} // oldest first, in byte order
	update(t, s, func(tx paylink.Tx) error {
		for i, x := range suffixes {
			p := posting(m, "bt_"+x, "charge:"+m.ID+":"+x, int64(1000*(i+1)))
			b := &paylink.SettlementBatch{ID: "sb_" + x, MerchantID: m.ID, Currency: "AUD", Day: "2026-11-21", Count: 1, Net: p.Net, CreatedAt: t0}
			if err := tx.AddPosting(p); err != nil {
				return err
			}
			if err := tx.CreateSettlementBatch(b, []string{p.ID}); err != nil {
				return err
			}
			if err := tx.CreatePayout(&paylink.Payout{ID: "po_" + x, MerchantID: m.ID, Currency: "AUD", Amount: p.Net,
				BatchIDs: []string{b.ID}, CreatedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	lists := map[string]func(tx paylink.Tx, before string) ([]string, error){
		"bt_": func(tx paylink.Tx, before string) ([]string, error) {
			ps, err := tx.BalanceTransactions(m.ID, before, 10)
			return idsOf(ps, func(p *paylink.Posting) string { return p.ID }), err
		},
		"po_": func(tx paylink.Tx, before string) ([]string, error) {
			ps, err := tx.Payouts(m.ID, before, 10)
			return idsOf(ps, func(p *paylink.Payout) string { return p.ID }), err
		},
	}
	view(t, s, func(tx paylink.Tx) error {
		for prefix, list := range lists {
			for before, want := range map[string]string{"": "b a Z B", prefix + "a": "Z B"} {
				got, err := list(tx, before)
				if err != nil {
					return err
				}
				if strings.Join(got, " ") != strings.ReplaceAll(prefix+want, " ", " "+prefix) {
					t.Errorf("%s list before %q: got %v, want %s newest first", prefix, before, got, want)
				}
			}
		}
		return nil
	})
}

// idsOf lists the ids of a page.
func idsOf[T any](page []T, id func(T) string) []string {
	var out []string
	for _, x := range page {
		out = append(out, id(x))
	}
	return out
}

// The journal sums by account, lists balance transactions newest first
// with keyset pagination, and reads a reference's postings back whole.
func testLedger(t *testing.T, s paylink.Store) {
	m, other := NewMerchant(t, s), NewMerchant(t, s)
	update(t, s, func(tx paylink.Tx) error {
		for i, amount := range []int64{1000, 2000, 3000} {
			if err := tx.AddPosting(posting(m, fmt.Sprintf("bt_%s_%d", m.ID, i), fmt.Sprintf("charge:%s:%d", m.ID, i), amount)); err != nil {
				return err
			}
		}
		return tx.AddPosting(posting(other, "bt_"+other.ID, "charge:"+other.ID, 500))
	})
	view(t, s, func(tx paylink.Tx) error {
		bal, err := tx.LedgerBalances(m.ID)
		if err != nil {
			return err
		}
		got := map[paylink.LedgerAccount]int64{}
		for _, b := range bal {
			got[b.Account] = b.Amount
		}
		want := map[paylink.LedgerAccount]int64{paylink.AccountAcquirerReceivable: 6000, paylink.AccountFeeRevenue: -30, paylink.AccountMerchantPending: -5970}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("balances: got %v, want %v", got, want)
		}
		page, err := tx.BalanceTransactions(m.ID, "", 2)
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].Amount != 3000 || page[1].Amount != 2000 || page[0].Net != 2990 {
			t.Fatalf("first page: got %+v, want 3000 then 2000", page)
		}
		rest, err := tx.BalanceTransactions(m.ID, page[1].ID, 2)
		if err != nil {
			return err
		}
		if len(rest) != 1 || rest[0].Amount != 1000 {
			t.Errorf("second page: got %+v, want 1000", rest)
		}
		ps, err := tx.PostingsOf("p_charge:" + m.ID + ":1")
		if err != nil {
			return err
		}
		if len(ps) != 1 || len(ps[0].Lines) != 3 || ps[0].Lines[1].FeeCode != paylink.FeeServiceBlended || !ps[0].Balanced() {
			t.Errorf("postings of a reference: got %+v", ps)
		}
		return nil
	})
}

// A posting key is posted once, however many writers race for it, and
// a refused posting leaves no lines behind.
func testLedgerPostsOnce(t *testing.T, s paylink.Store) {
	m := NewMerchant(t, s)
	var wins atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(context.Background(), func(tx paylink.Tx) error {
				return tx.AddPosting(posting(m, fmt.Sprintf("bt_%s_%d", m.ID, i), "charge:once:"+m.ID, 1000))
			})
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, paylink.ErrConflict):
				t.Errorf("racing posting: got %v, want nil or ErrConflict", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("got %d postings of one key, want 1", wins.Load())
	}
	view(t, s, func(tx paylink.Tx) error {
		bal, err := tx.LedgerBalances(m.ID)
		if err != nil {
			return err
		}
		for _, b := range bal {
			if b.Account == paylink.AccountAcquirerReceivable && b.Amount != 1000 {
				t.Errorf("receivable: got %d, want 1000 (one posting's lines)", b.Amount)
			}
		}
		return nil
	})
}
