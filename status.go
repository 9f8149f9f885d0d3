package paylink

import (
	"context"
	"errors"
)

var errNoSuchTransaction = Errorf(KindNotFound, CodeNotFound, "no transaction with that purchase reference or invoice number")

// TransactionStatus finds a transaction of m by purchase reference, or
// else by invoice number (the newest with it). The API key alone
// authorises it, so that it can be polled with a plain GET; POST callers
// also present the company token, checked by the adapter.
func (s *Service) TransactionStatus(ctx context.Context, m *Merchant, ref string) (*Transaction, error) {
	var t *Transaction
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		t, err = findTransaction(tx, m.ID, ref)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchTransaction
	}
	if err != nil {
		return nil, Internal("transaction status", err)
	}
	return t, nil
}

// findTransaction looks a reference up first as a purchase reference,
// then as an invoice number.
func findTransaction(tx Tx, merchantID, ref string) (*Transaction, error) {
	if ref == "" || len(ref) > MaxInvoiceLength {
		return nil, ErrNotFound
	}
	t, err := tx.Transaction(merchantID, ref)
	if errors.Is(err, ErrNotFound) {
		return tx.TransactionByInvoice(merchantID, ref)
	}
	return t, err
}
