package checkout

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/paylink/paylink"
)

// view is what the page templates render. Every merchant- or
// customer-supplied string reaches the page through html/template's
// contextual escaping.
type view struct {
	Nonce    string
	CSRF     string
	CSS      template.CSS `json:"-"` // the Handler's, left out of the page cache's key
	Base     string       // the page's own path
	VT       bool
	Title    string
	Trading  string
	Ref      string // the link's merchant reference
	Subtotal string
	// Surcharge and Total are the amounts of the method being paid when
	// known (a wallet sheet, Zip); else Total is the subtotal and the
	// surcharge is "shown when you enter your card".
	Surcharge   string
	Total       string
	Rates       []rateLine
	NoSurcharge bool
	State       paylink.LinkStatus
	Form        formValues
	Errors      map[string]string
	Alert       string // a decline, a conflict or a rate limit, announced
	Paid        *paidView
	InProgress  bool // an attempt this browser cannot replace holds the link: no form
	InDoubt     bool // and its outcome is in doubt: it holds the link until recorded, not for the timeout
	// HoldMinutes is the longest a 3-D Secure attempt left open holds
	// the link (the service's AuthenticationTimeout), for the notice.
	HoldMinutes int
	Wallets     []walletView
	Zip         bool
	Sheet       *sheetView // the simulated wallet sheet or Zip approval
}

// paidView is the success panel and the paid order summary.
type paidView struct {
	Reference string
	Amount    string // the total paid
	Surcharge string // "None" when none was added
	Method    string
}

// walletView is one express-checkout button.
type walletView struct {
	Name string
	Path string
}

// sheetView is the simulated wallet sheet or Zip approval page.
type sheetView struct {
	Provider string
	Action   string
	Detail   string
	Total    string
	Cancel   string
}

// rateLine is a surcharge rate shown to customers without JavaScript.
type rateLine struct {
	Label string
	Rate  string
}

// newView fills the parts of a view common to every page of a link.
func (h *Handler) newView(rq *request) *view {
	l, m := rq.ls.Link, rq.ls.Merchant
	v := &view{
		Nonce: rq.nonce, CSRF: rq.csrf, CSS: h.css, Base: rq.base, VT: rq.ls.Mode == paylink.ChannelVT,
		Trading: m.TradingName, Ref: l.MerchantReference, Subtotal: money(l.Amount, l.Currency),
		Total: money(l.Amount, l.Currency), NoSurcharge: !l.ApplySurcharge, State: l.State(h.svc.Now()),
		Form: customerForm(l.Customer), Errors: map[string]string{},
		HoldMinutes: int(h.svc.Config().AuthenticationTimeout.Minutes()),
	}
	v.Title = "Pay " + m.TradingName
	if v.VT {
		v.Title = "Virtual terminal: " + m.TradingName
	}
	if l.ApplySurcharge {
		v.Rates = rates(m.Settings.Surcharge)
	}
	if !v.VT {
		for _, w := range h.walletList() {
			v.Wallets = append(v.Wallets, walletView{Name: w.Name(), Path: rq.base + "/wallet/" + w.Path()})
		}
		v.Zip = true
	}
	return v
}

// formFields are the form's fields in the page's reading order, with
// their labels: the order and the names of the error summary.
var formFields = []formField{
	{"customer_reference", "Customer reference"}, {"invoice_number", "Invoice number"},
	{"first_name", "First name"}, {"last_name", "Last name"}, {"email", "Email"}, {"phone", "Phone"},
	{"card_holder", "Name on card"}, {"card_number", "Card number"}, {"card_expiry", "Expiry"},
	{"card_cvc", "Security code"}, {"address", "Address"}, {"address2", "Address line 2"},
	{"city", "City or suburb"}, {"state", "State"}, {"postcode", "Postcode"}, {"country_code", "Country code"},
}

// formField is a field of the form: its input's name and id, and label.
type formField struct{ name, label string }

// summaryItem is one line of the error summary: the field's label and
// problem, linked to its input; a problem with no field of the form has
// neither ID nor label.
type summaryItem struct {
	ID, Label, Message string
}

// ErrorSummary lists the view's form errors in the page's reading order,
// each naming its field; any problem with no field of the form comes last.
func (v *view) ErrorSummary() []summaryItem {
	var out []summaryItem
	for _, f := range formFields {
		if msg, ok := v.Errors[f.name]; ok {
			out = append(out, summaryItem{ID: f.name, Label: f.label, Message: msg})
		}
	}
	var other []string
	for name, msg := range v.Errors {
		if !slices.ContainsFunc(formFields, func(f formField) bool { return f.name == name }) {
			other = append(other, msg)
		}
	}
	slices.Sort(other) // one order on every rendering
	for _, msg := range other {
		out = append(out, summaryItem{Message: msg})
	}
	return out
}

// rates lists the merchant's non-zero surcharge rates.
func rates(r paylink.SurchargeRates) []rateLine {
	var out []rateLine
	for _, x := range []struct {
		label string
		p     paylink.Percent
	}{{"Debit cards", r.Debit}, {"Credit cards", r.Credit}, {"American Express", r.Amex}, {"Cards issued abroad", r.International}} {
		if x.p > 0 {
			out = append(out, rateLine{Label: x.label, Rate: x.p.String() + "%"})
		}
	}
	return out
}

// surchargeLabel is a surcharge quote as the page shows it: "None" when
// nothing is added (the link adds none, or its rate rounds to nothing on
// the amount), as on the paid page; else the amount and its rate, with
// the brand's name when named ("AUD 0.13 (1.2%, Visa)").
func surchargeLabel(q *paylink.SurchargeQuote, withBrand bool) string {
	if q.Amount == 0 {
		return "None"
	}
	detail := q.Rate.String() + "%"
	if withBrand {
		detail += ", " + brandName(q.Card.Brand)
	}
	return money(q.Amount, q.Currency) + " (" + detail + ")"
}

// money formats an amount for people: "AUD 10.50".
func money(minor int64, currency string) string {
	return currency + " " + paylink.FormatIn(minor, currency)
}

// autocomplete is a card or customer field's autocomplete token: the
// customer's browser fills in their own details, but in the virtual
// terminal the browser is the agent's, whose saved cards and addresses
// are not the customer's, and which would offer to save each customer's
// card: "off" there.
func autocomplete(vt bool, token string) string {
	if vt {
		return "off"
	}
	return token
}

// errFor returns the error of a form field, "" when none.
func errFor(errs map[string]string, field string) string { return errs[field] }

// brandRules is paylink.IINRanges for the page's script, which names the
// brand as the card number is typed, refuses a number of no known brand
// or of a length its brand does not issue, and asks for a security code
// of the brand's length: "digits,low,high,name,code length,number
// lengths" per rule (the lengths separated by spaces), ";" between
// rules, in BrandOf's order. The script reads the server's rules rather than a copy
// of its own, so the two cannot disagree. It is the same on every page,
// so the page cache, keyed by the view, needs no part of it.
func brandRules() string {
	var b strings.Builder
	for i, r := range paylink.IINRanges() {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%d,%d,%d,%s,%d,%s", r.Digits, r.Low, r.High, brandName(r.Brand), paylink.CVCLength(r.Brand),
			strings.Trim(fmt.Sprint(paylink.IssuedLengths(r.Brand)), "[]"))
	}
	return b.String()
}

// brandName is a card brand as people write it.
func brandName(brand string) string {
	switch brand {
	case paylink.BrandAmex:
		return "American Express"
	case paylink.BrandJCB:
		return "JCB"
	case paylink.BrandUnionPay:
		return "UnionPay"
	case "":
		return "Card"
	}
	return strings.ToUpper(brand[:1]) + brand[1:]
}
