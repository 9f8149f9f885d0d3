package paylink

import (
	"context"
	"errors"
	"fmt"
)

// Posting to the journal happens where a money movement is recorded, and
// inside the database transaction that records it, so no money moves
// without its posting and no posting outlives a rollback:
// postTransaction for every transaction status change (write, and
// purchaseInOne's insert of a purchase with its answer), saveRefund for
// every refund status change, and settlement.go's batch and payout
// postings.

// postTransaction appends the posting of t's move from one status to
// another, if the move takes or gives money; m gives the merchant's pricing.
func (s *Service) postTransaction(tx Tx, t *Transaction, from Status, m *outcomeMerchant) error {
	switch t.Status {
	case StatusApproved, StatusPending, StatusDeclined:
	default:
		return nil
	}
	if t.Status == from {
		return nil
	}
	merchant, err := m.get()
	if err != nil {
		return fmt.Errorf("posting %s: %w", t.Reference, err)
	}
	p, err := TransactionPosting(t, from, PricingOf(merchant))
	if err != nil || p == nil {
		return err
	}
	return s.post(tx, p)
}

// saveRefund writes r, which was in status from, with a compare-and-set
// on that status, and posts it once it is approved.
func (s *Service) saveRefund(tx Tx, t *Transaction, r *Refund, from Status) error {
	if err := tx.UpdateRefund(r, from); err != nil {
		return err
	}
	if p := RefundPosting(t, r); p != nil {
		return s.post(tx, p)
	}
	return nil
}

// post stamps p with its id and time and appends it. An unbalanced
// posting is a bug and fails the whole operation.
func (s *Service) post(tx Tx, p *Posting) error {
	if !p.Balanced() {
		return Internal("post", fmt.Errorf("posting %s does not balance: %+v", p.Key, p.Lines))
	}
	id, err := s.reference("bt_")
	if err != nil {
		return Internal("posting id", err)
	}
	p.ID, p.CreatedAt = id, s.now()
	return tx.AddPosting(p)
}

// Balance is a merchant's balance in one currency, in minor units.
type Balance struct {
	Currency string
	// Pending is captured and not yet settled by the acquirer.
	Pending int64
	// Available is settled and not yet paid out.
	Available int64
	// PaidOut is everything paid out to the merchant so far.
	PaidOut int64
}

// Balances derives m's balances from the journal, one per currency.
func (s *Service) Balances(ctx context.Context, m *Merchant) ([]Balance, error) {
	var rows []AccountBalance
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.LedgerBalances(m.ID)
		return err
	})
	if err != nil {
		return nil, Internal("balances", err)
	}
	return BalancesOf(rows), nil
}

// BalancesOf folds account sums into per-currency balances. Merchant
// accounts are credit-normal, so their sums are negated.
func BalancesOf(rows []AccountBalance) []Balance {
	var out []Balance
	at := map[string]int{}
	for _, r := range rows {
		i, ok := at[r.Currency]
		if !ok {
			i = len(out)
			at[r.Currency] = i
			out = append(out, Balance{Currency: r.Currency})
		}
		switch r.Account {
		case AccountMerchantPending:
			out[i].Pending = -r.Amount
		case AccountMerchantAvailable:
			out[i].Available = -r.Amount
		case AccountMerchantPaidOut:
			out[i].PaidOut = -r.Amount
		}
	}
	return out
}

// MaxBalanceTransactions is the largest page of balance transactions.
const MaxBalanceTransactions = 100

// BalanceTransactions lists m's balance transactions newest first, up
// to limit (1 to MaxBalanceTransactions), after the id startingAfter,
// and reports whether more follow.
func (s *Service) BalanceTransactions(ctx context.Context, m *Merchant, startingAfter string, limit int) ([]*Posting, bool, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, false, err
	}
	var out []*Posting
	err := s.store.View(ctx, func(tx Tx) error {
		if startingAfter != "" {
			if _, err := tx.BalanceTransaction(m.ID, startingAfter); err != nil {
				return err
			}
		}
		var err error
		out, err = tx.BalanceTransactions(m.ID, startingAfter, limit+1)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, false, unknownCursor("balance transaction")
	}
	if err != nil {
		return nil, false, Internal("balance transactions", err)
	}
	return out[:min(len(out), limit)], len(out) > limit, nil
}

// unknownCursor refuses a page whose starting_after names no object of
// the merchant: read as a position in id order, a mangled cursor would
// show the first page again, or the cursor's own row.
func unknownCursor(what string) error {
	return &Error{Kind: KindInvalid, Code: CodeInvalidRequest, Message: "starting_after names no " + what + " of this merchant",
		Fields: map[string]string{"starting_after": "names no " + what + " of this merchant"}}
}

// checkPageLimit is the rule for a page of balance transactions or
// payouts: 1 to MaxBalanceTransactions rows.
func checkPageLimit(limit int) error {
	if limit < 1 || limit > MaxBalanceTransactions {
		return Errorf(KindInvalid, CodeInvalidRequest, "limit must be between 1 and %d", MaxBalanceTransactions)
	}
	return nil
}
