package dashboard

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// The payments pages: the merchant's transactions (filtered, searched,
// keyset-paginated, exported as CSV) and one payment with its money,
// card, customer, 3-D Secure result, timeline and the actions the role
// allows. Direct debits (directdebits.go) share the list and the page.

// paymentsBase is the path of the payments list.
const paymentsBase = "/dashboard/payments"

// listData is a payments or direct debits list.
type listData struct {
	Base   string // the list's path
	Debits bool   // the direct debits list: no method filter, no export
	Query  url.Values
	// Here is this list with its filter and page, "" for the whole list's
	// first page: each payment link carries it as back.
	Here     string
	Payments []*paylink.Transaction
	Pages    pageLinks
	CSVURL   string
	Statuses []paylink.Status
	Methods  []string
}

// payments lists the merchant's payments, or exports them as CSV with
// format=csv.
func (h *Handler) payments(rq *request) error {
	return h.list(rq, listData{Base: paymentsBase}, "Payments")
}

// list renders a list of d.Base with the request's filter.
func (h *Handler) list(rq *request, d listData, title string) error {
	raw := rq.r.URL.Query()
	q := maskedValues(raw) // the page, its links and the export's never carry a card number
	d.Query, d.Statuses, d.Methods = q, paylink.FilterStatuses(d.Debits), paylink.PaymentTypes()
	v := view{Title: title, Data: &d}
	f, err := paylink.ParsePaymentFilter(raw)
	if err != nil {
		return rq.formError("payments", v, err)
	}
	if d.Debits {
		f.Methods = []string{paylink.PaymentTypeBankAccount}
	}
	if q.Get("format") == "csv" && !d.Debits {
		return h.exportCSV(rq, v, f)
	}
	pg, err := h.svc.ListPayments(rq.r.Context(), rq.ss.Merchant, f)
	if err != nil {
		return rq.formError("payments", v, err)
	}
	d.Payments = pg.Payments
	d.Pages = pagesOf(q, d.Base, pg.Next)
	if set := nonEmpty(q); len(set) > 0 {
		d.Here = linkWith(set, d.Base, nil)
	}
	d.CSVURL = linkWith(q, d.Base, url.Values{"format": {"csv"}, "cursor": nil, "prev": nil})
	rq.render(http.StatusOK, "payments", v)
	return nil
}

// linkWith is base with q's parameters, each named in set given its
// values instead (or removed when it has none).
func linkWith(q url.Values, base string, set url.Values) string {
	c := url.Values{}
	for k, vs := range q {
		if _, replaced := set[k]; !replaced {
			c[k] = slices.Clone(vs)
		}
	}
	for k, vs := range set {
		if len(vs) > 0 {
			c[k] = slices.Clone(vs)
		}
	}
	if len(c) == 0 {
		return base
	}
	return base + "?" + c.Encode()
}

// exportCSV writes every payment matching f as CSV. The filter is
// checked before the first byte, so a bad one still gets its page.
func (h *Handler) exportCSV(rq *request, v view, f paylink.PaymentFilter) error {
	probe := f
	probe.Cursor, probe.Limit = "", 1
	if _, err := h.svc.ListPayments(rq.r.Context(), rq.ss.Merchant, probe); err != nil {
		return rq.formError("payments", v, err)
	}
	w := rq.w
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="payments.csv"`)
	if err := h.svc.WritePaymentsCSV(rq.r.Context(), w, rq.ss.Merchant, f); err != nil && !httpx.ClientLeft(rq.r, err) {
		h.log.ErrorContext(rq.r.Context(), "dashboard: payments export cut short", "err", err)
		// Its 200 and first pages are sent: ending the answer normally would
		// save a shorter file that looks whole, whose sums are wrong.
		panic(http.ErrAbortHandler)
	}
	return nil
}

// paymentData is the payment page.
type paymentData struct {
	Base string
	Back string // the list it was opened from, with its filter
	// Return is Back as the back parameter of the page's forms, "" when
	// Back is the whole list.
	Return   string
	T        *paylink.Transaction
	Timeline *paylink.Timeline
	Fees     []paylink.FeeLine
	// Deducted and Billed are the fees the ledger deducts from the total
	// and those invoiced separately, each line rounded to the currency;
	// Net is what the merchant keeps of a captured payment after them
	// and after refunds, "" for a payment that took no money.
	Deducted, Billed, Net string
	CanCapture            bool
	CanCancel             bool
	CanRefund             bool
	Refundable            int64
	// Key is the idempotency key of this rendering's forms: submitting a
	// form twice (a double click, a reload) acts once.
	Key string
	// CaptureAmount and RefundAmount fill the forms: the hold's amount
	// and what is left to refund, or, after a refused action (Refused:
	// "capture" or "refund"), the amount the staff member typed, so that
	// a corrected click never sends an amount nobody typed.
	CaptureAmount, RefundAmount, Refused string
}

// FeesLabel names the fees the summary shows: what the ledger deducted,
// or, before a hold's capture or a direct debit's clearing posts them,
// the pricing's estimate of what that will deduct.
func (d paymentData) FeesLabel() string {
	switch {
	case d.T.Status == paylink.StatusPreAuthorised:
		return "Fees to be deducted at capture (estimated)"
	case d.T.Status == paylink.StatusPending && d.T.PaymentType == paylink.PaymentTypeBankAccount:
		return "Fees to be deducted at clearing (estimated)"
	}
	return "Fees deducted"
}

// payment shows one payment of the merchant; another merchant's
// reference is not found.
func (h *Handler) payment(rq *request) error {
	return h.renderPayment(rq, paymentsBase, http.StatusOK, view{})
}

// renderPayment renders the payment of the path's ref under base. A
// page shown without an error carries the notice of the action that led
// to it (the query's done), as the payment now is.
func (h *Handler) renderPayment(rq *request, base string, status int, v view) error {
	tl, err := h.svc.PaymentTimeline(rq.r.Context(), rq.ss.Merchant, rq.r.PathValue("ref"))
	if err != nil {
		return err
	}
	t := tl.Transaction
	if base == debitsBase && t.PaymentType != paylink.PaymentTypeBankAccount {
		return errNoPayment()
	}
	if t.PaymentType == paylink.PaymentTypeBankAccount {
		base = debitsBase
	}
	key, err := newIdempotencyKey()
	if err != nil {
		return err
	}
	role, held := rq.ss.User.Role, h.svc.HoldActive(t)
	ret := backParam(rq.r, base)
	d := paymentData{Base: base, Back: cmp.Or(ret, base), Return: ret, T: t, Timeline: tl, Key: key, Refundable: t.Refundable(),
		CanCapture: role.Can(paylink.PermCapture) && held,
		CanCancel:  role.Can(paylink.PermCancel) && held,
		CanRefund:  role.Can(paylink.PermRefund) && t.Refundable() > 0}
	d.Fees, d.Deducted, d.Billed, d.Net = fees(rq.ss.Merchant, tl)
	d.CaptureAmount, d.RefundAmount = paylink.FormatIn(t.Amount, t.Currency), paylink.FormatIn(d.Refundable, t.Currency)
	if v.Error == "" {
		v.Notice = actionNotice(rq.r.URL.Query().Get("done"), awaitingAnswer(tl))
	} else if rq.r.Method == http.MethodPost {
		d.keepRefused(path.Base(rq.r.URL.Path), rq.r.PostFormValue("amount"))
	}
	v.Title, v.Data = "Payment "+t.Reference, d
	rq.render(status, "payment", v)
	return nil
}

// keepRefused puts the amount typed into a refused capture or refund
// back into its form, marked as the field the error is about (empty when
// what was typed holds a card number: the page never carries one).
func (d *paymentData) keepRefused(action, typed string) {
	if paylink.ContainsCardNumber(typed) {
		typed = ""
	}
	switch action {
	case "capture":
		d.CaptureAmount, d.Refused = typed, action
	case "refund":
		d.RefundAmount, d.Refused = typed, action
	}
}

// fees are the payment's fee lines (exact, as in the webhook's fee
// detail, by the merchant's pricing), its deducted and billed fees, and
// its net after refunds. Once the payment is posted (a card payment
// captured, a debit cleared) the last three are its ledger postings', the
// one record of its money; before, the fees are the pricing's estimate
// and there is no net.
func fees(m *paylink.Merchant, tl *paylink.Timeline) (lines []paylink.FeeLine, deducted, billed, net string) {
	t := tl.Transaction
	lines = paylink.PricingOf(m).FeeLines(t)
	cur, ok := paylink.LookupCurrency(t.Currency)
	if !ok {
		return lines, "", "", ""
	}
	fee, bill, kept, posted := postedFees(tl)
	if !posted {
		fee, bill = paylink.DeductedFee(lines, cur), paylink.BilledFee(lines, cur)
	}
	deducted = paylink.FormatAmount(fee, cur)
	if bill > 0 {
		billed = paylink.FormatAmount(bill, cur)
	}
	if posted {
		net = paylink.FormatAmount(kept, cur)
	}
	return lines, deducted, billed, net
}

// postedFees reads the payment's postings in tl: the fees its charge (or
// a debit's clearing) deducted and billed, and the net of all its
// postings, refunds included. posted is false when it has no charge or
// clearing posting.
func postedFees(tl *paylink.Timeline) (fee, billed, net int64, posted bool) {
	for _, e := range tl.Entries {
		p := e.Posting
		if e.Kind != paylink.TimelinePosting {
			continue
		}
		net += p.Net
		if p.Kind != paylink.PostingCharge && p.Kind != paylink.PostingDirectDebitClear {
			continue
		}
		posted, fee = true, fee+p.Fee
		for _, l := range p.Lines {
			if l.Account == paylink.AccountFeesReceivable {
				billed += l.Amount
			}
		}
	}
	return fee, billed, net, posted
}

// backParam is the list a payment page goes back to, from the request's
// back parameter (the list's links and the page's forms carry it): base
// with the filter and page it was opened from, re-encoded. Anything else
// (another path, another site, a scheme, a fragment, a bad query) is "",
// so the page never links or redirects off the list.
func backParam(r *http.Request, base string) string {
	raw := r.URL.Query().Get("back")
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" || u.Fragment != "" || u.Path != base {
		return ""
	}
	q, err := url.ParseQuery(u.RawQuery)
	if q = nonEmpty(q); err != nil || len(q) == 0 {
		return ""
	}
	return linkWith(maskedValues(q), base, nil)
}

// maskedValues is q with every card number in its values masked, as
// MaskPAN masks one: a search box or filter given one (a staff member
// pasting a caller's card) shows it masked, and no link carries it; a
// stored invoice number whose digits a letter touches is kept, so that
// the next page and the export still find it (MaskIfCardNumber).
func maskedValues(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, vs := range q {
		for _, v := range vs {
			out[k] = append(out[k], paylink.MaskIfCardNumber(v))
		}
	}
	return out
}

// nonEmpty is q without the empty values of a filter form's blank fields
// (an empty prev stays: it is the first page's cursor, see pagesOf).
func nonEmpty(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if v != "" || k == "prev" {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}

// errNoPayment is the 404 of a reference that is not the merchant's.
func errNoPayment() error {
	return paylink.Errorf(paylink.KindNotFound, paylink.CodeNotFound, "no payment with that reference")
}

// amountOf reads the form's amount in the payment's currency; a bad one
// is a 400 naming the field.
func amountOf(rq *request, t *paylink.Transaction) (int64, error) {
	cur, ok := paylink.LookupCurrency(t.Currency)
	raw := strings.TrimSpace(rq.r.PostFormValue("amount"))
	n, err := paylink.ParseTotal(raw, cur) // a refund may be of a whole total; the Service holds it to what is left
	if ok && err == nil && n > 0 {
		return n, nil
	}
	why := "it must be more than zero"
	if err != nil {
		why = err.Error()
		if strings.ContainsFunc(raw, thousandsSeparator) {
			why += " (write it without thousands separators)"
		}
	}
	example := exampleAmount(cur)
	msg := fmt.Sprintf("the amount %q is not a positive amount of %s, such as %s: %s; nothing was changed", paylink.MaskCardNumbers(raw), t.Currency, example, why)
	return 0, &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: msg,
		Fields: map[string]string{"amount": "must be a positive amount of " + t.Currency + ", such as " + example}}
}

// thousandsSeparator reports whether r is a character people write
// between groups of digits: a comma, an apostrophe or any space.
func thousandsSeparator(r rune) bool {
	return r == ',' || r == '\'' || r == '’' || unicode.IsSpace(r)
}

// exampleAmount is twelve units of cur written with its own decimals:
// 12 JPY, 12.00 AUD, 12.000 KWD.
func exampleAmount(cur paylink.Currency) string {
	n, _ := paylink.ParseAmount("12", cur)
	return paylink.FormatAmount(n, cur)
}

// capture captures part or all of a pre-authorised hold.
func (h *Handler) capture(rq *request) error {
	return h.act(rq, "captured", func(a action) error {
		n, err := amountOf(rq, a.t)
		if err != nil {
			return err
		}
		return a.run(func() (string, error) {
			t, err := h.svc.Capture(a.ctx, rq.ss.Merchant, a.t.Reference, paylink.CaptureRequest{Amount: n,
				Currency: a.t.Currency, ApplySurcharge: a.t.Details.ApplySurcharge})
			return a.holdOutcome(t, err, paylink.StatusApproved)
		}, n)
	})
}

// cancel releases a pre-authorised hold.
func (h *Handler) cancel(rq *request) error {
	return h.act(rq, "cancelled", func(a action) error {
		return a.run(func() (string, error) {
			t, err := h.svc.Cancel(a.ctx, rq.ss.Merchant, a.t.Reference, paylink.CancelRequest{})
			return a.holdOutcome(t, err, paylink.StatusPreAuthorisedReversed)
		}, 0)
	})
}

// refund refunds part or all of an approved card payment.
func (h *Handler) refund(rq *request) error {
	return h.act(rq, "refunded", func(a action) error {
		n, err := amountOf(rq, a.t)
		if err != nil {
			return err
		}
		return a.run(func() (string, error) {
			rf, _, err := h.svc.Refund(a.ctx, rq.ss.Merchant, a.t.Reference, paylink.RefundRequest{Amount: n, Currency: a.t.Currency, Customer: a.customer()})
			return a.refundOutcome(rf, err)
		}, n)
	})
}

// customer is the refund request's customer: the payment's, asked for
// from the staff user's address (a refund request names where it came
// from).
func (a action) customer() paylink.Customer {
	c := a.t.Details.Customer
	c.IPAddress = paylink.ActorFrom(a.ctx).IP
	if c.Timezone == "" {
		c.Timezone = "UTC"
	}
	return c
}

// refundOutcome is the notice of a refund, or the error the page shows
// for one the processor or bank refused.
func (a action) refundOutcome(rf *paylink.Refund, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return a.answered(rf.Status, paylink.StatusApproved, func() error {
		return paylink.Errorf(paylink.KindConflict, paylink.CodeRefundNotApproved, "the refund was not approved (%s): %s", rf.Status, rf.Details.Message)
	})
}

// holdOutcome is the notice of a capture or cancel of a hold that is now
// t, or the error the page shows.
func (a action) holdOutcome(t *paylink.Transaction, err error, want paylink.Status) (string, error) {
	if err != nil {
		return "", err
	}
	return a.answered(t.Status, want, func() error {
		return paylink.Errorf(paylink.KindConflict, paylink.CodeInvalidState, "the hold is now %s", t.Status.Public())
	})
}
