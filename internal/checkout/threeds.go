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
// threeDSReturn.
func (h *Handler) linkReturn(w http.ResponseWriter, r *http.Request) {
	to, err := h.svc.LinkReturnURL(r.Context(), r.PathValue("id"), r.URL.Query().Get("purchase_reference"))
	if err != nil {
		h.pageError(w, r, err)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// threeDSReturn is where a customer back from the challenge page lands,
// with purchase_reference: the payment is completed and its result shown.
// A browser may load the address several times at once (a double click,
// a restored tab); only one load completes the payment, and the others
// wait for that outcome and show it too.
func (h *Handler) threeDSReturn(rq *request) error {
	ctx, ref := rq.r.Context(), rq.r.URL.Query().Get("purchase_reference")
	t, err := h.svc.LinkTransaction(ctx, rq.ls, ref)
	if err == nil && t.Status == paylink.StatusRequiresAuthentication {
		t, err = h.svc.CompleteThreeDS(ctx, rq.ls.Merchant, t.Reference)
		if completedByAnother(err) {
			if again, rerr := h.svc.LinkTransaction(ctx, rq.ls, ref); rerr == nil && again.Status != paylink.StatusRequiresAuthentication {
				t, err = again, nil
			}
		}
	}
	if err == nil && t.Status == paylink.StatusProcessing {
		t, err = h.awaitOutcome(ctx, rq.ls, t)
	}
	return h.result(rq, h.newView(rq), t, err)
}

// completedByAnother reports whether CompleteThreeDS refused because
// another request had already taken the attempt to complete it.
func completedByAnother(err error) bool {
	if err == nil {
		return false
	}
	code := paylink.AsError(err).Code
	return code == paylink.CodeAuthenticationComplete || code == paylink.CodeOperationInProgress
}

// awaitOutcome reads t again until it leaves PROCESSING, for at most
// completionWait. A payment whose processor has not answered by then is
// returned still PROCESSING, and the page says so.
func (h *Handler) awaitOutcome(ctx context.Context, ls *paylink.LinkSession, t *paylink.Transaction) (*paylink.Transaction, error) {
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
		next, err := h.svc.LinkTransaction(ctx, ls, t.Reference)
		if err != nil {
			return nil, err
		}
		t = next
	}
	return t, nil
}
