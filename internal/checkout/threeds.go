package checkout

import (
	"context"
	"net/http"
	"time"

	"github.com/paylink/paylink"
)

// How long a 3-D Secure return waits for a completion that another load
// of the same address is running, and how often it looks.
const (
	completionWait = 3 * time.Second
	completionPoll = 20 * time.Millisecond
)

// linkReturn leads a customer back from 3-D Secure (the issuer sends
// them to LinkReturnPath + the link's id) to the link's page's
// threeDSReturn, when the browser is the one that started the attempt;
// any other load of the address gets the attempt's outcome alone, without
// the page's address (paylink.Service.LinkReturn).
func (h *Handler) linkReturn(w http.ResponseWriter, r *http.Request) {
	ctx, id, ref, browser := r.Context(), r.PathValue("id"), r.URL.Query().Get("purchase_reference"), browserOf(r)
	back, err := h.svc.LinkReturn(ctx, id, ref, browser)
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	if back.PageURL != "" {
		http.Redirect(w, r, back.PageURL, http.StatusSeeOther)
		return
	}
	t, err := awaitOutcome(ctx, back.Transaction, func() (*paylink.Transaction, error) {
		again, err := h.svc.LinkReturn(ctx, id, ref, browser)
		if err != nil {
			return nil, err
		}
		return again.Transaction, nil
	})
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	nonce, err := h.randomString(18)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	securityHeaders(w, nonce)
	v := &view{Nonce: nonce, CSS: h.css, Title: "Payment", State: stateReturned, Alert: returnedMessage(t)}
	h.writePage(w, r, http.StatusOK, v, h.execute)
}

// stateReturned is the view of a 3-D Secure return in another browser
// than the one that started the attempt: a message, no link page.
const stateReturned paylink.LinkStatus = "returned"

// returnedMessage tells a customer back from 3-D Secure in another
// browser where the attempt t stands, and how to reach the link again.
func returnedMessage(t *paylink.Transaction) string {
	again := " To see this payment link again, open it from the message you were sent."
	switch t.Status {
	case paylink.StatusApproved, paylink.StatusPreAuthorised:
		return "Your payment of " + money(t.Total, t.Currency) + " was approved. Transaction reference: " + t.Reference + "." + again
	case paylink.StatusRequiresAuthentication:
		return "Your bank has not finished checking this payment yet: finish the check your bank started, then come back here." + again
	case paylink.StatusProcessing, paylink.StatusUnknown:
		return "Payment not confirmed yet: the payment processor has not answered. Do not pay again." + again
	}
	return notCompleted(t) + again
}

// threeDSReturn is where a customer back from the challenge page lands,
// with purchase_reference: the payment is completed and its result shown.
// A browser may load the address several times at once (a double click,
// a restored tab); only one load completes the payment, and the others
// wait for that outcome and show it too.
func (h *Handler) threeDSReturn(rq *request) error {
	ctx, ref := rq.r.Context(), rq.r.URL.Query().Get("purchase_reference")
	t, err := h.svc.LinkTransaction(ctx, rq.ls, ref)
	if err != nil && paylink.AsError(err).Kind == paylink.KindNotFound {
		return errNoSuchReturn
	}
	if err == nil && t.Status == paylink.StatusRequiresAuthentication {
		t, err = h.svc.CompleteThreeDS(ctx, rq.ls.Merchant, t.Reference)
		if err != nil && paylink.AsError(err).Code == paylink.CodeAuthenticationPending {
			err = errCheckNotFinished
		}
		if completedByAnother(err) {
			if again, rerr := h.svc.LinkTransaction(ctx, rq.ls, ref); rerr == nil && again.Status != paylink.StatusRequiresAuthentication {
				t, err = again, nil
			}
		}
	}
	if err == nil {
		t, err = awaitOutcome(ctx, t, func() (*paylink.Transaction, error) { return h.svc.LinkTransaction(ctx, rq.ls, t.Reference) })
	}
	return h.result(rq, h.newView(rq), t, err)
}

// errNoSuchReturn answers a return address naming no payment of its link
// (a missing or altered purchase_reference), in the customer's words.
var errNoSuchReturn = paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound,
	"This address names no payment of this link: it may have been cut short. Open the payment page to see where the payment stands.")

// errCheckNotFinished answers a return to the page before the issuer's
// check was answered, in the customer's words.
var errCheckNotFinished = paylink.Errorf(paylink.KindConflict, paylink.CodeAuthenticationPending,
	"your bank has not finished checking this payment yet: finish the check your bank started, then come back to this page")

// completedByAnother reports whether CompleteThreeDS refused because
// another request had already taken the attempt to complete it.
func completedByAnother(err error) bool {
	if err == nil {
		return false
	}
	code := paylink.AsError(err).Code
	return code == paylink.CodeAuthenticationComplete || code == paylink.CodeOperationInProgress
}

// awaitOutcome reads t again (reload) until it leaves PROCESSING, for at
// most completionWait: another load of the return address may be
// completing it. A payment whose processor has not answered by then is
// returned still PROCESSING, and the page says so.
func awaitOutcome(ctx context.Context, t *paylink.Transaction, reload func() (*paylink.Transaction, error)) (*paylink.Transaction, error) {
	deadline := time.NewTimer(completionWait)
	defer deadline.Stop()
	poll := time.NewTicker(completionPoll)
	defer poll.Stop()
	for t.Status == paylink.StatusProcessing {
		select {
		case <-ctx.Done():
			return t, nil
		case <-deadline.C:
			return t, nil
		case <-poll.C:
		}
		next, err := reload()
		if err != nil {
			return nil, err
		}
		t = next
	}
	return t, nil
}
