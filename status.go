package paylink

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"
)

var errNoSuchTransaction = Errorf(KindNotFound, CodeNotFound, "no transaction with that purchase reference or invoice number")

// errNoSuchPurchase answers a call that names its payment by purchase
// reference alone (capture, cancel, refund, 3dsredirect), where an
// invoice number names nothing.
var errNoSuchPurchase = Errorf(KindNotFound, CodeNotFound,
	"no transaction with that purchase reference (this call takes the purchase_reference paylink answered with, not an invoice number)")

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
}

// OrderCandidate is a payment a look-up by order reference may answer,
// with what orderAnswer ranks it by.
type OrderCandidate struct {
	Reference     string
	PaymentLinkID string // the link of a link's attempt, else ""
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
		st, err = findBy(tx, m.ID, ref, tx.TransactionState)
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
// then as an order reference (findBy).
func findTransaction(tx Tx, merchantID, ref string) (*Transaction, error) {
	if !lookupRef(ref) {
		return nil, ErrNotFound
	}
	return findBy(tx, merchantID, ref, tx.Transaction)
}

// findBy reads with read what ref names: the payment with that purchase
// reference, else the one orderAnswer picks. A look-up by purchase
// reference, the one polled, stays one read.
func findBy[T any](tx Tx, merchantID, ref string, read func(merchantID, reference string) (T, error)) (T, error) {
	v, err := read(merchantID, ref)
	if !errors.Is(err, ErrNotFound) {
		return v, err
	}
	c, err := orderAnswer(tx, merchantID, ref)
	if err != nil {
		return v, err
	}
	return read(merchantID, c.Reference)
}

// orderAnswer is the payment a look-up by an order reference that is no
// purchase reference answers: of the newest purchase with it as invoice
// number and the payment that decides a payment link with it as
// merchantReference (Tx.LinkDecidingPayment), the link's payment when
// there is no such purchase, when the purchase is an attempt of a
// payment link, or when it is older; else the purchase. A merchant whose
// webhook is missing polls by the reference it gave the link (spec
// 4.16.3): the virtual terminal stores the invoice number staff typed
// instead, and a link's paid payment, or its attempt whose answer is
// awaited, must outrank the customer's declined attempts before it,
// whatever clocks stamped them, or the merchant is told to charge again.
// ErrNotFound when neither exists.
func orderAnswer(tx Tx, merchantID, ref string) (*OrderCandidate, error) {
	byInvoice, err := tx.NewestByInvoice(merchantID, ref)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	linked, err := tx.LinkDecidingPayment(merchantID, ref)
	switch {
	case errors.Is(err, ErrNotFound) && byInvoice == nil:
		return nil, ErrNotFound
	case errors.Is(err, ErrNotFound):
		return byInvoice, nil
	case err != nil:
		return nil, err
	case byInvoice == nil || byInvoice.PaymentLinkID != "" || byInvoice.CreatedAt.Before(linked.CreatedAt):
		return linked, nil
	}
	return byInvoice, nil
}

// lookupRef reports whether ref can name a transaction or a refund at
// all: a reference or an invoice number, neither empty nor over the
// invoice number's limit, counted in characters as checkInvoice counts it.
func lookupRef(ref string) bool {
	return ref != "" && utf8.RuneCountInString(ref) <= MaxInvoiceLength
}
