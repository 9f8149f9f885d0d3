package paylink

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// MaxAmount is the largest amount, in minor units, that any single
// operation accepts (10^12, e.g. AUD 10,000,000,000.00). It keeps every
// intermediate product of the fee and surcharge arithmetic inside int64.
const MaxAmount int64 = 1_000_000_000_000

// MaxTotal is the largest total a payment can carry: an amount up to
// MaxAmount plus a surcharge (at most 100%) or a direct debit fee (at
// most MaxAmount: DirectDebitFeeConfig.Validate). An acquirer's settlement file lists such totals.
const MaxTotal = 2 * MaxAmount

// Currency is an ISO 4217 currency with its minor-unit exponent.
type Currency struct {
	Code     string
	Exponent int
}

// currencyExponents lists the ISO 4217 currencies paylink accepts and the
// number of decimals of each. Codes not listed are rejected.
var currencyExponents = map[string]int{
	"AED": 2, "ARS": 2, "AUD": 2, "BDT": 2, "BGN": 2, "BHD": 3, "BRL": 2,
	"CAD": 2, "CHF": 2, "CLP": 0, "CNY": 2, "COP": 2, "CZK": 2, "DKK": 2,
	"EGP": 2, "EUR": 2, "FJD": 2, "GBP": 2, "HKD": 2, "HUF": 2, "IDR": 2,
	"ILS": 2, "INR": 2, "ISK": 0, "JOD": 3, "JPY": 0, "KES": 2, "KRW": 0,
	"KWD": 3, "LKR": 2, "MXN": 2, "MYR": 2, "NOK": 2, "NZD": 2, "OMR": 3,
	"PEN": 2, "PGK": 2, "PHP": 2, "PKR": 2, "PLN": 2, "QAR": 2, "RON": 2,
	"SAR": 2, "SBD": 2, "SEK": 2, "SGD": 2, "THB": 2, "TND": 3, "TOP": 2,
	"TRY": 2, "TWD": 2, "UAH": 2, "USD": 2, "VND": 0, "VUV": 0, "WST": 2,
	"XPF": 0, "ZAR": 2,
}

// LookupCurrency returns the currency for an ISO 4217 code (case-insensitive).
func LookupCurrency(code string) (Currency, bool) {
	c := strings.ToUpper(strings.TrimSpace(code))
	exp, ok := currencyExponents[c]
	if !ok {
		return Currency{}, false
	}
	return Currency{Code: c, Exponent: exp}, true
}

// Money is an exact amount in minor units of a currency.
type Money struct {
	Amount   int64
	Currency Currency
}

// ParseAmount parses a decimal amount such as "10", "10.5" or "10.50" into
// minor units of cur. It never goes through a float: more decimals than the
// currency has, exponents, signs other than a leading minus, and anything
// that is not a plain decimal are errors.
func ParseAmount(s string, cur Currency) (int64, error) {
	return parseAmountWithin(s, cur, MaxAmount)
}

// ParseTotal is ParseAmount for an amount that may be a payment's whole
// total, up to MaxTotal: a refund of a payment with its surcharge or
// direct debit fee, in one call. The Service holds it to what is left to
// refund.
func ParseTotal(s string, cur Currency) (int64, error) {
	return parseAmountWithin(s, cur, MaxTotal)
}

// parseAmountWithin is ParseAmount with max in place of MaxAmount.
func parseAmountWithin(s string, cur Currency, max int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("amount is empty")
	}
	neg := false
	if s[0] == '-' {
		neg, s = true, s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, fmt.Errorf("%q is not a decimal amount", MaskCardNumbers(s))
	}
	if !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%q is not a decimal amount", MaskCardNumbers(s))
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > cur.Exponent {
		return 0, fmt.Errorf("%s allows at most %d decimal places", cur.Code, cur.Exponent)
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 15 {
		return 0, fmt.Errorf("amount is too large")
	}
	digits := whole + frac + strings.Repeat("0", cur.Exponent-len(frac))
	if digits == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("amount is too large")
	}
	if neg {
		n = -n
	}
	return n, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatAmount formats minor units with exactly the currency's decimals:
// 1050 AUD is "10.50", 1050 JPY is "1050".
func FormatAmount(minor int64, cur Currency) string {
	return formatScaled(minor, cur.Exponent, cur.Exponent)
}

// FormatIn formats minor units of the currency with ISO 4217 code
// currency (as LookupCurrency reads it) with all its decimals, as
// FormatAmount: 1050 AUD is "10.50". A code paylink does not know (none
// is ever stored: every currency is checked on its way in) gives the
// minor units unscaled, 1050 is "1050", never a guessed decimal point.
func FormatIn(minor int64, currency string) string {
	cur, _ := LookupCurrency(currency) // unknown: exponent 0
	return FormatAmount(minor, cur)
}

// FormatAmountShort formats minor units with trailing fractional zeros
// removed, the shape of the spec's JSON numbers: 1050 AUD is "10.5".
func FormatAmountShort(minor int64, cur Currency) string {
	return formatScaled(minor, cur.Exponent, 0)
}

// formatScaled prints v / 10^scale with at least minDecimals and at most
// scale decimals, trimming trailing zeros in between.
func formatScaled(v int64, scale, minDecimals int) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	s := strconv.FormatInt(v, 10)
	if scale == 0 {
		return sign + s
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	whole, frac := s[:len(s)-scale], s[len(s)-scale:]
	for len(frac) > minDecimals && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if frac == "" {
		return sign + whole
	}
	return sign + whole + "." + frac
}

// Percent is a rate in hundredths of a basis point: 1.2% is 12000, so
// rates like 0.165% are exact. It prints as a decimal percentage.
type Percent int64

// PercentUnit is the value of 1%.
const PercentUnit Percent = 10000

// String prints the percentage without trailing zeros ("1.2", "2.95").
func (p Percent) String() string { return formatScaled(int64(p), 4, 0) }

// ParsePercent parses a decimal percentage such as "1.2" or "0.165".
func ParsePercent(s string) (Percent, error) {
	v, err := ParseAmount(s, Currency{Code: "%", Exponent: 4})
	if err != nil {
		return 0, fmt.Errorf("percentage %q: %w", MaskCardNumbers(s), err)
	}
	if v < 0 || v > 100*int64(PercentUnit) {
		return 0, fmt.Errorf("percentage %q is outside 0 to 100", MaskCardNumbers(s))
	}
	return Percent(v), nil
}

// Apply returns p of minor, rounded half-up to a whole minor unit.
func (p Percent) Apply(minor int64) int64 {
	return mulDivRoundHalfUp(minor, int64(p), 100*int64(PercentUnit))
}

// mulDivRoundHalfUp is paylink's one rounding rule (a surcharge, a fee
// line's micro-units, a fee line rounded to minor units): a*b/c for
// non-negative a, b and positive c, rounded half-up, with a 128-bit
// intermediate product so that no amount paylink accepts can overflow. Negative inputs count as zero; a
// quotient beyond int64 (impossible for amounts within MaxAmount)
// saturates at math.MaxInt64.
func mulDivRoundHalfUp(a, b, c int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	lo, carry := bits.Add64(lo, uint64(c)/2, 0)
	hi += carry
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, math.MaxInt64))
}
