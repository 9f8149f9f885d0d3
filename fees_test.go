package paylink

import (
	"encoding/json"
	"testing"
)

func TestPercentMicros(t *testing.T) {
	aud, _ := LookupCurrency("AUD")
	jpy, _ := LookupCurrency("JPY")
	kwd, _ := LookupCurrency("KWD")
	tests := []struct {
		name  string
		minor int64
		rate  Percent
		cur   Currency
		want  int64
	}{
		{"exact", 10120, 17500, aud, 1_771_000},
		{"half rounds up", 3373, 1250, aud, 42_163},         // 42162.5
		{"below half rounds down", 3371, 1234, aud, 41_598}, // 41598.14
		{"JPY has no minor unit", 1234, 29000, jpy, 35_786_000},
		{"KWD has three decimals", 1_234, 17500, kwd, 21_595}, // 1.234 KWD * 1.75% = 0.021595
		{"largest amount", MaxAmount, 100 * PercentUnit, aud, MaxAmount * 10_000},
		{"zero", 0, 17500, aud, 0},
		{"beyond int64 saturates", 1 << 62, 100 * PercentUnit, jpy, 1<<63 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentMicros(tt.minor, tt.rate, tt.cur); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFormatMicros(t *testing.T) {
	tests := map[int64]string{0: "0.00", 300_000: "0.30", 612_040: "0.61204", 61_204: "0.061204",
		2_071_000: "2.071", 1: "0.000001", 12_000_000: "12.00"}
	for in, want := range tests {
		if got := FormatMicros(in); got != want {
			t.Errorf("FormatMicros(%d): got %q, want %q", in, got, want)
		}
	}
}

func TestFeeLines(t *testing.T) {
	visa := &CardInfo{Brand: BrandVisa}
	amex := &CardInfo{Brand: BrandAmex}
	tests := []struct {
		name    string
		p       Pricing
		t       Transaction
		want    string
		summary string
	}{
		{name: "declined has no fee", p: DefaultPricing(),
			t:    Transaction{Status: StatusDeclined, Currency: "AUD", Amount: 1000, PaymentType: PaymentTypeCard, Details: TransactionDetails{Card: visa}},
			want: `null`, summary: `{"TotalMicros":0,"Currency":"AUD","Calculation":"EXACT","LineCount":0}`},
		{name: "hold is estimated", p: DefaultPricing(),
			t:       Transaction{Status: StatusPreAuthorised, Currency: "AUD", Amount: 1000, PaymentType: PaymentTypeCard, Details: TransactionDetails{Card: visa}},
			want:    `[{"Code":"SERVICE_BLENDED_FEE","Micros":475000,"Currency":"AUD","Settlement":"DEDUCTED","Calculation":"ESTIMATED"}]`,
			summary: `{"TotalMicros":475000,"Currency":"AUD","Calculation":"ESTIMATED","LineCount":1}`},
		{name: "direct debit is one DD_FEE line", p: Pricing{Billable: []string{FeeDirectDebit}},
			t:       Transaction{Status: StatusPending, Currency: "AUD", Amount: 5000, PaymentType: PaymentTypeBankAccount, Details: TransactionDetails{DirectDebitFee: 125}},
			want:    `[{"Code":"DD_FEE","Micros":1250000,"Currency":"AUD","Settlement":"BILLABLE","Calculation":"EXACT"}]`,
			summary: `{"TotalMicros":1250000,"Currency":"AUD","Calculation":"EXACT","LineCount":1}`},
		{name: "amex without tax", p: Pricing{AmexPercent: 30000},
			t:       Transaction{Status: StatusApproved, Currency: "AUD", Amount: 1000, Surcharge: 25, PaymentType: PaymentTypeCard, Details: TransactionDetails{Card: amex}},
			want:    `[{"Code":"AMEX_FEE","Micros":307500,"Currency":"AUD","Settlement":"DEDUCTED","Calculation":"EXACT"}]`,
			summary: `{"TotalMicros":307500,"Currency":"AUD","Calculation":"EXACT","LineCount":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := tt.p.FeeLines(&tt.t)
			got, _ := json.Marshal(lines)
			if string(got) != tt.want {
				t.Errorf("lines: got %s, want %s", got, tt.want)
			}
			s, _ := json.Marshal(SummarizeFees(lines, tt.t.Currency, func(FeeLine) bool { return true }))
			if string(s) != tt.summary {
				t.Errorf("summary: got %s, want %s", s, tt.summary)
			}
		})
	}
}
