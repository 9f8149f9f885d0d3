package paylink

import (
	"strings"
	"testing"
	"time"
)

// TestInvisibleCharsAreDefaultIgnorable: invisibleChar holds the
// characters Unicode's DerivedCoreProperties.txt lists as
// Default_Ignorable_Code_Point, at both ends of its ranges, but the
// characters kept on purpose, and the interlinear annotation marks.
func TestInvisibleCharsAreDefaultIgnorable(t *testing.T) {
	// DerivedCoreProperties.txt (Unicode 15.0), less what is kept.
	for _, r := range []rune{0x00ad, 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180b, 0x180f, 0x200b, 0x2060, 0x206f,
		0x3164, 0xfe00, 0xfe0f, 0xfeff, 0xffa0, 0xfff0, 0xfff8, 0x1bca0, 0x1bca3, 0x1d173, 0x1d17a, 0xe0000, 0xe0fff, 0xfff9, 0xfffb} {
		if !invisibleChar(r) {
			t.Errorf("U+%04X is default-ignorable and not refused", r)
		}
	}
	for _, r := range []rune{' ', 'A', 0x00a0, 0x061c, 0x200c, 0x200d, 0x200e, 0x202e, 0x2069, 0x0600, 0x13430, 0x3000} {
		if invisibleChar(r) {
			t.Errorf("U+%04X is refused, want it kept", r)
		}
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string
	}{
		{name: "empty", in: ""},
		{name: "at the limit", in: strings.Repeat("a", MaxFieldLength)},
		{name: "non-Latin at the limit", in: strings.Repeat("é", MaxFieldLength)},
		{name: "over the limit", in: strings.Repeat("a", MaxFieldLength+1), wantErr: "at most 128"},
		{name: "newline", in: "12 Main St\nEvil: header", wantErr: "control"},
		{name: "tab", in: "a\tb", wantErr: "control"},
		{name: "NUL", in: "a\x00b", wantErr: "control"},
		{name: "DEL", in: "a\x7fb", wantErr: "control"},
		{name: "C1 control", in: "a\u0085b", wantErr: "control"},
		{name: "not UTF-8", in: "INV\xff\xfe", wantErr: "UTF-8"},
		{name: "a lone surrogate's bytes", in: "a\xed\xa0\x80", wantErr: "UTF-8"},
		{name: "a character cut in two", in: "caf\xc3", wantErr: "UTF-8"},
		{name: "right-to-left override", in: "\u202eINV", wantErr: "bidirectional"},
		{name: "first strong isolate", in: "a\u2068b\u2069", wantErr: "bidirectional"},
		{name: "right-to-left mark", in: "\u05e9\u05dc\u05d5\u05dd\u200f"},
		{name: "zero-width joiner in a name", in: "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckText(tt.in, MaxFieldLength)
			if got := errText(err); tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(got, tt.wantErr) {
				t.Errorf("got %q, want error containing %q", got, tt.wantErr)
			}
		})
	}
}

func TestCheckEmail(t *testing.T) {
	tests := []struct {
		in     string
		wantOK bool
	}{
		{"jo@example.com", true},
		{"Jo.Bloggs+tag@mail.example.co.uk", true},
		{"jo@localhost", true},
		{"jo@example.com.", false},
		{"jo", false},
		{"@example.com", false},
		{"jo@", false},
		{"jo@@example.com", false},
		{"jo@ex@ample.com", false},
		{"jo @example.com", false},
		{"<jo@example.com>", false},
		{"jo@example.com, al@example.com", false},
		{"jo@example..com", false},
		{"jo@example.com\u00a0", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if err := CheckEmail(tt.in); (err == nil) != tt.wantOK {
				t.Errorf("got %v, want ok=%v", err, tt.wantOK)
			}
		})
	}
}

// TestCustomerEmailOneRule: a direct payment's customer and a link's
// customer are held to the same email and text rules.
func TestCustomerEmailOneRule(t *testing.T) {
	for _, email := range []string{"jo@example.com", "jo", "jo@", "jo @example.com", "<jo@example.com>"} {
		t.Run(email, func(t *testing.T) {
			c := Customer{Email: email, IPAddress: "192.0.2.1", Timezone: "UTC"}
			direct, link := FieldErrors{}, FieldErrors{}
			checkCustomer(direct, c)
			checkLinkCustomer(link, "customer.", c)
			if direct["customer.email"] != link["customer.email"] {
				t.Errorf("got %q for a payment and %q for a link, want the same", direct["customer.email"], link["customer.email"])
			}
			if got, want := direct["customer.email"] == "", CheckEmail(email) == nil; got != want {
				t.Errorf("got accepted=%v, want %v", got, want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestServiceFieldHygiene: the Service applies CheckText itself, so that
// every adapter (API, hosted page, CLI) gets the same answer.
func TestServiceFieldHygiene(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	purchase := func(mutate func(*PurchaseRequest)) error {
		r := PurchaseRequest{Amount: 100, Currency: "AUD", Customer: Customer{IPAddress: "192.0.2.1", Timezone: "UTC"},
			Card: &CardDetails{Number: "4111111111111111", ExpiryMonth: 12, ExpiryYear: 2030}}
		mutate(&r)
		return r.validate(now)
	}
	link := func(mutate func(*NewLink)) error {
		n := NewLink{Amount: 100, Currency: "AUD", MerchantReference: "ORDER-1"}
		mutate(&n)
		return n.validate(&Merchant{}, now)
	}
	tests := []struct {
		name, wantField string
		err             error
	}{
		{"purchase: valid", "", purchase(func(*PurchaseRequest) {})},
		{"purchase: control character in a customer field", "customer.city", purchase(func(r *PurchaseRequest) { r.Customer.City = "Sydney\r\n" })},
		{"purchase: long customer field", "customer.last_name", purchase(func(r *PurchaseRequest) { r.Customer.LastName = strings.Repeat("x", MaxFieldLength+1) })},
		{"purchase: long user agent", "customer.user_agent", purchase(func(r *PurchaseRequest) { r.Customer.UserAgent = strings.Repeat("x", MaxUserAgentLength+1) })},
		{"purchase: long invoice", "purchase.invoice_number", purchase(func(r *PurchaseRequest) { r.InvoiceNumber = strings.Repeat("9", MaxInvoiceLength+1) })},
		{"purchase: control character in the holder name", "card.holder_name", purchase(func(r *PurchaseRequest) { r.Card.HolderName = "Jo\x00" })},
		{"link: valid", "", link(func(*NewLink) {})},
		{"link: long merchant reference", "merchantReference", link(func(n *NewLink) { n.MerchantReference = strings.Repeat("x", MaxFieldLength+1) })},
		{"link: control character in a customer field", "customer.address", link(func(n *NewLink) { n.Customer.Address = "1 Main St\tUnit 2" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields map[string]string
			if e, ok := tt.err.(*Error); ok {
				fields = e.Fields
			}
			switch {
			case tt.wantField == "" && tt.err != nil:
				t.Errorf("got %v, want no error", tt.err)
			case tt.wantField != "" && fields[tt.wantField] == "":
				t.Errorf("got %v, want a problem for %s", tt.err, tt.wantField)
			}
		})
	}
}

// TestCheckInvoice: an invoice number a look-up could not tell from
// another (invisible characters that spell nothing) or would resolve as
// a paylink reference is refused; ones that merely look alike, and the
// invisible characters writing needs, are kept (verification sweep:
// Persian invoice numbers, which need the zero-width non-joiner, were
// refused with every Unicode format character)
// (security sweep: "INV\u200b1" was stored, and a payment whose invoice
// number was another's purchase reference could never be looked up by
// it).
func TestCheckInvoice(t *testing.T) {
	for _, tt := range []struct {
		in, wantErr string
	}{
		{"INV-1", ""},
		{"pr_order-12", ""},
		{"pr_8DxHT8k5hhG28BxkBy4YWpoZ", ""},  // 24 characters: no reference
		{"PR_8DxHT8k5hhG28BxkBy4YWpoZZ", ""}, // references are lower-case
		{"pr_8DxHT8k5hhG28BxkBy4YWpoZZ", "shape of a paylink reference"},
		{"dd_8DxHT8k5hhG28BxkBy4YWpoZZ", "shape of a paylink reference"},
		{"rf_8DxHT8k5hhG28BxkBy4YWpoZZ", "shape of a paylink reference"},
		{"INV\u200b1", "invisible characters"},
		{"\ufeffINV-1", "invisible characters"},
		{"INV-\u00ad1", "invisible characters"},
		{"INV\u20601", "invisible characters"},
		{"\u0641\u0627\u06a9\u062a\u0648\u0631\u200c\u06f1\u06f2", ""}, // Persian, with its zero-width non-joiner
		{"\u0641\u0627\u062a\u0648\u0631\u0629\u200e INV-7", ""},       // Arabic, with a left-to-right mark
		{"\U0001f468\u200d\U0001f4bb-1", ""},                           // an emoji sequence
		{"\u202eINV", "bidirectional"},
		{"..", `"." or ".."`},
		// The rest of Unicode's default-ignorable characters (hostile
		// input sweep s23d: tag characters, the combining grapheme joiner
		// and the Hangul fillers were stored, "INV-7" and "INV-7" with a
		// tag after it two invoices).
		{"INV-7\U000e0041", "invisible characters"},
		{"INV-7\U000e0001", "invisible characters"},
		{"INV-7\u034f", "invisible characters"},
		{"INV-7\u115f", "invisible characters"},
		{"INV-7\u1160", "invisible characters"},
		{"INV-7\u3164", "invisible characters"},
		{"INV-7\uffa0", "invisible characters"},
		{"INV\u17b41", "invisible characters"},
		{"INV\u206a1", "invisible characters"},
		{"INV\U0001bca01", "invisible characters"},
		{"INV\ufff91", "invisible characters"}, // not default-ignorable, refused before and still
		// A variation selector is kept where it selects a look of the
		// character before it, and refused where it selects nothing.
		{"\u2764\ufe0f-1", ""},                  // a red heart, emoji presentation
		{"\u845b\U000e0100-1", ""},              // an ideograph's variant
		{"1\ufe0f\u20e3-INV", ""},               // a keycap
		{"INV-7\ufe0f", "invisible characters"}, // after ASCII, no keycap
		{"\ufe0fINV-7", "invisible characters"}, // at the start
		{"\u2764\ufe0f\ufe0f-1", "invisible characters"},
		{"INV-7\u200b\ufe0f", "invisible characters"},
		{"INV \U000e0100", "invisible characters"},
		// After a letter, a currency sign, a combining or enclosing mark,
		// a selector selects nothing (verification sweep).
		{"INV-\u00c4\ufe0f7", "invisible characters"},
		{"INV-\u00c4\ufe007", "invisible characters"},
		{"INV-\u20ac\ufe0f5", "invisible characters"},
		{"INV-e\u0301\ufe0f", "invisible characters"},
		{"1\ufe0f\u20e3\ufe0f", "invisible characters"},
		{"\u00a9\ufe0f-1", ""},                                     // ©, emoji presentation
		{"\u2194\ufe0f-1", ""},                                     // ↔
		{"\u1820\u180b-1", ""},                                     // a Mongolian letter's variant
		{"\U0001f3f3\ufe0f-1", ""},                                 // a white flag
		{"\u2139\ufe0f-1", ""},                                     // ℹ️, a letter by category
		{"\u203c\ufe0f\u2049\ufe0f\u3030\ufe0f\u303d\ufe0f-1", ""}, // ‼️ ⁉️ 〰️ 〽️, punctuation
		// Tags are kept in a subdivision flag, and only there.
		{"\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f-1", ""}, // Scotland's flag
		{"\U0001f3f4\U000e007f-1", "invisible characters"},                               // no tag
		{"\U0001f3f4\U000e0067\U000e0062-1", "invisible characters"},                     // not ended
		{"A\U000e0067\U000e007f", "invisible characters"},
		// Prepended concatenation marks are visible and kept.
		{"\u0600\u0661\u0662", ""},
	} {
		f := FieldErrors{}
		checkInvoice(f, "purchase.invoice_number", tt.in)
		if got := f["purchase.invoice_number"]; tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.wantErr)
		}
	}
}
