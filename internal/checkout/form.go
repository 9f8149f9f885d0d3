package checkout

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/paylink/paylink"
)

// formValues are the non-card fields of the page's form, kept when the
// page is shown again after an error or a decline. Card fields are never
// rendered back.
type formValues struct {
	FirstName, LastName, Email, Phone             string
	Address, Address2, City, State, Postcode      string
	CountryCode, CustomerReference, InvoiceNumber string
	Timezone                                      string // the browser's, set by the script
}

// customerForm pre-fills the form from the link's customer.
func customerForm(c paylink.Customer) formValues {
	return formValues{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Phone: c.Phone,
		Address: c.Address, Address2: c.Address2, City: c.City, State: c.State, Postcode: c.Postcode,
		CountryCode: c.CountryCode, CustomerReference: c.Reference}
}

// fieldLimit is the most characters a text field of the form takes, the
// Service's limit for it (the page's maxlength too): an invoice number's
// is MaxInvoiceLength, a card number's MaxCardNumberInput (as typed,
// spaces and dashes and all, as the API takes it), any other field's
// MaxFieldLength.
func fieldLimit(name string) int {
	switch name {
	case "invoice_number":
		return paylink.MaxInvoiceLength
	case "card_number":
		return paylink.MaxCardNumberInput
	}
	return paylink.MaxFieldLength
}

// readForm reads the customer part of a posted form; problems go to errs.
// A field refused is shown again empty: a card number typed into the
// address is not written back into the page.
func readForm(r *http.Request, errs map[string]string) formValues {
	get := func(name string) string {
		v := strings.TrimSpace(r.PostFormValue(name))
		switch n := fieldLimit(name); {
		case paylink.CheckText(v, n) != nil:
			errs[name] = fmt.Sprintf("Use at most %d characters, without control or text-direction characters.", n)
			return ""
		case paylink.ContainsCardNumber(v):
			errs[name] = "This looks like a card number: enter the card in the card fields only."
			return ""
		}
		return v
	}
	return formValues{
		FirstName: get("first_name"), LastName: get("last_name"), Email: get("email"), Phone: get("phone"),
		Address: get("address"), Address2: get("address2"), City: get("city"), State: get("state"),
		Postcode: get("postcode"), CountryCode: strings.ToUpper(get("country_code")),
		CustomerReference: get("customer_reference"), InvoiceNumber: get("invoice_number"),
		Timezone: browserTimezone(r.PostFormValue("timezone")),
	}
}

// customer is the form's customer with the request's address.
func (f formValues) customer(r *http.Request) paylink.Customer {
	return paylink.Customer{FirstName: f.FirstName, LastName: f.LastName, Email: f.Email, Phone: f.Phone,
		Address: f.Address, Address2: f.Address2, City: f.City, State: f.State, Postcode: f.Postcode,
		CountryCode: f.CountryCode, Reference: f.CustomerReference, IPAddress: clientIP(r), Timezone: f.Timezone,
		UserAgent: userAgent(r)}
}

// userAgent is the browser's User-Agent as the Service accepts it: a
// customer cannot change what their browser sends, so bytes that are not
// UTF-8 and control characters are replaced, and a card number masked,
// rather than refused, and a long one is cut.
func userAgent(r *http.Request) string {
	ua := strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, strings.ToValidUTF8(r.UserAgent(), "\uFFFD"))
	return truncate(paylink.MaskCardNumbers(ua), paylink.MaxUserAgentLength)
}

// browserTimezone accepts the IANA zone the script read from the browser;
// anything else (or nothing, without JavaScript) leaves the default, UTC.
func browserTimezone(tz string) string {
	if len(tz) > 64 || paylink.CheckTimezone(tz) != nil {
		return ""
	}
	return tz
}

// clientIP is the address the request came from.
func clientIP(r *http.Request) string { return paylink.SourceIP(r.RemoteAddr) }

// truncate cuts s to at most n characters, at a character boundary.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// readCard reads the card fields. The expiry is one field, MM/YY.
func readCard(r *http.Request, errs map[string]string) *paylink.CardDetails {
	c := &paylink.CardDetails{ // too long a number or name is refused by the Service, as in the API
		Number:     strings.TrimSpace(r.PostFormValue("card_number")),
		CVC:        strings.TrimSpace(r.PostFormValue("card_cvc")),
		HolderName: strings.TrimSpace(r.PostFormValue("card_holder")),
	}
	if c.Number == "" {
		errs["card_number"] = "Enter the card number."
	}
	if c.HolderName == "" {
		errs["card_holder"] = "Enter the name on the card."
	}
	if c.CVC == "" {
		pan, _ := paylink.NormalizePAN(c.Number) // "" when not a number: no brand
		errs["card_cvc"] = cvcMessage(paylink.CVCLength(paylink.BrandOf(pan)))
	}
	month, year, ok := parseExpiry(r.PostFormValue("card_expiry"))
	if !ok {
		errs["card_expiry"] = "Enter the expiry date as MM/YY."
	}
	c.ExpiryMonth, c.ExpiryYear = month, year
	return c
}

// parseExpiry reads MM/YY, MM / YY, MM/YYYY or MMYY.
func parseExpiry(s string) (month, year int, ok bool) {
	s = strings.NewReplacer(" ", "", "-", "/").Replace(s)
	mm, yy, found := strings.Cut(s, "/")
	if !found && len(s) == 4 {
		mm, yy = s[:2], s[2:]
	}
	if !digits(mm) || !digits(yy) || (len(yy) != 2 && len(yy) != 4) || len(mm) > 2 {
		return 0, 0, false
	}
	m, _ := strconv.Atoi(mm)
	y, _ := strconv.Atoi(yy)
	if len(yy) == 4 && y < 2000 {
		return 0, 0, false // 0029 is not 2029
	}
	return m, y, true
}

// digits reports whether s is one or more ASCII digits (no sign).
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// fieldOf maps the service's field paths to the form's field names.
var fieldOf = map[string]string{
	"card.number": "card_number", "card.expiry_month": "card_expiry", "card.expiry_year": "card_expiry",
	"card.cvc": "card_cvc", "card.holder_name": "card_holder", "customer.email": "email",
	"customer.country_code": "country_code", "invoice_number": "invoice_number",
}

// formErrors turns a validation error into messages by form field, and
// empties each field refused: a refused value is not written back into
// the page (it may be a card number in a form the detector missed).
func formErrors(e *paylink.Error, errs map[string]string, f *formValues) {
	for path, problem := range e.Fields {
		name, ok := fieldOf[path]
		if !ok {
			name = "form"
		}
		if _, has := errs[name]; !has {
			errs[name] = pageProblem(name, problem)
		}
		f.clear(name)
	}
}

// pageProblem is the page's words for the Service's problem with form
// field name. The Service's words are the API's, written for developers
// ("card number is not valid (Luhn check failed)"); the card fields get
// the script's, so that the page says the same with JavaScript or without.
func pageProblem(name, problem string) string {
	switch name {
	case "card_number":
		return "This card number is not valid."
	case "card_expiry":
		if problem == paylink.ErrCardExpired.Error() {
			return "This card has expired."
		}
		return "Enter the expiry date as MM/YY."
	case "card_cvc":
		for _, n := range []int{3, 4} {
			if problem == paylink.CVCLengthProblem(n) {
				return cvcMessage(n)
			}
		}
		return cvcMessage(0)
	}
	return sentence(problem)
}

// cvcMessage asks for a security code of n digits, the card brand's
// (paylink.CVCLength), or of 3 or 4 when n is 0 (the brand not known);
// the script's live check says the same.
func cvcMessage(n int) string {
	if n == 0 {
		return "Enter the 3 or 4 digit security code."
	}
	return fmt.Sprintf("Enter the card's %d-digit security code.", n)
}

// clear empties the form field name, if it is one of formValues'.
func (f *formValues) clear(name string) {
	switch name {
	case "email":
		f.Email = ""
	case "country_code":
		f.CountryCode = ""
	case "invoice_number":
		f.InvoiceNumber = ""
	}
}

// sentence turns "must be 3 or 4 digits" into "Must be 3 or 4 digits.".
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
