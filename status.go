package paylink

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

var errNoSuchTransaction = Errorf(KindNotFound, CodeNotFound, "no transaction with that purchase reference or invoice number")

// TransactionStatus finds a transaction of m by purchase reference, or
// else by order reference (orderAnswer). The API key alone
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
	PaymentLinkID string    // the link of a link's attempt, else ""
	CreatedAt     time.Time
}

// TransactionStateOf finds what a status look-up shows of a transaction
// of m, by purchase reference or else by order reference (orderAnswer):
// the API's status endpoint, polled often, reads only that. The API key
// alone authorises it, as TransactionStatus.
func (s *Service) TransactionStateOf(ctx context.Context, m *Merchant, ref string) (*TransactionState, error) {
	if !lookupRef(ref) {
		return nil, errNoSuchTransaction
	}
	var st *TransactionState
	err := s.store.View(ctx, func(tx Tx) error {
		var err error
		st, err = findState(tx, m.ID, ref)
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
// then as an order reference (orderAnswer).
func findTransaction(tx Tx, merchantID, ref string) (*Transaction, error) {
	if !lookupRef(ref) {
		return nil, ErrNotFound
	}
	t, err := tx.Transaction(merchantID, ref)
	if !errors.Is(err, ErrNotFound) {
		return t, err
	}
	if t, err = tx.TransactionByInvoice(merchantID, ref); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	var byInvoice *TransactionState
	if t != nil {
		byInvoice = &TransactionState{Reference: t.Reference, PaymentLinkID: t.PaymentLinkID, CreatedAt: t.CreatedAt}
	}
	answer, err := orderAnswer(tx, merchantID, ref, byInvoice)
	if err != nil || t != nil && answer.Reference == t.Reference {
		return t, err
	}
	return tx.Transaction(merchantID, answer.Reference)
}

// findState is findTransaction's rule for the few columns a status
// look-up shows: a look-up by purchase reference stays one read.
func findState(tx Tx, merchantID, ref string) (*TransactionState, error) {
	st, err := tx.TransactionState(merchantID, ref)
	if err == nil && st.Reference == ref || err != nil && !errors.Is(err, ErrNotFound) {
		return st, err
	}
	return orderAnswer(tx, merchantID, ref, st)
}

// orderAnswer is what a look-up by an order reference that is no
// purchase reference answers: of the newest purchase with it as invoice
// number (byInvoice, nil when none) and the payment that decides a
// payment link with it as merchantReference (Tx.LinkDecidingPayment),
// the link's payment when there is no such purchase, when the purchase
// is an attempt of a payment link, or when it is older; else the
// purchase. A merchant whose webhook is missing polls by the reference
// it gave the link (spec 4.16.3): the virtual terminal stores the
// invoice number staff typed instead, and a link's paid payment, or its
// attempt whose answer is awaited, must outrank the customer's declined
// attempts before it, whatever clocks stamped them, or the merchant is
// told to charge again. ErrNotFound when neither exists.
func orderAnswer(tx Tx, merchantID, ref string, byInvoice *TransactionState) (*TransactionState, error) {
	linked, err := tx.LinkDecidingPayment(merchantID, ref)
	if errors.Is(err, ErrNotFound) {
		if byInvoice == nil {
			return nil, ErrNotFound
		}
		return byInvoice, nil
	}
	if err != nil {
		return nil, err
	}
	if byInvoice != nil && byInvoice.Reference == linked {
		return byInvoice, nil
	}
	link, err := tx.TransactionState(merchantID, linked)
	if err != nil {
		return nil, err
	}
	if byInvoice == nil || byInvoice.PaymentLinkID != "" || byInvoice.CreatedAt.Before(link.CreatedAt) {
		return link, nil
	}
	return byInvoice, nil
}

// lookupRef reports whether ref can name a transaction or a refund at
// all: a reference or an invoice number, neither empty nor over the
// invoice number's limit, counted in characters as checkInvoice counts it.
func lookupRef(ref string) bool {
	return ref != "" && utf8.RuneCountInString(ref) <= MaxInvoiceLength
}
