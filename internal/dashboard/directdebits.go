package dashboard

import (
	"net/http"

	"github.com/paylink/paylink"
)

// The direct debits pages: the merchant's debits (the payments list
// limited to bank accounts), one debit with its state and timeline, and
// its refund, through the same Service method as the API.

// debitsBase is the path of the direct debits list.
const debitsBase = "/dashboard/direct-debits"

// directDebits lists the merchant's direct debits.
func (h *Handler) directDebits(rq *request) error {
	return h.list(rq, listData{Base: debitsBase, Debits: true}, "Direct debits")
}

// directDebit shows one direct debit; a card payment's reference, or
// another merchant's, is not found here.
func (h *Handler) directDebit(rq *request) error {
	return h.renderPayment(rq, debitsBase, http.StatusOK, view{})
}

// refundDebit refunds part or all of a cleared direct debit.
func (h *Handler) refundDebit(rq *request) error {
	return h.act(rq, "refunded", func(a action) error {
		if a.t.PaymentType != paylink.PaymentTypeBankAccount {
			return errNoPayment()
		}
		n, err := amountOf(rq, a.t)
		if err != nil {
			return err
		}
		return a.run(func() (string, error) {
			rf, _, err := h.svc.RefundDirectDebit(a.ctx, rq.ss.Merchant, a.t.Reference, paylink.RefundRequest{Amount: n, Currency: a.t.Currency, Customer: a.customer()})
			return a.refundOutcome(rf, err)
		}, n)
	})
}
