package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// Payment actions (capture, cancel, refund) call the same Service methods
// as the API, with the staff authority of paylink.StaffContext in place
// of the API's tokens. Each runs at most once per idempotency key: the
// payment page puts a fresh key in a hidden field of its forms, so a
// double click or a resubmitted form replays the first outcome instead of
// acting twice. The Service writes the audit row, with the signed-in user
// as the actor.

// action is one payment action under way.
type action struct {
	rq   *request
	h    *Handler
	ctx  context.Context
	t    *paylink.Transaction
	done string // the notice's key on the payment page
}

// act loads the path's payment and runs fn as a staff action, with the
// authority of its route's permission (serve puts it in the request's
// context). An action refused (a bad amount, over the refundable
// amount, a hold already captured) shows the payment page again as it
// now is, with the refusal beside the forms and a fresh key in them, so
// that the staff member corrects the amount in place.
func (h *Handler) act(rq *request, done string, fn func(action) error) error {
	ctx := rq.r.Context()
	ref := rq.r.PathValue("ref")
	t, err := h.svc.TransactionStatus(ctx, rq.ss.Merchant, ref)
	if err != nil {
		return err
	}
	if t.Reference != ref {
		return errNoPayment()
	}
	err = fn(action{rq: rq, h: h, ctx: ctx, t: t, done: done})
	if e := paylink.AsError(err); err != nil && (e.Kind == paylink.KindInvalid || e.Kind == paylink.KindConflict) {
		return h.renderPayment(rq, paymentsBase, httpx.Status(e.Kind), view{Error: errorText(e), Fields: e.Fields})
	}
	return err
}

// run does op once per the form's idempotency key: a replay of a done
// action answers as the first request did. op answers the notice to show
// (see answered). A refused action changed nothing and releases the key,
// so that the corrected form, or another form of the page after the
// browser's Back, goes through; an action whose processor answer is
// awaited, or that met an unreachable database (it may have committed),
// keeps it, so that the same form sent again cannot act twice (failed).
func (a action) run(op func() (string, error), amount int64) error {
	rq := a.rq
	replay, finish, err := a.h.once(rq, "payment", rq.r.URL.Path, rq.ss.User.ID, fmt.Sprintf("%d %s", amount, a.t.Currency))
	if err != nil {
		return err
	}
	if replay != nil {
		return replayed(rq, replay)
	}
	done, err := op()
	if err != nil {
		failed(finish, err)
		return err
	}
	after := url.Values{"done": {done}}
	if back := backParam(rq.r, listOf(a.t)); back != "" {
		after.Set("back", back)
	}
	target := pageOf(a.t) + "?" + after.Encode()
	finish(http.StatusSeeOther, []byte(target))
	return rq.redirect(target)
}

// answered is the notice of an operation the processor answered with
// status: the action's own (a.done) when it did what was asked (want);
// "pending" while its answer is awaited (PROCESSING, UNKNOWN: recovery
// asks the processor, and the payment page shows the outcome then),
// which is a result, not a refusal, since the money may be moving; and
// refused's error for any other answer, which changed nothing.
func (a action) answered(status, want paylink.Status, refused func() error) (string, error) {
	switch status {
	case want:
		return a.done, nil
	case paylink.StatusProcessing, paylink.StatusUnknown:
		return "pending", nil
	}
	return "", refused()
}

// errStaleForm refuses a form whose key another action of the page took
// (a form sent again after the browser's Back, one still running, or one
// kept after it met an unreachable database, which may have gone
// through). Reloading the page gives fresh forms.
func errStaleForm() error {
	return paylink.Errorf(paylink.KindConflict, paylink.CodeIdempotencyConflict,
		"This form was already sent (what it asked for may have been done, even if the service was unavailable then). The page below is as it is now: check it before trying again.")
}

// replayed answers a repeated form as the first one was answered.
func replayed(rq *request, k *paylink.IdempotencyKey) error {
	if k.Status == http.StatusSeeOther && strings.HasPrefix(string(k.Response), "/dashboard/") {
		return rq.redirect(string(k.Response))
	}
	rq.render(k.Status, "error", view{Title: "Something went wrong", Error: string(k.Response)})
	return nil
}

// awaitingAnswer reports whether the payment, or one of its refunds,
// awaits a processor's answer (PROCESSING, or UNKNOWN until recovery or
// an operator settles it).
func awaitingAnswer(tl *paylink.Timeline) bool {
	waiting := func(s paylink.Status) bool { return s == paylink.StatusProcessing || s == paylink.StatusUnknown }
	if waiting(tl.Transaction.Status) {
		return true
	}
	for _, r := range tl.Refunds {
		if waiting(r.Status) {
			return true
		}
	}
	return false
}

// listOf is the dashboard list of a payment: direct debits or payments.
func listOf(t *paylink.Transaction) string {
	if t.PaymentType == paylink.PaymentTypeBankAccount {
		return debitsBase
	}
	return paymentsBase
}

// pageOf is the dashboard page of a payment.
func pageOf(t *paylink.Transaction) string {
	return listOf(t) + "/" + t.Reference
}

// actionNotice is the notice after a payment action; awaiting tells
// whether the payment still awaits a processor's answer. A "pending"
// action is shown as pending only while it does: the same address,
// reloaded or reached again by the same form sent twice, says that the
// answer has come once it has, and the history below shows what it was.
func actionNotice(done string, awaiting bool) string {
	if done == "pending" && !awaiting {
		return "The processor has answered since this was sent: its outcome is in the history below."
	}
	switch done {
	case "captured":
		return "The hold was captured."
	case "cancelled":
		return "The hold was cancelled and the funds released."
	case "refunded":
		return "The refund was made."
	case "pending":
		return "Sent to the processor, whose answer has not come yet. It is asked again within minutes; this page shows the outcome then. Do not send it again."
	}
	return ""
}
