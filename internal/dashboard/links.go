package dashboard

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/httpx"
)

// The payment links page: create a link (staff and admin), list the
// newest links with their state, open one to copy its hosted page and
// virtual terminal addresses, and cancel an unpaid one. Viewers read.

// linksData is the links page.
type linksData struct {
	Links    []*paylink.PaymentLink
	Now      time.Time // the Service's clock: a link's state is Link.State(Now), expired included
	Form     linkForm
	IdemKey  string // the create form's idempotency key
	CanWrite bool
}

// linkForm is what the create form was filled in with, shown again
// when it is refused.
type linkForm struct {
	Amount, Currency, MerchantReference string
	FirstName, LastName, Email, Phone   string
	CustomerReference                   string
	// ExpiresInDays is how many days the link takes payment, "" for no
	// end; Surcharge whether the page adds the card surcharge.
	ExpiresInDays string
	Surcharge     bool
}

// maxLinkDays is the longest expiry the form offers: the API's limit.
var maxLinkDays = int(paylink.MaxLinkLifetime / (24 * time.Hour))

// linkData is one link's page.
type linkData struct {
	Link     *paylink.PaymentLink
	State    paylink.LinkStatus
	URLs     paylink.LinkURLs
	CanWrite bool
	CanVT    bool
}

// links lists the newest links with the create form.
func (h *Handler) links(rq *request) error {
	return h.renderLinks(rq, http.StatusOK, view{}, linkForm{Currency: "AUD", Surcharge: true})
}

// renderLinks renders the links page with v's messages and the form.
func (h *Handler) renderLinks(rq *request, status int, v view, f linkForm) error {
	list, err := h.svc.ListLinks(rq.r.Context(), rq.ss.Merchant, paylink.MaxLinkList)
	if err != nil {
		return err
	}
	key, err := newIdempotencyKey()
	if err != nil {
		return err
	}
	v.Title = "Payment links"
	v.Data = linksData{Links: list, Now: h.svc.Now(), Form: f, IdemKey: key, CanWrite: rq.ss.User.Role.Can(paylink.PermLinks)}
	rq.render(status, "links", v)
	return nil
}

// createLink creates a link with the API's rules and shows it. The
// form's idempotency key makes a repeated submission show the link the
// first one made.
func (h *Handler) createLink(rq *request) error {
	ctx, m := rq.r.Context(), rq.ss.Merchant
	f := linkForm{
		Amount: strings.TrimSpace(rq.r.PostFormValue("amount")), Currency: strings.ToUpper(strings.TrimSpace(rq.r.PostFormValue("currency"))),
		MerchantReference: strings.TrimSpace(rq.r.PostFormValue("merchantReference")),
		FirstName:         strings.TrimSpace(rq.r.PostFormValue("customer.first_name")),
		LastName:          strings.TrimSpace(rq.r.PostFormValue("customer.last_name")),
		Email:             strings.TrimSpace(rq.r.PostFormValue("customer.email")),
		Phone:             strings.TrimSpace(rq.r.PostFormValue("customer.phone")),
		CustomerReference: strings.TrimSpace(rq.r.PostFormValue("customer.reference")),
		ExpiresInDays:     strings.TrimSpace(rq.r.PostFormValue("expires_in_days")),
		Surcharge:         rq.r.PostFormValue("surcharge") == "on",
	}
	n, err := f.newLink(h.svc.Now())
	if err != nil {
		return h.linkFormError(rq, f, err)
	}
	replay, finish, err := h.once(rq, "links", f.Amount, f.Currency, f.MerchantReference, f.FirstName, f.LastName,
		f.Email, f.Phone, f.CustomerReference, f.ExpiresInDays, strconv.FormatBool(f.Surcharge))
	if err != nil {
		return h.linkFormError(rq, f, err)
	}
	if replay != nil {
		return rq.redirect("/dashboard/links/" + string(replay.Response) + "?done=created")
	}
	l, _, err := h.svc.CreateLink(ctx, m, n)
	if err != nil {
		failed(finish, err)
		return h.linkFormError(rq, f, err)
	}
	finish(http.StatusCreated, []byte(l.ID))
	return rq.redirect("/dashboard/links/" + l.ID + "?done=created")
}

// newLink reads the form's amount as the API does (major units), and its
// expiry as whole days from now.
func (f linkForm) newLink(now time.Time) (paylink.NewLink, error) {
	n := paylink.NewLink{Currency: f.Currency, MerchantReference: f.MerchantReference, NoSurcharge: !f.Surcharge, Customer: paylink.Customer{
		FirstName: f.FirstName, LastName: f.LastName, Email: f.Email, Phone: f.Phone, Reference: f.CustomerReference}}
	if f.ExpiresInDays != "" {
		days, err := strconv.Atoi(f.ExpiresInDays)
		if err != nil || days < 1 || days > maxLinkDays {
			return n, &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: "check the highlighted fields",
				Fields: map[string]string{"expires_at": fmt.Sprintf("must be a whole number of days from 1 to %d, or empty for no end", maxLinkDays)}}
		}
		n.ExpiresAt = now.Add(time.Duration(days) * 24 * time.Hour)
	}
	cur, ok := paylink.LookupCurrency(f.Currency)
	if !ok {
		return n, &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: "check the highlighted fields",
			Fields: map[string]string{"currency": "must be a supported ISO 4217 currency code such as AUD"}}
	}
	amount, err := paylink.ParseAmount(f.Amount, cur)
	if err != nil {
		return n, &paylink.Error{Kind: paylink.KindInvalid, Code: paylink.CodeInvalidRequest, Message: "check the highlighted fields",
			Fields: map[string]string{"amount": err.Error()}}
	}
	n.Amount = amount
	return n, nil
}

// linkFormError shows the create form again with the refusal.
func (h *Handler) linkFormError(rq *request, f linkForm, err error) error {
	e := paylink.AsError(err)
	if e.Kind != paylink.KindInvalid && e.Kind != paylink.KindConflict {
		return err
	}
	return h.renderLinks(rq, httpx.Status(e.Kind), view{Error: errorText(e), Fields: e.Fields}, f.masked())
}

// masked is the form as a refusal shows it again: any card number typed
// into a field masked, so that the page never carries one.
func (f linkForm) masked() linkForm {
	for _, s := range []*string{&f.Amount, &f.Currency, &f.MerchantReference, &f.FirstName, &f.LastName, &f.Email,
		&f.Phone, &f.CustomerReference, &f.ExpiresInDays} {
		*s = paylink.MaskCardNumbers(*s)
	}
	return f
}

// link shows one link with its addresses.
func (h *Handler) link(rq *request) error {
	return h.renderLink(rq, http.StatusOK, view{Notice: linkNotice(rq.r.URL.Query().Get("done"))})
}

// linkNotice is the message after an action on a link.
func linkNotice(done string) string {
	switch done {
	case "created":
		return "Payment link created. Send the customer the payment page address below."
	case "cancelled":
		return "Payment link cancelled: it takes no further payment."
	}
	return ""
}

// renderLink renders a link's page.
func (h *Handler) renderLink(rq *request, status int, v view) error {
	l, urls, err := h.svc.Link(rq.r.Context(), rq.ss.Merchant, rq.r.PathValue("id"))
	if err != nil {
		return err
	}
	role := rq.ss.User.Role
	v.Title = "Payment link " + l.ID
	v.Data = linkData{Link: l, State: l.State(h.svc.Now()), URLs: urls,
		CanWrite: role.Can(paylink.PermLinks), CanVT: role.Can(paylink.PermVirtualTerminal)}
	rq.render(status, "link", v)
	return nil
}

// cancelLink cancels an unpaid link.
func (h *Handler) cancelLink(rq *request) error {
	if _, _, err := h.svc.CancelLink(rq.r.Context(), rq.ss.Merchant, rq.r.PathValue("id")); err != nil {
		e := paylink.AsError(err)
		if e.Kind != paylink.KindConflict && e.Kind != paylink.KindInvalid {
			return err
		}
		return h.renderLink(rq, httpx.Status(e.Kind), view{Error: e.Message})
	}
	return rq.redirect("/dashboard/links/" + rq.r.PathValue("id") + "?done=cancelled")
}
