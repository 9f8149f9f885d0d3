package paylink

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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
// separators. NormalizePAN refuses a longer one, whichever way it came;
// the API's decoder reads the field with this bound and the hosted page
// gives it as the field's maxlength.
const MaxCardNumberInput = 32

// NormalizePAN strips spaces and dashes and checks length (as sent, at
// most MaxCardNumberInput characters, then its digits) and Luhn.
func NormalizePAN(raw string) (string, error) {
	if utf8.RuneCountInString(raw) > MaxCardNumberInput {
		return "", fmt.Errorf("card number must be at most %d characters, spaces and dashes included", MaxCardNumberInput)
	}
	pan := stripSeparators(strings.TrimSpace(raw))
	if !allDigits(pan) || pan == "" {
		return "", fmt.Errorf("card number must contain only digits")
	}
	if len(pan) < 13 || len(pan) > 19 {
		return "", fmt.Errorf("card number must have 13 to 19 digits")
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
// number: 13 to 19 digits that pass the Luhn check and start in the range
// of a brand paylink knows, at a length that brand issues (so a 15-digit
// IMEI in the JCB range is not one), written in one group or in groups
// joined by single spaces or dashes (other digits may stand before or
// after them: "4111 1111 1111 1111 12/29"), or in a card's own groups
// (4-4-4-4 with up to 3 more digits, or 4-6-5) joined throughout by one
// to maxJoin spaces, dashes, dots, slashes or underscores of one kind
// ("4111.1111.1111.1111", "4111  1111 1111 1111", "4111 - 1111 - ..."). Free text holding
// one is refused (checkField), so that a number typed into the wrong field
// is never stored or logged in clear; a random 16-digit reference trips
// it about 3 times in 100. Digits a letter touches are part of a longer
// token, not a number someone typed: a hex hash or a UUID holds such runs
// ("...d46-3799-4928-922c...") about once in 2,000 values, and a merchant
// could never send that value again.
//
// The text is read folded (foldForCards): a space, dash or decimal digit
// of another script counts as its ASCII one, so a number pasted from a
// document with no-break spaces or an en dash between its groups, or
// typed in full-width digits, is found as well.
func ContainsCardNumber(s string) bool {
	s = foldForCards(s).text
	return standsAlone(s, cardNumberSpans(s)) || standsAlone(s, groupedCardSpans(s))
}

// ContainsCardNumberAnywhere is ContainsCardNumber without the rule for
// digits a letter touches ("order4111111111111111" holds one), for a
// value an operator types, where a card number kept would be stored (a
// resolution's note or acquirer id).
func ContainsCardNumberAnywhere(s string) bool {
	s = foldForCards(s).text
	return len(cardNumberSpans(s)) > 0 || len(groupedCardSpans(s)) > 0
}

// ContainsCardNumberWithin is ContainsCardNumberAnywhere that also finds
// a card number inside a longer run of digits ("41111111111111110",
// "4111-1111-1111-11110"), for a value where a false match costs little
// and a card number kept would be logged: a request id, then replaced by
// one of paylink's own. It matches about a fifth of random 18- and
// 19-digit numbers, so an operator's acquirer id is not held to it.
func ContainsCardNumberWithin(s string) bool {
	return ContainsCardNumberAnywhere(s) || cardInsideDigits(foldForCards(s).text)
}

// cardInsideDigits reports whether some 13 to 19 consecutive digits of a
// run of digits (single joinChars between digits do not end a run) are a
// card number.
func cardInsideDigits(s string) bool {
	digits := make([]byte, 0, 32)
	for i := 0; i <= len(s); i++ {
		switch {
		case i < len(s) && isDigit(s[i]):
			digits = append(digits, s[i])
			continue
		case i+1 < len(s) && len(digits) > 0 && isJoin(s[i]) && isDigit(s[i+1]):
			continue
		}
		if holdsCardNumber(digits) {
			return true
		}
		digits = digits[:0]
	}
	return false
}

// holdsCardNumber reports whether 13 to 19 consecutive digits of digits
// are a card number.
func holdsCardNumber(digits []byte) bool {
	for start := 0; start+13 <= len(digits); start++ {
		for end := start + 13; end <= len(digits) && end-start <= 19; end++ {
			if isCardNumber(string(digits[start:end])) {
				return true
			}
		}
	}
	return false
}

// standsAlone reports whether one of the spans of s is not part of a
// longer token (touchesLetter).
func standsAlone(s string, spans [][2]int) bool {
	for _, sp := range spans {
		if !touchesLetter(s, sp[0], sp[1]) {
			return true
		}
	}
	return false
}

// touchesLetter reports whether the run of digit groups around
// s[start:end] (digits, and single joinChars between digits) has an ASCII
// letter right before or after it.
func touchesLetter(s string, start, end int) bool {
	for start > 0 && (isDigit(s[start-1]) || start > 1 && isJoin(s[start-1]) && isDigit(s[start-2])) {
		start--
	}
	for end < len(s) && (isDigit(s[end]) || end+1 < len(s) && isJoin(s[end]) && isDigit(s[end+1])) {
		end++
	}
	return start > 0 && isLetter(s[start-1]) || end < len(s) && isLetter(s[end])
}

// isJoin reports whether c is one of joinChars.
func isJoin(c byte) bool { return strings.IndexByte(joinChars, c) >= 0 }

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// MaskCardNumbers returns s with each card number in it (as
// ContainsCardNumber finds them) masked as MaskPAN masks one: what an
// error message may say back about a value it refused.
func MaskCardNumbers(s string) string {
	f := foldForCards(s)
	spans := mergeSpans(append(cardNumberSpans(f.text), groupedCardSpans(f.text)...))
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		start, end := f.at(sp[0]), f.at(sp[1])
		b.WriteString(s[last:start])
		b.WriteString(MaskPAN(digitsOf(f.text[sp[0]:sp[1]])))
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// cardText is text as the card-number rules read it (foldForCards).
type cardText struct {
	text string
	from []int // the offset in the original of each byte of text, and its length last; nil when text is the original
}

// at is the offset in the original text of byte i of the folded one.
func (c cardText) at(i int) int {
	if c.from == nil {
		return i
	}
	return c.from[i]
}

// foldForCards returns s as the card-number rules read it: each space of
// another script (a no-break or thin space) as ' ', each dash or minus
// sign as '-', each decimal digit (full-width, Arabic-Indic, ...) as its
// ASCII digit, and each invisible formatting character (a zero-width
// space or joiner, a soft hyphen) dropped. ASCII text is returned as it
// is, without a copy.
func foldForCards(s string) cardText {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return cardText{text: s}
	}
	b := make([]byte, 0, len(s))
	from := make([]int, 0, len(s)+1)
	for at := 0; at < len(s); {
		r, n := utf8.DecodeRuneInString(s[at:])
		switch c := foldRune(r); {
		case c == 0: // invisible: dropped
		case c > 0:
			b = append(b, byte(c))
			from = append(from, at)
		default:
			b = append(b, s[at:at+n]...)
			for k := range n {
				from = append(from, at+k)
			}
		}
		at += n
	}
	return cardText{text: string(b), from: append(from, len(s))}
}

// foldRune is the ASCII byte a non-ASCII rune reads as in a card number
// (' ', '-' or a digit), 0 for an invisible one to drop, -1 for any other.
func foldRune(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		return -1
	case unicode.Is(unicode.Zs, r):
		return ' '
	case unicode.Is(unicode.Pd, r) || r == '\u2212': // U+2212 MINUS SIGN is a math symbol
		return '-'
	case unicode.Is(unicode.Nd, r):
		return '0' + digitValue(r)
	case unicode.Is(unicode.Cf, r):
		return 0
	}
	return -1
}

// digitValue is the value of a decimal digit: Unicode encodes each
// script's ten digits as one run from 0 to 9, and unicode.Nd's ranges are
// whole such runs.
func digitValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return 0
}

// MaskIfCardNumber is s with its card numbers masked (MaskCardNumbers)
// when it holds one as free text is refused for (ContainsCardNumber),
// else s as it is: for a value used to find something (a path reference,
// a search), which a stored value with digits a letter touches
// ("INV4111111111111111", a UUID's) must still find.
func MaskIfCardNumber(s string) string {
	if ContainsCardNumber(s) {
		return MaskCardNumbers(s)
	}
	return s
}

// mergeSpans orders byte ranges and joins those that overlap.
func mergeSpans(spans [][2]int) [][2]int {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	out := spans[:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && sp[0] < out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
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
// numbers in s: in each run of digit groups joined by single spaces or
// dashes that holds one, from the first group that starts a card number
// to the run's end. Not the card's groups alone: the digits before a card
// ("23-01-2026 4111 1111 ...") can make a card number of their own with
// its first groups, and masking that one would leave the card's last
// groups in clear.
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
		joined := j > i && j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1])
		if !joined {
			if first := firstCardGroup(s, groups); first >= 0 {
				spans = append(spans, [2]int{groups[first][0], groups[len(groups)-1][1]})
			}
			groups = groups[:0]
		}
		if j > i {
			i = j + 1 // past the group and the character after it
		} else {
			i++
		}
	}
	return spans
}

// maxJoin is how many separators may join the groups of a card number
// written in its own groups ("4111 - 1111", "4111  1111").
const maxJoin = 3

// joinChars are the characters that may join a card number's own groups.
const joinChars = " -./_"

// joinKind is the set of joinChars in sep, one bit each: "  " and " " are
// the same kind of join, "." and "/" are not.
func joinKind(sep string) int {
	kind := 0
	for i := range len(sep) {
		kind |= 1 << strings.IndexByte(joinChars, sep[i])
	}
	return kind
}

// groupedCardSpans returns the byte ranges of the card numbers in s
// written in a card's own groups, joined throughout by up to maxJoin
// separators of one kind (groupedCardAt). Only these shapes take the
// wider separators: dates, phone numbers, prices and addresses written
// with them do not come in groups of four.
func groupedCardSpans(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isDigit(s[i-1])) {
			continue
		}
		if end := groupedCardAt(s, i); end > 0 {
			spans = append(spans, [2]int{i, end})
			i = end
		}
	}
	return spans
}

// groupedCardAt returns the end of the card number written in its own
// groups that starts at s[i], the start of a run of digits, or 0: up to
// five whole groups joined by separators of one kind (joinKind), read as
// 4-4-4-4 with an optional last group of 1 to 3 digits, or as 4-6-5.
func groupedCardAt(s string, i int) int {
	var groups [5][2]int
	n, kind := 0, 0
	for n < len(groups) {
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		groups[n], n = [2]int{i, j}, n+1
		k := j
		for k < len(s) && k-j < maxJoin && strings.IndexByte(joinChars, s[k]) >= 0 {
			k++
		}
		if k == j || k == len(s) || !isDigit(s[k]) || (kind != 0 && joinKind(s[j:k]) != kind) {
			break
		}
		kind, i = joinKind(s[j:k]), k
	}
	lens := make([]int, n)
	for g := range n {
		lens[g] = groups[g][1] - groups[g][0]
	}
	for _, shape := range [][]int{{4, 4, 4, 4, -3}, {4, 4, 4, 4}, {4, 6, 5}} {
		if m := matchShape(lens, shape); m > 0 && isCardNumber(digitsOf(s[groups[0][0]:groups[m-1][1]])) {
			return groups[m-1][1]
		}
	}
	return 0
}

// matchShape reports how many of the leading groups of lengths lens fit
// shape (a negative entry -k takes 1 to k digits), or 0 if they do not.
func matchShape(lens, shape []int) int {
	if len(lens) < len(shape) {
		return 0
	}
	for g, want := range shape {
		if want < 0 && (lens[g] < 1 || lens[g] > -want) || want > 0 && lens[g] != want {
			return 0
		}
	}
	return len(shape)
}

// firstCardGroup is the index of the first group of one run from which
// consecutive whole groups make a card number, or -1.
func firstCardGroup(s string, groups [][2]int) int {
	digits := make([]byte, 0, 19)
	for i := range groups {
		digits = digits[:0]
		for j := i; j < len(groups); j++ {
			if digits = append(digits, s[groups[j][0]:groups[j][1]]...); len(digits) > 19 {
				break
			}
			if len(digits) >= 13 && isCardNumber(string(digits)) {
				return i
			}
		}
	}
	return -1
}

// isCardNumber reports whether digits pass the Luhn check and are a
// number its brand issues: a known range, at one of its lengths.
func isCardNumber(digits string) bool {
	return LuhnValid(digits) && issuedLength(BrandOf(digits), len(digits))
}

// issuedLength reports whether brand issues numbers of n digits.
func issuedLength(brand string, n int) bool {
	switch brand {
	case BrandVisa:
		return n == 13 || n == 16 || n == 19
	case BrandMastercard:
		return n == 16
	case BrandAmex:
		return n == 15
	case BrandDiners:
		return n >= 14 && n <= 19
	case BrandDiscover, BrandJCB, BrandUnionPay:
		return n >= 16 && n <= 19
	}
	return false
}

// IssuedLengths are the lengths of the numbers brand issues, shortest
// first (issuedLength's rule, for the hosted page's script).
func IssuedLengths(brand string) []int {
	var out []int
	for n := 12; n <= 19; n++ {
		if issuedLength(brand, n) {
			out = append(out, n)
		}
	}
	return out
}

// ParseCardNumber is the one rule of what paylink takes as a card
// number: digits (the spaces and dashes people type dropped) that pass
// the Luhn check, of a supported brand, at a length that brand issues:
// exactly the numbers ContainsCardNumber finds in text, so that no
// number charged as a card can be stored in clear in a text field. It
// returns the digits (also when only the brand or length is refused)
// and the brand.
func ParseCardNumber(raw string) (pan, brand string, err error) {
	pan, err = NormalizePAN(raw)
	if err != nil {
		return "", "", err
	}
	brand = BrandOf(pan)
	switch {
	case brand == "":
		return pan, "", errors.New("card brand is not supported")
	case !issuedLength(brand, len(pan)):
		return pan, "", fmt.Errorf("card number is not valid: %d digits, a length its brand does not issue", len(pan))
	}
	return pan, brand, nil
}

// IINRange is one rule of BrandOf: a PAN whose first Digits digits, read
// as a number, lie between Low and High (both included) is of Brand.
type IINRange struct {
	Brand             string
	Digits, Low, High int
}

// IINRanges lists BrandOf's rules in the order they are tried; the first
// that matches names the brand. They are data rather than code so that
// the hosted payment page's script is given the very same rules (a copy
// in JavaScript drifted and refused cards the server takes).
func IINRanges() []IINRange {
	r := iinRanges()
	return r[:]
}

// iinRanges is IINRanges as an array, which BrandOf, called for every
// run of digits a free-text check scans, reads without allocating.
func iinRanges() [16]IINRange {
	return [...]IINRange{
		{BrandAmex, 2, 34, 34}, {BrandAmex, 2, 37, 37},
		{BrandDiners, 2, 36, 36}, {BrandDiners, 2, 38, 39}, {BrandDiners, 3, 300, 305}, {BrandDiners, 3, 309, 309},
		{BrandDiscover, 4, 6011, 6011}, {BrandDiscover, 2, 65, 65}, {BrandDiscover, 3, 644, 649}, {BrandDiscover, 6, 622126, 622925},
		{BrandUnionPay, 2, 62, 62}, {BrandUnionPay, 2, 81, 81},
		{BrandJCB, 4, 3528, 3589},
		{BrandMastercard, 2, 51, 55}, {BrandMastercard, 4, 2221, 2720},
		{BrandVisa, 1, 4, 4},
	}
}

// BrandOf returns the brand of a PAN from its issuer identification
// number, or "" when the range is not one paylink knows.
func BrandOf(pan string) string {
	for _, r := range iinRanges() {
		if p := prefixInt(pan, r.Digits); p >= r.Low && p <= r.High {
			return r.Brand
		}
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

// CVCLength is how many digits a brand's security code has: 4 on
// American Express, 3 on every other brand paylink knows, and 0 for an
// unknown brand.
func CVCLength(brand string) int {
	switch brand {
	case "":
		return 0
	case BrandAmex:
		return 4
	}
	return 3
}

// CVCLengthProblem is the card.cvc field problem of a security code that
// is not the n digits of its card's brand; the hosted page recognises it
// to say the same in its own words.
func CVCLengthProblem(n int) string {
	if n == 4 {
		return "must be 4 digits for an American Express card"
	}
	return fmt.Sprintf("must be %d digits for this card's brand (only American Express has 4)", n)
}

// ErrCardExpired is CheckExpiry's answer to an expiry date in the past.
var ErrCardExpired = errors.New("card has expired")

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
		return 0, ErrCardExpired
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
