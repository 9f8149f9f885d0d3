package paylink

import (
	"os"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

func TestBrandOf(t *testing.T) {
	tests := map[string]string{
		"4111111111111111": BrandVisa, "5555555555554444": BrandMastercard, "2221000000000009": BrandMastercard,
		"378282246310005": BrandAmex, "340000000000009": BrandAmex, "3530111333300000": BrandJCB,
		"6011111111111117": BrandDiscover, "6445644564456445": BrandDiscover, "30569309025904": BrandDiners,
		"36227206271667": BrandDiners, "6200000000000005": BrandUnionPay, "9999999999999995": "",
		"3095000000000000": BrandDiners, "3060000000000000": "", "8171999927660000": BrandUnionPay,
		"6221260000000000": BrandDiscover, "6229250000000000": BrandDiscover, "6221250000000000": BrandUnionPay,
		"6229260000000000": BrandUnionPay, "6440000000000000": BrandDiscover, "6430000000000000": "",
		"2720990000000000": BrandMastercard, "2721000000000000": "", "3589000000000000": BrandJCB, "3590000000000000": "",
	}
	for pan, want := range tests {
		if got := BrandOf(pan); got != want {
			t.Errorf("BrandOf(%s): got %q, want %q", pan, got, want)
		}
	}
}

func TestNormalizePAN(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "4111 1111 1111 1111", want: "4111111111111111"},
		{in: "4111-1111-1111-1111", want: "4111111111111111"},
		{in: "4111111111111112", bad: true},
		{in: "41111111111", bad: true},
		{in: "41111111111111111111", bad: true},
		{in: "4111x11111111111", bad: true},
		{in: "", bad: true},
	}
	for _, tt := range tests {
		got, err := NormalizePAN(tt.in)
		if (err != nil) != tt.bad || got != tt.want && !tt.bad {
			t.Errorf("NormalizePAN(%q): got %q, %v; want %q bad=%v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// withLuhn completes digits with the check digit that makes them pass
// the Luhn check.
func withLuhn(digits string) string {
	for d := '0'; d <= '9'; d++ {
		if n := digits + string(d); LuhnValid(n) {
			return n
		}
	}
	panic("no check digit")
}

// TestParseCardNumberIsWhatTextRefuses: a number is taken as a card
// exactly when ContainsCardNumber finds it in text, so that none charged
// as a card is stored in clear in a free-text field. The code review
// sweep paid a 14-digit Visa number also sent, and stored in clear, as
// the invoice number: payments took 12 to 19 Luhn-valid digits of any
// supported brand, text found only the lengths each brand issues.
func TestParseCardNumberIsWhatTextRefuses(t *testing.T) {
	for _, prefix := range []string{"4", "51", "22", "34", "37", "36", "6011", "35", "62"} {
		for n := 12; n <= 19; n++ {
			pan := withLuhn(prefix + strings.Repeat("0", n-len(prefix)-1))
			_, brand, err := ParseCardNumber(pan)
			if taken, inText := err == nil, ContainsCardNumber("order "+pan); taken != inText {
				t.Errorf("%s (%d digits, brand %q): taken as a card %v (%v), found in text %v", pan, n, brand, taken, err, inText)
			}
		}
	}
	for _, pan := range []string{"4111 1111 1111 1111", "378282246310005", "30569309025904", "4000000000000002"} {
		if _, _, err := ParseCardNumber(pan); err != nil {
			t.Errorf("ParseCardNumber(%q): %v, want a card", pan, err)
		}
	}
}

func TestMaskPAN(t *testing.T) {
	for pan, want := range map[string]string{
		"4111111111111111": "411111******1111", "378282246310005": "378282*****0005",
		"411111111117": "********1117", "4111111111113": "*********1113", "123": "***"} {
		if got := MaskPAN(pan); got != want {
			t.Errorf("MaskPAN(%s): got %s, want %s", pan, got, want)
		}
	}
}

func TestCheckExpiry(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		month, year, want int
		bad               bool
	}{
		{month: 11, year: 26, want: 2026},
		{month: 12, year: 2030, want: 2030},
		{month: 10, year: 26, bad: true},
		{month: 13, year: 30, bad: true},
		{month: 0, year: 30, bad: true},
		{month: 1, year: 1999, bad: true},
	}
	for _, tt := range tests {
		got, err := CheckExpiry(tt.month, tt.year, now)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("CheckExpiry(%d, %d): got %d, %v; want %d bad=%v", tt.month, tt.year, got, err, tt.want, tt.bad)
		}
	}
}

func TestRegionClass(t *testing.T) {
	tests := []struct{ issuer, merchant, want string }{
		{"AU", "AU", RegionDomestic},
		{"NZ", "AU", RegionIntraregional},
		{"GB", "AU", RegionInternational},
		{"DE", "FR", RegionEEA},
		{"GB", "FR", RegionIntraregional},
		{"US", "AU", RegionInternational},
	}
	for _, tt := range tests {
		if got := RegionClass(tt.issuer, tt.merchant); got != tt.want {
			t.Errorf("RegionClass(%s, %s): got %s, want %s", tt.issuer, tt.merchant, got, tt.want)
		}
	}
}

func TestSurchargeRateFor(t *testing.T) {
	r := DefaultSurchargeRates()
	tests := []struct {
		card   CardInfo
		region string
		want   Percent
	}{
		{CardInfo{Brand: BrandVisa, Funding: FundingDebit}, RegionDomestic, r.Debit},
		{CardInfo{Brand: BrandVisa, Funding: FundingCredit}, RegionDomestic, r.Credit},
		{CardInfo{Brand: BrandAmex, Funding: FundingCredit}, RegionDomestic, r.Amex},
		{CardInfo{Brand: BrandAmex, Funding: FundingCredit}, RegionInternational, r.International},
		{CardInfo{Brand: BrandVisa, Funding: FundingDebit}, RegionIntraregional, r.International},
	}
	for _, tt := range tests {
		if got := r.RateFor(tt.card, tt.region); got != tt.want {
			t.Errorf("RateFor(%+v, %s): got %s, want %s", tt.card, tt.region, got, tt.want)
		}
	}
}

func FuzzNormalizePAN(f *testing.F) {
	for _, s := range []string{"4111111111111111", "4111 1111", "", "abc", "0000000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pan, err := NormalizePAN(s)
		if err != nil {
			return
		}
		if !LuhnValid(pan) || len(pan) < 12 || len(pan) > 19 {
			t.Fatalf("NormalizePAN(%q) accepted %q", s, pan)
		}
		if m := MaskPAN(pan); len(m) != len(pan) || m[len(m)-4:] != pan[len(pan)-4:] {
			t.Fatalf("MaskPAN(%q) = %q", pan, m)
		}
	})
}

func TestRandomTokenIsAlphanumeric(t *testing.T) {
	s, err := NewService(Config{}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 50 {
		tok, err := s.randomToken(TokenLength)
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != TokenLength || seen[tok] {
			t.Fatalf("got token %q (len %d, repeat %v)", tok, len(tok), seen[tok])
		}
		seen[tok] = true
		for _, c := range tok {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				t.Fatalf("token has %q", c)
			}
		}
	}
}

func TestContainsCardNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"4111111111111111":                       true,
		"4111 1111 1111 1111":                    true,
		"INV-4111-1111-1111-1111":                true,
		"card 378282246310005 ok":                true, // Amex, 15 digits
		"5555555555554444":                       true,
		"4111111111111112":                       false, // Luhn fails
		"1234567890123456":                       false, // Luhn passes, no brand starts with 1
		"4111  1111 1111 1111":                   true,  // two spaces
		"4111 - 1111 - 1111 - 1111":              true,
		"4111.1111.1111.1111":                    true,
		"4111/1111/1111/1111":                    true,
		"4111_1111_1111_1111":                    true,
		"4111 1111  1111 1111":                   true,
		"3782.822463.10005":                      true, // Amex, 4-6-5
		"4111.1111.1111.1111.2026":               true,
		"4111.1111/1111.1111":                    false, // separators of two kinds
		"4111    1111 1111 1111":                 false, // four spaces split the run into 4 and 12 digits
		"10.50 on 27/11/2026":                    false,
		"203.0.113.9 198.51.100.7":               false,
		"437.906.0495 / 466.528.6258":            false,
		"Service period 24/11/2026 - 23/12/2026": false,
		"INV 24.11.2026/51069271":                false,
		"423086_1772649819":                      false,
		"51.90 / 54.69 / 60.36 / 18.72":          false,
		"0487 430 409 / 02 9159 6861":            false,
		"411111111111":                           false, // 12 digits
		"41111111111111111111":                   false, // 20 digits
		"+61 412 345 678":                        false,
		"INV-2026-11-27-000123":                  false,
		"":                                       false,
		"4111111111111111-":                      true,
		"order 4111111111111111/2":               true,
		"4111 1111 1111 1111 1111 1":             true, // its first four groups
		"4111 1111 1111 1111 12/29":              true,
		"4111 1111 1111 1111 123":                true,
		"0 4111 1111 1111 1111":                  true,
		"4111111111111111-7":                     true,
		"356938035643809":                        false, // an IMEI in the JCB range: JCB issues 16 to 19 digits
		"3569380356438091":                       false, // Luhn fails
		"2026-1127-0001-2345-67":                 false,
		"1234 5678 9012 3456 7890":               false,
		// Digits inside a longer token: a hex HMAC-SHA256 and a UUID
		// whose digit runs pass for cards, a letter touching the run.
		"60261c07202c8d4829556058863d7d5c5eb5bcb57cc8a6ce6014c4665252b5ab":             false,
		"https://shop.example/3ds/return?session=4f3b5d46-3799-4928-922c-2fc1ee1a3428": false,
		"4829556058863d7d":         false,
		"ref:4829556058863":        true, // the same digits standing alone
		"Card: 4111111111111111.":  true,
		"x4111 1111 1111 1111 now": false,
	} {
		if got := ContainsCardNumber(s); got != want {
			t.Errorf("ContainsCardNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestMaskCardNumbers(t *testing.T) {
	for s, want := range map[string]string{
		`"4111 1111 1111 1111" is not a decimal amount`: `"411111******1111" is not a decimal amount`,
		"refs 5555-5555-5555-4444 and 378282246310005":  "refs 555555******4444 and 378282*****0005",
		"INV-2026-11-27-000123":                         "INV-2026-11-27-000123",
		"4111.1111.1111.1111 paid":                      "411111******1111 paid",
		"23/01/2026 4111 1111 1111 1111":                "23/01/2026 411111******1111",
		"23-01-2026 4111 1111 1111 1111":                "230120**************1111",
		"":                                              "",
	} {
		if got := MaskCardNumbers(s); got != want {
			t.Errorf("MaskCardNumbers(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestCardNumbersInOtherScripts: a card number written with the spaces,
// dashes or digits of another script (pasted from a document: no-break
// and thin spaces, an en dash; full-width or Arabic-Indic digits; a
// zero-width space between groups) is found and masked like its ASCII
// spelling, and the text around it is kept as it was (the secrets sweep
// found each of these stored and sent in clear).
func TestCardNumbersInOtherScripts(t *testing.T) {
	for s, masked := range map[string]string{
		"4242\u00a04242\u00a04242\u00a04242":        "424242******4242",
		"ref 4242\u20094242\u20094242\u20094242 ok": "ref 424242******4242 ok",
		"4242\u202f4242\u202f4242\u202f4242":        "424242******4242",
		"4242\u20134242\u20134242\u20134242":        "424242******4242",
		"4242 \u2014 4242 \u2014 4242 \u2014 4242":  "424242******4242",
		"\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12\uff14\uff12": "424242******4242",
		"\u0664\u0662\u0664\u0662\u0664\u0662\u0664\u0662\u0664\u0662\u0664\u0662\u0664\u0662\u0664\u0662": "424242******4242",
		"4242\u200b4242\u200b4242\u200b4242 \u00e9t\u00e9":                                                 "424242******4242 \u00e9t\u00e9",
		"\u00e9t\u00e9 4242\u00ad4242\u00ad4242\u00ad4242":                                                 "\u00e9t\u00e9 424242******4242",
	} {
		if !ContainsCardNumber(s) || !ContainsCardNumberAnywhere(s) || !ContainsCardNumberWithin(s) {
			t.Errorf("%q: not found as a card number", s)
		}
		if got := MaskCardNumbers(s); got != masked {
			t.Errorf("MaskCardNumbers(%q) = %q, want %q", s, got, masked)
		}
	}
	for _, s := range []string{"caf\u00e9 \u20ac10\u00a0000", "\u0664\u0662\u0664\u0662", "\u65e5\u672c 2026\u5e7411\u670829\u65e5", "\xff4111"} {
		if ContainsCardNumber(s) || MaskCardNumbers(s) != s {
			t.Errorf("%q: taken for a card number", s)
		}
	}
}

// TestEveryDecimalDigitFolds: each decimal digit Unicode knows reads as
// its ASCII digit (digitValue's rule that unicode.Nd's ranges are whole
// runs from 0 to 9).
func TestEveryDecimalDigitFolds(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r < utf8.RuneSelf || !unicode.Is(unicode.Nd, r) {
			continue
		}
		if zero := r - rune(digitValue(r)); !unicode.Is(unicode.Nd, zero) || unicode.Is(unicode.Nd, zero-1) && digitValue(zero-1) != 9 {
			t.Fatalf("U+%04X: digit %d, whose zero U+%04X is not one", r, digitValue(r), zero)
		}
	}
}

// TestContainsCardNumberWithin: a card number inside a longer run of
// digits is found for request ids (ContainsCardNumberWithin), and not for
// what an operator types (ContainsCardNumberAnywhere), where a long
// acquirer id would often hold one by chance.
func TestContainsCardNumberWithin(t *testing.T) {
	tests := []struct {
		s              string
		anywhere, with bool
	}{
		{"4111111111111111", true, true},
		{"order4111111111111111", true, true},
		{"41111111111111110", false, true},
		{"04111111111111111", false, true},
		{"4111-1111-1111-11110", false, true},
		{"8774444250291156194", false, true}, // an acquirer id holding one by chance
		{"1234567890123456", false, false},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", false, false},
	}
	for _, tt := range tests {
		if got := ContainsCardNumberAnywhere(tt.s); got != tt.anywhere {
			t.Errorf("ContainsCardNumberAnywhere(%q) = %v, want %v", tt.s, got, tt.anywhere)
		}
		if got := ContainsCardNumberWithin(tt.s); got != tt.with {
			t.Errorf("ContainsCardNumberWithin(%q) = %v, want %v", tt.s, got, tt.with)
		}
	}
}

// TestEverySandboxCardIsListed: each test card the sandbox describes
// (binTable) is in the README's table of test cards and in the list the
// demo prints, so that no card behaves in a way only the code tells.
func TestEverySandboxCardIsListed(t *testing.T) {
	for _, file := range []string{"README.md", "cmd/paylink/demo.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for number := range binTable {
			if !strings.Contains(string(b), number) {
				t.Errorf("%s does not list the sandbox's test card %s", file, number)
			}
		}
	}
}

// TestCheckCVC: a security code has its card brand's length, and a code
// of the wrong shape is told that length too; a surcharge preview, whose
// code the spec types a number (no leading zeros), takes up to 4 digits
// on any card (verification sweeps).
func TestCheckCVC(t *testing.T) {
	const amex, visa = "378282246310005", "4111111111111111"
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		number, cvc string
		quoted      bool
		want        string // "" for no problem
	}{
		{visa, "123", false, ""},
		{visa, "1234", false, CVCLengthProblem(3)},
		{visa, "12", false, CVCLengthProblem(3)},
		{visa, "12a", false, CVCLengthProblem(3)},
		{amex, "1234", false, ""},
		{amex, "0123", false, ""},
		{amex, "123", false, CVCLengthProblem(4)},
		{amex, "12345", false, CVCLengthProblem(4)},
		{visa, "", false, ""},
		{"not a number", "12", false, "must be 3 or 4 digits"},
		{amex, "123", true, ""},
		{visa, "1234", true, ""},
		{visa, "45", true, ""}, // "045" sent as the number the spec types it
		{visa, "12345", true, "must be at most 4 digits"},
		{visa, "1a", true, "must be at most 4 digits"},
	} {
		f := FieldErrors{}
		c := &CardDetails{Number: tt.number, CVC: tt.cvc, ExpiryMonth: 12, ExpiryYear: 2030, HolderName: "Jo"}
		if tt.quoted {
			checkQuotedCard(f, c, now)
		} else {
			checkCard(f, c, now)
		}
		if got := f["card.cvc"]; got != tt.want {
			t.Errorf("%s with cvc %q (preview %v): got %q, want %q", tt.number, tt.cvc, tt.quoted, got, tt.want)
		}
	}
}
