package checkout

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestParseExpiry(t *testing.T) {
	tests := []struct {
		in          string
		month, year int
		ok          bool
	}{
		{"12/39", 12, 39, true},
		{"1 / 2039", 1, 2039, true},
		{"0739", 7, 39, true},
		{"07-39", 7, 39, true},
		{"", 0, 0, false},
		{"12/3", 0, 0, false},
		{"123/39", 0, 0, false},
		{"ab/cd", 0, 0, false},
		{"12/039", 0, 0, false},
		{"+1/39", 0, 0, false},
		{"-1/39", 0, 0, false},
		{"12/+039", 0, 0, false},
		{"12/0039", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, y, ok := parseExpiry(tt.in)
			if m != tt.month || y != tt.year || ok != tt.ok {
				t.Errorf("got %d, %d, %v, want %d, %d, %v", m, y, ok, tt.month, tt.year, tt.ok)
			}
		})
	}
}

func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{"12/39", "0739", "1 / 2039", "", "//", "-1/-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, y, ok := parseExpiry(s)
		if ok && (m < 0 || m > 99 || y < 0 || y > 9999) {
			t.Errorf("parseExpiry(%q) = %d, %d, true: want a month of at most 2 digits and a year of 2 or 4", s, m, y)
		}
	})
}

// TestEmptyFormFieldsAreAbsent checks that the page's optional fields
// sent empty (every browser posts every input) read exactly as if they
// were not posted, like the API's empty JSON keys.
func TestEmptyFormFieldsAreAbsent(t *testing.T) {
	optional := []string{"first_name", "last_name", "email", "phone", "address", "address2", "city", "state",
		"postcode", "country_code", "customer_reference", "invoice_number", "timezone"}
	read := func(values url.Values) (formValues, map[string]string) {
		r := httptest.NewRequest(http.MethodPost, "/pay/x", strings.NewReader(values.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		errs := map[string]string{}
		return readForm(r, errs), errs
	}
	want, wantErrs := read(url.Values{"csrf": {"c"}})
	for _, filler := range []string{"", "   "} {
		t.Run(strconv.Quote(filler), func(t *testing.T) {
			values := url.Values{"csrf": {"c"}}
			for _, k := range optional {
				values.Set(k, filler)
			}
			got, errs := read(values)
			if got != want || len(errs) != len(wantErrs) {
				t.Errorf("got %+v %v, want %+v %v", got, errs, want, wantErrs)
			}
		})
	}
}

// TestTruncateKeepsCharactersWhole: a cut field ends on a character
// boundary, so that a name cut at the limit is still UTF-8.
func TestTruncateKeepsCharactersWhole(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"aéé", 2, "aé"}, {"北京市", 1, "北"}, {"😀😀", 1, "😀"}, {"", 0, ""},
	} {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d): got %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// TestUserAgentIsMadeText: the customer cannot change what their browser
// sends, so a User-Agent that is not UTF-8 or has control characters is
// cleaned, not refused (a card number in it masked), and a long one is
// cut to the Service's limit.
func TestUserAgentIsMadeText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Mozilla/5.0 (X11)", "Mozilla/5.0 (X11)"},
		{"Mozilla/5.0 \xff\xfe", "Mozilla/5.0 \uFFFD"},
		{"Mozilla\t5.0\x7f", "Mozilla 5.0 "},
		{strings.Repeat("é", 600), strings.Repeat("é", 512)},
		{"Mozilla/5.0 4111 1111 1111 1111", "Mozilla/5.0 411111******1111"},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("User-Agent", tt.in)
		if got := userAgent(r); got != tt.want {
			t.Errorf("userAgent(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
