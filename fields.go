package paylink

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field limits, defined once: the API's decoder, the hosted page's form
// and the Service all read them from here.
const (
	// MaxFieldLength bounds a free-text field (names, address lines,
	// references, email): spec section 8.
	MaxFieldLength = 128
	// MaxURLLength bounds a URL a client sends (webhook_url,
	// authentication_redirect_url).
	MaxURLLength = 2048
	// MaxUserAgentLength bounds a customer's User-Agent, which browsers
	// make long; a longer one is refused by the API and cut by the page.
	MaxUserAgentLength = 512
)

// CheckText is the one field-hygiene rule for text that paylink stores
// and shows again: valid UTF-8 (PostgreSQL refuses anything else, and
// SQLite would keep bytes that no export or page can show), at most max
// characters (runes, so that non-Latin names get the same room), no
// control characters, which would corrupt logs, CSV exports and the
// hosted page, and no bidirectional embedding, override or isolate
// controls, which make a value read otherwise than it is on every page
// and export that shows it ("\u202eINV" shows as "VNI"). The marks a
// right-to-left name may carry (U+200E, U+200F) stay. The problem is
// phrased to follow a field name ("customer.city must ...").
func CheckText(s string, max int) error {
	if !utf8.ValidString(s) {
		return errNotUTF8
	}
	if utf8.RuneCountInString(s) > max {
		return fmt.Errorf("must be at most %d characters", max)
	}
	i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || bidiControl(r) })
	switch {
	case i < 0:
		return nil
	case unicode.IsControl(firstRune(s[i:])):
		return errors.New("must not contain control characters")
	}
	return errors.New("must not contain bidirectional control characters (U+202A to U+202E, U+2066 to U+2069)")
}

// firstRune is the first character of s.
func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// bidiControl reports whether r embeds, overrides or isolates text
// direction.
func bidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// errNotUTF8 is CheckText's answer to bytes that are not UTF-8 text.
var errNotUTF8 = errors.New("must be UTF-8 text")

// checkField applies CheckText to one free-text field, and refuses a
// card number (ContainsCardNumber) or one of paylink's prefixed secrets
// (LooksLikeSecret) in it, recording the problem: free text is stored in
// clear and shown again.
func checkField(f FieldErrors, field, value string, max int) {
	switch err := CheckText(value, max); {
	case err != nil:
		f.Add(field, err.Error())
	case ContainsCardNumber(value):
		f.Add(field, errCardNumberInText.Error())
	case LooksLikeSecret(value):
		f.Add(field, errSecretInText.Error())
	}
}

// checkMetadata checks the optional metadata of a follow-up call
// (channel, merchant_hash) as free text: kept with the payment and shown
// again, a card number is never among it.
func checkMetadata(f FieldErrors, md map[string]string) {
	for k, v := range md {
		checkField(f, "metadata."+k, v, MaxFieldLength)
	}
}

// errCardNumberInText is the answer to free text holding a card number.
var errCardNumberInText = errors.New("must not contain a card number (a card number goes in the card number field only)")

// errSecretInText is the answer to free text holding an API key or a
// webhook secret.
var errSecretInText = errors.New("must not contain an API key or a webhook secret (they are kept secret, and free text is stored and shown in clear)")

// errBadEmail is the one answer to an address CheckEmail refuses.
var errBadEmail = errors.New("must be an email address")

// CheckEmail is the one customer-email rule (API, links, hosted page):
// a non-empty local part, one '@' and a domain of non-empty dot-separated
// labels, without spaces, angle brackets or list separators. It does not
// try to be RFC 5322: a merchant's customer types this, and a mistyped
// address only loses a receipt.
func CheckEmail(s string) error {
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") ||
		strings.ContainsAny(s, " <>,;\"\\") || strings.ContainsFunc(s, unicode.IsSpace) {
		return errBadEmail
	}
	for label := range strings.SplitSeq(domain, ".") {
		if label == "" {
			return errBadEmail
		}
	}
	return nil
}

// checkCustomerFields applies CheckText and CheckEmail to the free-text
// fields of a customer, whichever adapter sent them. prefix is the
// field path ("customer.").
func checkCustomerFields(f FieldErrors, prefix string, c Customer) {
	text := []struct {
		name, value string
		max         int
	}{
		{"id", c.ID, MaxFieldLength}, {"reference", c.Reference, MaxFieldLength},
		{"email", c.Email, MaxFieldLength}, {"first_name", c.FirstName, MaxFieldLength},
		{"last_name", c.LastName, MaxFieldLength}, {"phone", c.Phone, MaxFieldLength},
		{"address", c.Address, MaxFieldLength}, {"address2", c.Address2, MaxFieldLength},
		{"city", c.City, MaxFieldLength}, {"state", c.State, MaxFieldLength},
		{"postcode", c.Postcode, MaxFieldLength}, {"country_code", c.CountryCode, MaxFieldLength},
		{"ip_address", c.IPAddress, MaxFieldLength}, {"timezone", c.Timezone, MaxFieldLength},
		{"user_agent", c.UserAgent, MaxUserAgentLength},
	}
	for _, t := range text {
		checkField(f, prefix+t.name, t.value, t.max)
	}
	if c.Email != "" {
		if err := CheckEmail(c.Email); err != nil {
			f.Add(prefix+"email", err.Error())
		}
	}
}
