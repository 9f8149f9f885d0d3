package paylink

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
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

// TransactionState is what a status look-up shows of a transaction (spec
// 4.8): no card, customer or details, so reading it decodes nothing.
type TransactionState struct {
	Reference     string
	InvoiceNumber string
	Status        Status
	Total         int64
	Currency      string
	ProcessedAt   time.Time // zero until processed
}

// TransactionStateOf finds what a status look-up shows of a transaction
// of m, by purchase reference or else by invoice number (the newest with
// it): the API's status endpoint, polled often, reads only that. The API
// key alone authorises it, as TransactionStatus.
func (s *Service) TransactionStateOf(ctx context.Context, m *Merchant, ref string) (*TransactionState, error) {
	if !lookupRef(ref) {
		return nil, errNoSuchTransaction
	}
	var st *TransactionState
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		st, err = tx.TransactionState(m.ID, ref)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, errNoSuchTransaction
	}
	if err != nil {
		return nil, Internal("transaction status", err)
	}
	return st, nil
}

// findTransaction looks a reference up first as a purchase reference,
// then as an invoice number.
func findTransaction(tx Tx, merchantID, ref string) (*Transaction, error) {
	if !lookupRef(ref) {
		return nil, ErrNotFound
	}
	t, err := tx.Transaction(merchantID, ref)
	if errors.Is(err, ErrNotFound) {
		return tx.TransactionByInvoice(merchantID, ref)
	}
	return t, err
}

// lookupRef reports whether ref can name a transaction or a refund at
// all: a reference or an invoice number, neither empty nor over the
// invoice number's limit, counted in characters as checkInvoice counts it.
func lookupRef(ref string) bool {
	return ref != "" && utf8.RuneCountInString(ref) <= MaxInvoiceLength
}
