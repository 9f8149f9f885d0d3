package checkout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// show renders the page: the form while the link is payable, else its
// state (paid with the transaction reference, cancelled, expired, or a
// payment in progress).
func (h *Handler) show(rq *request) error {
	v := h.newView(rq)
	if err := h.fillPaid(rq, v); err != nil {
		return err
	}
	if err := h.fillInProgress(rq, v); err != nil {
		return err
	}
	h.writePage(rq.w, rq.r, http.StatusOK, v, h.cachedPage)
	return nil
}

// cachedPage renders v through the page cache (pagecache.go): the page
// a link shows on GET, with nothing a customer typed.
func (h *Handler) cachedPage(v *view) ([]byte, error) { return h.pages.page(v, h.execute) }

// fillPaid adds the success panel to a paid link's view.
func (h *Handler) fillPaid(rq *request, v *view) error {
	l := rq.ls.Link
	if l.Status != paylink.LinkPaid {
		return nil
	}
	t, err := h.svc.LinkTransaction(rq.r.Context(), rq.ls, l.PaidReference)
	if err != nil {
		return err
	}
	v.Paid = &paidView{Reference: t.Reference, Amount: money(t.Total, t.Currency), Surcharge: "None", Method: methodName(t)}
	if t.Surcharge > 0 {
		v.Paid.Surcharge = money(t.Surcharge, t.Currency)
	}
	return nil
}

// fillInProgress marks the view of an unpaid link held by an attempt this
// browser cannot replace (another browser's, or its own the processor is
// still answering): the page says a payment is in progress rather than
// offer a form that would be refused. Only a claimed link costs a read.
func (h *Handler) fillInProgress(rq *request, v *view) error {
	if v.State != paylink.LinkUnpaid || v.Paid != nil || rq.ls.Link.ClaimedAt.IsZero() {
		return nil
	}
	err := h.svc.CheckLinkPayable(rq.r.Context(), rq.ls, browserOf(rq.r))
	switch e := paylink.AsError(err); {
	case err == nil:
	case e.Code == paylink.CodeLinkInProgress:
		v.InProgress = true
		if v.InDoubt, err = h.svc.LinkHeldInDoubt(rq.r.Context(), rq.ls); err != nil {
			return err
		}
	case e.Kind != paylink.KindConflict: // a conflict is the link paid, cancelled or expired since it was read
		return err
	}
	return nil
}

// methodName describes how a transaction was paid.
func methodName(t *paylink.Transaction) string {
	switch t.PaymentType {
	case paylink.PaymentTypeApplePay:
		return "Apple Pay"
	case paylink.PaymentTypeGooglePay:
		return "Google Pay"
	case paylink.PaymentTypeZip:
		return "Zip"
	}
	if c := t.Details.Card; c != nil {
		return brandName(c.Brand) + " ending " + c.Masked[len(c.Masked)-4:]
	}
	return "Card"
}

// payCard takes the card form (both modes).
func (h *Handler) payCard(rq *request) error {
	if err := rq.checkCSRF(); err != nil {
		return err
	}
	v := h.newView(rq)
	v.Form = readForm(rq.r, v.Errors)
	card := readCard(rq.r, v.Errors)
	p := paylink.LinkPayment{PaymentType: paylink.PaymentTypeCard, Customer: v.Form.customer(rq.r), Card: card, Browser: browserOf(rq.r)}
	if v.VT {
		p.InvoiceNumber = v.Form.InvoiceNumber
	} else {
		p.ReturnURL = strings.TrimRight(h.svc.Config().BaseURL, "/") + paylink.LinkReturnPath + rq.ls.Link.ID
	}
	if len(v.Errors) > 0 { // the payment would check the details and the card: list their problems now too
		if err := h.svc.CheckLinkPayment(rq.ls, p); err != nil {
			formErrors(paylink.AsError(err), v.Errors, &v.Form)
		}
		return h.render(rq, http.StatusBadRequest, v)
	}
	t, err := h.pay(rq, func() (*paylink.Transaction, error) { return h.svc.PayLink(rq.r.Context(), rq.ls, p) })
	return h.result(rq, v, t, err)
}

// pay makes a payment of the link with attempt (card, wallet or Zip).
// When an attempt holds the link and it is this browser's own (a double
// click or a reload of the form's POST while the processor answers), it
// waits for that attempt's outcome, as a 3-D Secure return does
// (awaitOutcome), and shows it: paid, declined, or still not confirmed.
// An own attempt that now waits for its challenge, whose address went to
// the earlier request, is replaced by a new attempt (PayLink cancels it;
// it has taken no money). With no attempt of its own, the payment is
// tried once more, in case the holder has just ended; another browser's
// attempt leaves it refused as busy.
func (h *Handler) pay(rq *request, attempt func() (*paylink.Transaction, error)) (*paylink.Transaction, error) {
	t, err := attempt()
	if err == nil || paylink.AsError(err).Code != paylink.CodeLinkInProgress {
		return t, err
	}
	ctx := rq.r.Context()
	first, err := h.svc.OwnLinkAttempt(ctx, rq.ls, browserOf(rq.r))
	switch {
	case err != nil:
		return nil, err
	case first == nil:
		return attempt()
	}
	ref := first.Reference
	first, err = awaitOutcome(ctx, first, func() (*paylink.Transaction, error) { return h.svc.LinkTransaction(ctx, rq.ls, ref) })
	switch {
	case err != nil:
		return nil, err
	case first.Status == paylink.StatusRequiresAuthentication:
		return attempt()
	}
	return first, nil
}

// result shows the outcome of an attempt: success and 3-D Secure redirect
// (303, so that a reload does not pay again), a decline or a problem with
// the form on the page itself.
func (h *Handler) result(rq *request, v *view, t *paylink.Transaction, err error) error {
	httpx.Note(rq.r, "merchant", rq.ls.Link.MerchantID)
	if err != nil {
		return h.attemptError(rq, v, paylink.AsError(err))
	}
	httpx.Note(rq.r, "reference", t.Reference)
	switch t.Status {
	case paylink.StatusApproved:
		http.Redirect(rq.w, rq.r, rq.base, http.StatusSeeOther)
		return nil
	case paylink.StatusRequiresAuthentication:
		if t.AuthenticationURL == "" {
			return paylink.Internal("3-D Secure", nil)
		}
		http.Redirect(rq.w, rq.r, t.AuthenticationURL, http.StatusSeeOther)
		return nil
	case paylink.StatusProcessing, paylink.StatusUnknown:
		// The processor's answer was lost: it may have taken the money.
		v.Alert = "Payment not confirmed yet: the payment processor has not answered. Do not pay again; " +
			"the merchant will see the outcome as soon as the processor confirms it."
		// The attempt keeps the link until its outcome is known; one the
		// processor may still answer is in progress, not yet in doubt
		// (LinkHeldInDoubt's rule, as every other browser is told), and
		// the in-doubt notice says not to pay again, once.
		v.InProgress = true
		doubt, err := h.svc.LinkHeldInDoubt(rq.r.Context(), rq.ls)
		if err != nil {
			return err
		}
		if v.InDoubt = doubt || t.Status == paylink.StatusUnknown; v.InDoubt {
			v.Alert = ""
		}
		return h.render(rq, http.StatusOK, v)
	}
	v.Alert = notCompleted(t)
	if v.State == paylink.LinkUnpaid {
		v.Alert += " " + tryAgain(t)
	}
	// A late 3-D Secure return may find its link paid by another attempt
	// since: show that payment, not the form.
	if err := h.fillPaid(rq, v); err != nil {
		return err
	}
	return h.render(rq, http.StatusOK, v)
}

// notCompleted tells the customer that payment t did not go through, why,
// and, once, that no money was taken.
func notCompleted(t *paylink.Transaction) string {
	msg := "Payment not completed: " + strings.TrimSuffix(customerReason(t), ".") + "."
	if said := strings.ToLower(msg); !strings.Contains(said, "no money was taken") && !strings.Contains(said, "not charged") {
		msg += " No money was taken."
	}
	return msg
}

// tryAgain is what the customer of a link can do after payment t did not
// go through: after a processing error, try again a little later; else
// check the details.
func tryAgain(t *paylink.Transaction) string {
	if processingError(t) {
		return "Try again in a few minutes, or use another card or payment method."
	}
	return "Check the details and try again, or use another card or payment method."
}

// processingError reports whether payment t failed at its processor,
// which answered with a code of its own ("96", system malfunction), as
// opposed to one paylink ended (3-D Secure not completed in time), whose
// message is written for the customer.
func processingError(t *paylink.Transaction) bool {
	return t.Status == paylink.StatusFailed && t.Details.Decline != nil && t.Details.Decline.ProcessorCode != ""
}

// insufficientFunds is the card networks' response code for a decline for
// insufficient funds (ISO 8583 "51").
const insufficientFunds = "51"

// customerReason is why payment t did not go through, for its payer: a
// card issuer's decline or a processor's failure in plain words (the
// processor's message speaks to the merchant: "ask the customer to use
// another card", "try again later"), anything else (3-D Secure, an
// attempt paylink ended) as recorded.
func customerReason(t *paylink.Transaction) string {
	if processingError(t) {
		return "the payment processor could not process it"
	}
	if t.Status != paylink.StatusDeclined || t.Details.Decline == nil || t.Details.Decline.ProcessorCode == "" {
		return t.Details.Message
	}
	if t.Details.Decline.ProcessorCode == insufficientFunds {
		return "your card was declined for insufficient funds"
	}
	return "your card was declined by your bank"
}

// attemptError shows a refused attempt on the page: problems with the
// form next to their fields; a paid, cancelled, busy or rate-limited link
// with its current state and the reason.
func (h *Handler) attemptError(rq *request, v *view, e *paylink.Error) error {
	switch {
	case e.Kind == paylink.KindInvalid && len(e.Fields) > 0:
		formErrors(e, v.Errors, &v.Form)
		return h.render(rq, http.StatusBadRequest, v)
	case e.Kind != paylink.KindConflict && e.Kind != paylink.KindRateLimited:
		return e
	}
	ls, err := h.svc.OpenLink(rq.r.Context(), rq.r.PathValue("token"))
	if err != nil {
		return err
	}
	rq.ls = ls
	fresh := h.newView(rq)
	fresh.Form, fresh.Alert = v.Form, sentence(e.Message)
	if err := h.fillPaid(rq, fresh); err != nil {
		return err
	}
	if err := h.fillInProgress(rq, fresh); err != nil {
		return err
	}
	if fresh.InProgress {
		fresh.Alert = "" // the page's in-progress notice says it, once
	}
	if e.Kind == paylink.KindRateLimited {
		wait := attemptsAgainIn(ls.Link, h.svc.Now())
		rq.w.Header().Set("Retry-After", strconv.Itoa(wait))
		fresh.Alert = "Too many payment attempts on this link: wait " + minutes(wait) + " before trying again."
	}
	return h.render(rq, httpx.Status(e.Kind), fresh)
}

// attemptsAgainIn is how many seconds from now link l takes attempts
// again: the end of its attempt window, at least one.
func attemptsAgainIn(l *paylink.PaymentLink, now time.Time) int {
	wait := l.WindowStart.Add(paylink.LinkAttemptWindow).Sub(now)
	return max(1, int(math.Ceil(wait.Seconds())))
}

// minutes says a wait of seconds in whole minutes, rounded up: "1
// minute", "14 minutes".
func minutes(seconds int) string {
	n := (seconds + 59) / 60
	if n == 1 {
		return "1 minute"
	}
	return strconv.Itoa(n) + " minutes"
}

// surcharge answers the script's live surcharge quote for a card number.
func (h *Handler) surcharge(rq *request) error {
	if err := rq.checkCSRF(); err != nil {
		return err
	}
	number, err := quoteNumber(rq.r.Body)
	if err != nil {
		return err
	}
	q, err := h.svc.LinkSurcharge(rq.ls, number)
	if err != nil {
		return err
	}
	l := rq.ls.Link
	rq.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	return json.NewEncoder(rq.w).Encode(map[string]string{
		"brand": q.Card.Brand, "brand_name": brandName(q.Card.Brand), "percent": q.Rate.String(),
		"surcharge": money(q.Amount, q.Currency), "total": money(l.Amount+q.Amount, q.Currency),
		"surcharge_label": surchargeLabel(q, true),
	})
}

// quoteNumber reads the card number of a live surcharge quote's body,
// {"card_number": "..."}: one JSON object and nothing after it, the
// number a string. The quote is the page script's own call, shown and
// never charged (a payment works its surcharge out again from the card
// it is sent), so the body is read by encoding/json's rules, not the
// API's lenient ones: a key sent twice is read as its last value.
func quoteNumber(body io.Reader) (string, error) {
	var in struct {
		Number string `json:"card_number"`
	}
	dec := json.NewDecoder(body)
	err := dec.Decode(&in)
	if err == nil { // nothing may follow the object, up to the body's end
		if err = dec.Decode(&struct{}{}); err == nil {
			err = errors.New("data after the JSON object")
		} else if err == io.EOF {
			err = nil
		}
	}
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return "", paylink.Errorf(paylink.KindTooLarge, paylink.CodeBodyTooLarge, "request body is larger than %d bytes", tooLarge.Limit)
	}
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Field == "card_number" {
		return "", paylink.FieldErrors{"card_number": "must be a string"}.Err()
	}
	if err != nil {
		return "", paylink.Errorf(paylink.KindInvalid, paylink.CodeMalformedJSON,
			"body must be one JSON object, {\"card_number\": \"...\"}, sent as Content-Type: application/json")
	}
	return in.Number, nil
}

// walletSheet shows the simulated wallet sheet for the customer to approve.
func (h *Handler) walletSheet(rq *request) error {
	w, answered, err := h.wallet(rq, false)
	if answered || err != nil {
		return err
	}
	card := w.Offer(h.svc.Now())
	q, err := h.svc.LinkSurcharge(rq.ls, card.Number)
	if err != nil {
		return err
	}
	v := h.newView(rq)
	v.Form = readForm(rq.r, v.Errors)
	if refused, err := h.refuseDetails(rq, v); refused || err != nil {
		return err
	}
	v.Surcharge, v.Total = surchargeLabel(q, false), money(rq.ls.Link.Amount+q.Amount, q.Currency)
	v.Sheet = &sheetView{Provider: w.Name() + " (sandbox)", Action: rq.base + "/wallet/" + w.Path() + "/confirm",
		Detail: brandName(q.Card.Brand) + " ending " + q.Card.Masked[len(q.Card.Masked)-4:],
		Total:  v.Total, Cancel: rq.base}
	return h.render(rq, http.StatusOK, v)
}

// walletPay charges the card the customer approved in the wallet sheet.
func (h *Handler) walletPay(rq *request) error {
	w, answered, err := h.wallet(rq, true)
	if answered || err != nil {
		return err
	}
	card, err := w.Approve(rq.r, h.svc.Now())
	if err != nil {
		return err
	}
	v := h.newView(rq)
	v.Form = readForm(rq.r, v.Errors)
	p := paylink.LinkPayment{PaymentType: w.PaymentType(), Customer: v.Form.customer(rq.r), Card: card, Browser: browserOf(rq.r)}
	t, err := h.pay(rq, func() (*paylink.Transaction, error) { return h.svc.PayLink(rq.r.Context(), rq.ls, p) })
	return h.result(rq, v, t, err)
}

// wallet checks the CSRF token and that the link can take a payment, and
// returns the wallet of the URL; answered when the link's page was
// written instead (startAlternative, confirm for the sheet's approval).
func (h *Handler) wallet(rq *request, confirm bool) (w Wallet, answered bool, err error) {
	if answered, err := h.startAlternative(rq, confirm); answered || err != nil {
		return nil, answered, err
	}
	w, ok := h.wallets[rq.r.PathValue("method")]
	if !ok {
		return nil, false, errUnknownMethod
	}
	return w, false, nil
}

// startAlternative guards the wallet and Zip pages. A link that can take
// no payment now (paid, held by an attempt in progress, past its attempts)
// is answered with its page, as a card payment refused so is
// (attemptError: the paid panel, or the in-progress notice with its
// reload link), and reported as answered; it was a bare error page. A
// confirm (the approval posted from a wallet's sheet or Zip's page)
// leaves an attempt in progress to the payment itself, which waits for
// it when it is this browser's own (pay): a double click on the sheet.
func (h *Handler) startAlternative(rq *request, confirm bool) (answered bool, err error) {
	if err := rq.checkCSRF(); err != nil {
		return false, err
	}
	if rq.ls.Mode != paylink.ChannelHPP {
		return false, errUnknownMethod
	}
	err = h.svc.CheckLinkPayable(rq.r.Context(), rq.ls, browserOf(rq.r))
	if e := paylink.AsError(err); err != nil && confirm && e.Code == paylink.CodeLinkInProgress {
		return false, nil
	}
	if err == nil {
		err = h.svc.CheckLinkAttempts(rq.ls)
	}
	if e := paylink.AsError(err); err != nil && (e.Kind == paylink.KindConflict || e.Kind == paylink.KindRateLimited) {
		v := h.newView(rq)
		v.Form = readForm(rq.r, v.Errors)
		return true, h.attemptError(rq, v, e)
	}
	return false, err
}

// refuseDetails shows the form again, with each problem beside its field
// (400), when the customer's details in v would be refused by the
// payment: a wallet's sheet or Zip's approval is not offered for them.
func (h *Handler) refuseDetails(rq *request, v *view) (refused bool, err error) {
	checkDetails(rq, v)
	if len(v.Errors) == 0 {
		return false, nil
	}
	return true, h.render(rq, http.StatusBadRequest, v)
}

// checkDetails adds to v's errors, beside their fields, the problems the
// payment would find with the customer's details in v's form.
func checkDetails(rq *request, v *view) {
	if err := paylink.CheckLinkCustomer(v.Form.customer(rq.r)); err != nil {
		formErrors(paylink.AsError(err), v.Errors, &v.Form)
	}
}

// zipPage shows the simulated Zip approval page.
func (h *Handler) zipPage(rq *request) error {
	if answered, err := h.startAlternative(rq, false); answered || err != nil {
		return err
	}
	v := h.newView(rq)
	v.Form = readForm(rq.r, v.Errors)
	if refused, err := h.refuseDetails(rq, v); refused || err != nil {
		return err
	}
	v.Surcharge = "None with " + h.zip.Name()
	v.Sheet = &sheetView{Provider: h.zip.Name() + " (sandbox)", Action: rq.base + "/zip/confirm",
		Detail: "Pay in 4 interest-free instalments", Total: v.Subtotal, Cancel: rq.base}
	return h.render(rq, http.StatusOK, v)
}

// zipPay charges the purchase the customer approved at Zip.
func (h *Handler) zipPay(rq *request) error {
	if answered, err := h.startAlternative(rq, true); answered || err != nil {
		return err
	}
	v := h.newView(rq)
	v.Form = readForm(rq.r, v.Errors)
	t, err := h.pay(rq, func() (*paylink.Transaction, error) {
		return h.svc.PayLinkAlternative(rq.r.Context(), rq.ls, h.zip.PaymentType(), v.Form.customer(rq.r), browserOf(rq.r), h.zip.Charge(rq.r))
	})
	return h.result(rq, v, t, err)
}

// render writes a page.
func (h *Handler) render(rq *request, status int, v *view) error {
	h.writePage(rq.w, rq.r, status, v, h.execute)
	return nil
}

// execute renders the page template with v.
func (h *Handler) execute(v *view) ([]byte, error) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, "page", v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePage renders the page into memory first and sends it in one write
// with its length: rendering straight into the response sent it chunked,
// in many small writes (a system call each under load), and could not
// turn a failed rendering into a clean 500.
func (h *Handler) writePage(w http.ResponseWriter, r *http.Request, status int, v *view, render func(*view) ([]byte, error)) {
	page, err := render(v)
	if err != nil {
		h.log.ErrorContext(r.Context(), "render checkout page", "route", r.Pattern, "err", err)
		http.Error(w, "Something went wrong on our side. No money was taken. Please try again.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(status)
	w.Write(page)
}

// NotFound answers an address under the pages' paths that is no page
// (/pay without a token, /checkout/return/ without a link): the pages'
// own 404, in HTML, for the customer's browser.
func (h *Handler) NotFound(w http.ResponseWriter, r *http.Request) {
	h.pageError(w, r, errNoPage)
}

// MethodNotAllowed answers a page address under a method its page does
// not take (PUT /pay/{token}): the pages' own HTML 405, with Allow.
func (h *Handler) MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	h.pageError(w, r, paylink.Errorf(paylink.KindMethodNotAllowed, paylink.CodeMethodNotAllowed,
		"this page cannot be opened that way: open the link you were sent in a browser"))
}

// errNoPage answers an address that is no page of a link.
var errNoPage = paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound,
	"there is no payment page at this address: check the link you were sent")

// pageError renders err as a page of its own, with the pages' security
// headers and a fresh nonce.
func (h *Handler) pageError(w http.ResponseWriter, r *http.Request, err error) {
	nonce, nerr := h.randomString(18)
	if nerr != nil {
		h.fail(w, r, nerr)
		return
	}
	securityHeaders(w, nonce)
	h.renderError(w, r, nonce, "", err)
}

// renderError shows an error as a page, with a link back to the link's
// page when back names it, or as JSON to the script.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, nonce, back string, err error) {
	if httpx.ClientGone(r, err) {
		w.WriteHeader(httpx.StatusClientClosedRequest)
		return
	}
	e := *paylink.AsError(err) // a copy: its Message is rewritten below, and err may be a shared sentinel
	httpx.LogFailure(h.log, r, &e)
	switch e.Kind {
	case paylink.KindInternal:
		e.Message = "Something went wrong on our side. No money was taken. Please try again."
	case paylink.KindUnavailable:
		httpx.SetRetryAfter(w, err)
		if e.Code == paylink.CodeServiceUnavailable {
			e.Message = "The payment service is briefly unavailable. Please try again in a moment."
		}
	}
	status := httpx.Status(e.Kind)
	if strings.HasSuffix(r.Pattern, "/surcharge") {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error_code": e.Code, "error_message": e.Message})
		return
	}
	h.writePage(w, r, status, &view{Nonce: nonce, CSS: h.css, Title: "Payment", Alert: sentence(e.Message), State: "error", Base: back}, h.execute)
}
