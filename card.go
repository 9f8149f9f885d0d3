package paylink

import (
	"fmt"
	"strings"
	"time"
)

// Card brands, lower case as in webhooks.
const (
	BrandVisa       = "visa"
	BrandMastercard = "mastercard"
	BrandAmex       = "amex"
	BrandJCB        = "jcb"
	BrandDiscover   = "discover"
	BrandDiners     = "diners"
	BrandUnionPay   = "unionpay"
)

// Funding types and consumer types, as in webhooks.
const (
	FundingCredit    = "CREDIT"
	FundingDebit     = "DEBIT"
	ConsumerConsumer = "CONSUMER"
	ConsumerCorp     = "CORPORATE"
)

// Region classes of a card relative to the merchant's country.
const (
	RegionDomestic      = "DOMESTIC"
	RegionIntraregional = "INTRAREGIONAL"
	RegionInternational = "INTERNATIONAL"
	RegionEEA           = "EEA"
)

// CardDetails is a card as a client sends it. It lives only in memory; the
// PAN is sealed by the vault before it reaches a store, and the CVC is
// never stored at all.
type CardDetails struct {
	Number      string
	ExpiryMonth int
	ExpiryYear  int // four digits
	CVC         string
	HolderName  string
}

// CardInfo is what paylink knows about a card without its PAN.
type CardInfo struct {
	Masked       string `json:"masked"`
	Brand        string `json:"brand"`
	Funding      string `json:"funding"`
	Country      string `json:"country"`
	ConsumerType string `json:"consumer_type"`
	ExpiryMonth  int    `json:"expiry_month"`
	ExpiryYear   int    `json:"expiry_year"`
	HolderName   string `json:"holder_name"`
	Fingerprint  string `json:"fingerprint"`
}

// ExpiryString is the webhook shape MM/YYYY.
func (c CardInfo) ExpiryString() string {
	return fmt.Sprintf("%02d/%04d", c.ExpiryMonth, c.ExpiryYear)
}

// LuhnValid reports whether a digit string passes the Luhn check.
func LuhnValid(number string) bool {
	sum, double := 0, false
	for i := len(number) - 1; i >= 0; i-- {
		d := int(number[i] - '0')
		if d < 0 || d > 9 {
			return false
		}
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return len(number) > 0 && sum%10 == 0
}

// MaxCardNumberInput bounds a card number as typed or sent, before
// NormalizePAN strips its spaces and dashes: 19 digits with room for
// separators. The API and the hosted page both apply it.
const MaxCardNumberInput = 32

// NormalizePAN strips spaces and dashes and checks length and Luhn.
func NormalizePAN(raw string) (string, error) {
	pan := stripSeparators(strings.TrimSpace(raw))
	if !allDigits(pan) || pan == "" {
		return "", fmt.Errorf("card number must contain only digits")
	}
	if len(pan) < 12 || len(pan) > 19 {
		return "", fmt.Errorf("card number must have 12 to 19 digits")
	}
	if !LuhnValid(pan) {
		return "", fmt.Errorf("card number is not valid (Luhn check failed)")
	}
	return pan, nil
}

// stripSeparators drops the spaces and dashes people type between a
// card number's digit groups (without copying a number that has none).
func stripSeparators(s string) string {
	if !strings.ContainsAny(s, " -") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := range len(s) {
		if s[i] != ' ' && s[i] != '-' {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// ContainsCardNumber reports whether s holds what looks like a card
// number: 13 to 19 digits, in one group or in groups joined by up to
// maxJoin separators (spaces, dashes, dots, slashes, underscores: "4111
// 1111  1111 1111", "4111.1111.1111.1111"; other digits may stand before
// or after them: "4111 1111 1111 1111 12/29"), that pass the Luhn check and start in the
// range of a brand paylink knows, at a length that brand issues (so a
// 15-digit IMEI in the JCB range is not one). Free text holding one is
// refused (checkField), so that a number typed into the wrong field is
// never stored or logged in clear; a random 16-digit reference trips it
// about 3 times in 100.
func ContainsCardNumber(s string) bool {
	return len(cardNumberSpans(s)) > 0
}

// MaskCardNumbers returns s with each card number in it (as
// ContainsCardNumber finds them) masked as MaskPAN masks one: what an
// error message may say back about a value it refused.
func MaskCardNumbers(s string) string {
	spans := cardNumberSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(MaskPAN(digitsOf(s[sp[0]:sp[1]])))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// maxJoin is how many separators may join two digit groups of one card
// number as people write it ("4111 - 1111", "4111  1111").
const maxJoin = 3

// isJoin reports whether c may stand between a card number's digit
// groups.
func isJoin(c byte) bool {
	return c == ' ' || c == '-' || c == '.' || c == '/' || c == '_'
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitsOf is s with everything but its digits dropped.
func digitsOf(s string) string {
	b := make([]byte, 0, len(s))
	for i := range len(s) {
		if isDigit(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// cardNumberSpans returns the byte ranges [start, end) of the card
// numbers in s: in each run of digit groups joined by up to maxJoin
// separators, the first whole groups, from each group on, that make a
// card number.
func cardNumberSpans(s string) [][2]int {
	var spans [][2]int
	groups := make([][2]int, 0, 8)
	for i := 0; i <= len(s); {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j > i {
			groups = append(groups, [2]int{i, j})
		}
		k := j
		for k < len(s) && k-j < maxJoin && isJoin(s[k]) {
			k++
		}
		joined := j > i && k > j && k < len(s) && isDigit(s[k])
		if !joined {
			spans = append(spans, cardsInRun(s, groups)...)
			groups = groups[:0]
		}
		switch {
		case joined:
			i = k // the next group
		case j > i:
			i = j + 1 // past the group and the character after it
		default:
			i++
		}
	}
	return spans
}

// cardsInRun finds the card numbers among consecutive whole groups of
// one run, each group used once.
func cardsInRun(s string, groups [][2]int) [][2]int {
	var spans [][2]int
	digits := make([]byte, 0, 19)
	for i := 0; i < len(groups); i++ {
		digits = digits[:0]
		for j := i; j < len(groups); j++ {
			if digits = append(digits, s[groups[j][0]:groups[j][1]]...); len(digits) > 19 {
				break
			}
			if len(digits) >= 13 && isCardNumber(string(digits)) {
				spans = append(spans, [2]int{groups[i][0], groups[j][1]})
				i = j
				break
			}
		}
	}
	return spans
}

// isCardNumber reports whether digits pass the Luhn check and are a
// number its brand issues: a known range, at one of its lengths.
func isCardNumber(digits string) bool {
	if !LuhnValid(digits) {
		return false
	}
	n := len(digits)
	switch BrandOf(digits) {
	case BrandVisa:
		return n == 13 || n == 16 || n == 19
	case BrandMastercard:
		return n == 16
	case BrandAmex:
		return n == 15
	case BrandDiners:
		return n >= 14
	case BrandDiscover, BrandJCB, BrandUnionPay:
		return n >= 16
	}
	return false
}

// BrandOf returns the brand of a PAN from its issuer identification
// number, or "" when the range is not one paylink knows.
func BrandOf(pan string) string {
	p := func(n int) int { return prefixInt(pan, n) }
	switch {
	case p(2) == 34 || p(2) == 37:
		return BrandAmex
	case p(2) == 36 || p(2) == 38 || p(2) == 39 || (p(3) >= 300 && p(3) <= 305) || p(3) == 309:
		return BrandDiners
	case p(4) == 6011 || p(2) == 65 || (p(3) >= 644 && p(3) <= 649) || (p(6) >= 622126 && p(6) <= 622925):
		return BrandDiscover
	case p(2) == 62 || p(2) == 81:
		return BrandUnionPay
	case p(4) >= 3528 && p(4) <= 3589:
		return BrandJCB
	case (p(2) >= 51 && p(2) <= 55) || (p(4) >= 2221 && p(4) <= 2720):
		return BrandMastercard
	case p(1) == 4:
		return BrandVisa
	}
	return ""
}

func prefixInt(s string, n int) int {
	if len(s) < n {
		return -1
	}
	v := 0
	for i := 0; i < n; i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// MaskPAN shows the first six and last four digits of a number of 15
// digits or more (411111******1111), the last four of a shorter one.
func MaskPAN(pan string) string {
	switch {
	case len(pan) < 10:
		return strings.Repeat("*", len(pan))
	case len(pan) < minBINMaskedLength:
		return strings.Repeat("*", len(pan)-4) + pan[len(pan)-4:]
	}
	return pan[:6] + strings.Repeat("*", len(pan)-10) + pan[len(pan)-4:]
}

// minBINMaskedLength is the shortest number whose first six digits are
// shown beside its last four: a shorter one (a 12-digit number showed 10
// of its 12 digits, the other 2 tied by the Luhn check) shows its last
// four alone.
const minBINMaskedLength = 15

// CheckExpiry validates a month and a two- or four-digit year, returning
// the four-digit year. A card is valid through the last day of its month.
func CheckExpiry(month, year int, now time.Time) (int, error) {
	if month < 1 || month > 12 {
		return 0, fmt.Errorf("expiry month must be 1 to 12")
	}
	if year >= 0 && year < 100 {
		year += 2000
	}
	if year < 2000 || year > 2099 {
		return 0, fmt.Errorf("expiry year is not valid")
	}
	now = now.UTC()
	if year < now.Year() || (year == now.Year() && month < int(now.Month())) {
		return 0, fmt.Errorf("card has expired")
	}
	if year > now.Year()+50 {
		return 0, fmt.Errorf("expiry year is too far in the future")
	}
	return year, nil
}

// binInfo is what the built-in BIN table knows of a card range.
type binInfo struct {
	funding, country, consumer string
}

// binTable describes the sandbox test cards by full number; any other
// card is a consumer credit card issued in the merchant's country.
var binTable = map[string]binInfo{
	"4111111111111111": {FundingCredit, "AU", ConsumerConsumer},
	"4000056655665556": {FundingDebit, "AU", ConsumerConsumer},
	"5555555555554444": {FundingCredit, "AU", ConsumerConsumer},
	"378282246310005":  {FundingCredit, "AU", ConsumerConsumer},
	"4000008260000000": {FundingCredit, "GB", ConsumerConsumer},
	"4000000000000002": {FundingCredit, "AU", ConsumerConsumer},
	"4000000000009995": {FundingDebit, "AU", ConsumerConsumer},
	"4000000000000119": {FundingCredit, "AU", ConsumerConsumer},
	"4000000000003220": {FundingCredit, "AU", ConsumerConsumer},
	"4000000000003063": {FundingCredit, "AU", ConsumerConsumer},
	"5105105105105100": {FundingDebit, "AU", ConsumerCorp},
}

// DescribeCard derives the stored description of a card. The fingerprint
// is supplied by the vault; defaultCountry is the merchant's country.
func DescribeCard(c CardDetails, fingerprint, defaultCountry string) CardInfo {
	info, ok := binTable[c.Number]
	if !ok {
		info = binInfo{FundingCredit, defaultCountry, ConsumerConsumer}
	}
	return CardInfo{
		Masked:       MaskPAN(c.Number),
		Brand:        BrandOf(c.Number),
		Funding:      info.funding,
		Country:      info.country,
		ConsumerType: info.consumer,
		ExpiryMonth:  c.ExpiryMonth,
		ExpiryYear:   c.ExpiryYear,
		HolderName:   c.HolderName,
		Fingerprint:  fingerprint,
	}
}

// eeaCountries are the European Economic Area members.
var eeaCountries = setOf("AT BE BG HR CY CZ DK EE FI FR DE GR HU IS IE IT LV LI LT LU MT NL NO PL PT RO SK SI ES SE")

// regions groups countries for the INTRAREGIONAL class.
var regions = regionTable(map[string]string{
	"APAC": "AU NZ FJ PG SB VU WS TO SG MY ID TH PH VN JP KR CN HK TW IN LK BD PK",
	"EUR":  "GB CH UA TR AT BE BG HR CY CZ DK EE FI FR DE GR HU IS IE IT LV LI LT LU MT NL NO PL PT RO SK SI ES SE",
	"AMER": "US CA MX BR AR CL CO PE",
	"MEA":  "AE SA QA KW BH OM JO IL EG ZA KE TN",
})

// regionTable inverts region -> countries into country -> region.
func regionTable(byRegion map[string]string) map[string]string {
	m := map[string]string{}
	for region, countries := range byRegion {
		for _, c := range strings.Fields(countries) {
			m[c] = region
		}
	}
	return m
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// RegionClass classifies a card's issuing country against the merchant's.
func RegionClass(issuer, merchant string) string {
	switch {
	case issuer == merchant:
		return RegionDomestic
	case eeaCountries[issuer] && eeaCountries[merchant]:
		return RegionEEA
	case regions[issuer] != "" && regions[issuer] == regions[merchant]:
		return RegionIntraregional
	}
	return RegionInternational
}
