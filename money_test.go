package paylink

import (
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	aud, _ := LookupCurrency("aud")
	jpy, _ := LookupCurrency("JPY")
	kwd, _ := LookupCurrency("KWD")
	tests := []struct {
		in   string
		cur  Currency
		want int64
		bad  bool
	}{
		{in: "10", cur: aud, want: 1000},
		{in: "10.5", cur: aud, want: 1050},
		{in: "10.50", cur: aud, want: 1050},
		{in: "0.01", cur: aud, want: 1},
		{in: ".5", cur: aud, want: 50},
		{in: "10.", cur: aud, want: 1000},
		{in: "007.10", cur: aud, want: 710},
		{in: "10.500", cur: aud, want: 1050}, // trailing zeros are not extra precision
		{in: "1.234", cur: kwd, want: 1234},
		{in: "1500", cur: jpy, want: 1500},
		{in: "1500.00", cur: jpy, want: 1500}, // a client that always sends 2 decimals (docs/api.md)
		{in: "-2.5", cur: aud, want: -250},
		{in: "10.505", cur: aud, bad: true},
		{in: "1.5", cur: jpy, bad: true},
		{in: "1e3", cur: aud, bad: true},
		{in: "", cur: aud, bad: true},
		{in: ".", cur: aud, bad: true},
		{in: "1,000", cur: aud, bad: true},
		{in: "+5", cur: aud, bad: true},
		{in: "NaN", cur: aud, bad: true},
		{in: "10000000000.01", cur: aud, bad: true},
		{in: strings.Repeat("9", 40), cur: aud, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.cur.Code+"/"+tt.in, func(t *testing.T) {
			got, err := ParseAmount(tt.in, tt.cur)
			if (err != nil) != tt.bad {
				t.Fatalf("got %d, %v; want bad=%v", got, err, tt.bad)
			}
			if !tt.bad && got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFormatAmount(t *testing.T) {
	aud, _ := LookupCurrency("AUD")
	jpy, _ := LookupCurrency("JPY")
	tests := []struct {
		minor       int64
		cur         Currency
		full, short string
	}{
		{1050, aud, "10.50", "10.5"},
		{1000, aud, "10.00", "10"},
		{5, aud, "0.05", "0.05"},
		{0, aud, "0.00", "0"},
		{-250, aud, "-2.50", "-2.5"},
		{1500, jpy, "1500", "1500"},
	}
	for _, tt := range tests {
		if got := FormatAmount(tt.minor, tt.cur); got != tt.full {
			t.Errorf("FormatAmount(%d %s): got %q, want %q", tt.minor, tt.cur.Code, got, tt.full)
		}
		if got := FormatAmountShort(tt.minor, tt.cur); got != tt.short {
			t.Errorf("FormatAmountShort(%d %s): got %q, want %q", tt.minor, tt.cur.Code, got, tt.short)
		}
	}
}

func TestPercentApplyRoundsHalfUp(t *testing.T) {
	tests := []struct {
		rate  string
		minor int64
		want  int64
	}{
		{"1.2", 1050, 13},      // 12.6
		{"0.5", 10000, 50},     // exact
		{"2.5", 1999, 50},      // 49.975
		{"1", 50, 1},           // 0.5 rounds up
		{"1", 49, 0},           // 0.49 rounds down
		{"2.9", 17, 0},         // 0.493
		{"0.165", 100000, 165}, // four-decimal rates are exact
	}
	for _, tt := range tests {
		p, err := ParsePercent(tt.rate)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Apply(tt.minor); got != tt.want {
			t.Errorf("%s%% of %d: got %d, want %d", tt.rate, tt.minor, got, tt.want)
		}
		if p.String() != tt.rate {
			t.Errorf("String: got %q, want %q", p.String(), tt.rate)
		}
	}
	if _, err := ParsePercent("101"); err == nil {
		t.Errorf("101%%: got no error, want one")
	}
	if got := Percent(29000).Apply(MaxAmount); got != 29_000_000_000 {
		t.Errorf("largest amount: got %d, want 29000000000 (no overflow)", got)
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"10", "10.50", "-1.5", ".5", "1e3", "", "0.001", "99999999999999999999"} {
		f.Add(s)
	}
	aud, _ := LookupCurrency("AUD")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseAmount(s, aud)
		if err != nil {
			return
		}
		if v > MaxAmount || v < -MaxAmount {
			t.Fatalf("ParseAmount(%q) = %d, outside the limit", s, v)
		}
		back, err := ParseAmount(FormatAmount(v, aud), aud)
		if err != nil || back != v {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, v, FormatAmount(v, aud), back, err)
		}
	})
}

// TestMulDivRoundHalfUp: the one rounding rule at its edges: a half
// rounds up, just below a half down, negative inputs count as zero, and
// a product beyond int64 is exact while its quotient fits.
func TestMulDivRoundHalfUp(t *testing.T) {
	tests := []struct{ a, b, c, want int64 }{
		{5, 1, 10, 1},                    // 0.5
		{4, 1, 10, 0},                    // 0.4
		{15, 1, 10, 2},                   // 1.5
		{14999, 1, 10000, 1},             // 1.4999
		{15000, 1, 10000, 2},             // 1.5
		{1, 1, 1, 1},                     // exact
		{0, 7, 3, 0},                     // zero
		{-16000, 1, 10000, 0},            // negative counts as zero
		{7, -1, 2, 0},                    // negative counts as zero
		{1 << 62, 4, 8, 1 << 61},         // a*b beyond int64, quotient within
		{1 << 62, 1 << 62, 1, 1<<63 - 1}, // quotient beyond int64 saturates
	}
	for _, tt := range tests {
		if got := mulDivRoundHalfUp(tt.a, tt.b, tt.c); got != tt.want {
			t.Errorf("mulDivRoundHalfUp(%d, %d, %d): got %d, want %d", tt.a, tt.b, tt.c, got, tt.want)
		}
	}
}

// TestFormatIn: an amount in a currency named by its code, with all its
// decimals; an unknown code gives the minor units unscaled.
func TestFormatIn(t *testing.T) {
	for _, tt := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{1050, "AUD", "10.50"}, {1050, "aud", "10.50"}, {1050, "JPY", "1050"},
		{1050, "KWD", "1.050"}, {-5, "AUD", "-0.05"}, {1050, "XXX", "1050"}, {1050, "", "1050"},
	} {
		if got := FormatIn(tt.minor, tt.currency); got != tt.want {
			t.Errorf("FormatIn(%d, %q): got %q, want %q", tt.minor, tt.currency, got, tt.want)
		}
	}
}
