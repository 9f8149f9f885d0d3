package paylink

import "testing"

func TestDirectDebitFeeFor(t *testing.T) {
	tests := []struct {
		name   string
		cfg    DirectDebitFeeConfig
		amount int64
		want   int64
	}{
		{"default small", DefaultDirectDebitFee(), 1000, 35},          // 0.5% of 10.00 + 0.30
		{"default rounds half up", DefaultDirectDebitFee(), 1010, 35}, // 5.05c -> 5c + 30c
		{"default half cent up", DefaultDirectDebitFee(), 1100, 36},   // 5.5c -> 6c + 30c
		{"default capped", DefaultDirectDebitFee(), 1_000_000, 500},
		{"no cap", DirectDebitFeeConfig{Percent: 10000, Fixed: 0}, 1_000_000, 10_000},
		{"fixed only", DirectDebitFeeConfig{Fixed: 99}, 123456, 99},
		{"cap below fixed", DirectDebitFeeConfig{Fixed: 99, Cap: 50}, 100, 50},
		{"largest amount", DirectDebitFeeConfig{Percent: 100 * PercentUnit}, MaxAmount, MaxAmount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.FeeFor(tt.amount); got != tt.want {
				t.Errorf("FeeFor(%d) = %d, want %d", tt.amount, got, tt.want)
			}
		})
	}
}

func TestDirectDebitFeeConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  DirectDebitFeeConfig
		ok   bool
	}{
		{"default", DefaultDirectDebitFee(), true},
		{"zero", DirectDebitFeeConfig{}, true},
		{"percent above 100", DirectDebitFeeConfig{Percent: 100*PercentUnit + 1}, false},
		{"negative fixed", DirectDebitFeeConfig{Fixed: -1}, false},
		{"negative cap", DirectDebitFeeConfig{Cap: -1}, false},
		{"all of the largest amount", DirectDebitFeeConfig{Percent: 100 * PercentUnit}, true},
		{"more than the largest amount, no cap", DirectDebitFeeConfig{Percent: 100 * PercentUnit, Fixed: 1}, false},
		{"more than the largest amount, capped", DirectDebitFeeConfig{Percent: 100 * PercentUnit, Fixed: 1, Cap: MaxAmount}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); (err == nil) != tt.ok {
				t.Errorf("got %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestNormalizeBSB(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"062-000", "062-000", true},
		{"062000", "062-000", true},
		{" 062000 ", "062-000", true},
		{"06200", "", false},
		{"0620000", "", false},
		{"062 000", "", false},
		{"06-2000", "", false},
		{"062-00a", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeBSB(tt.in)
			if got != tt.want || (err == nil) != tt.ok {
				t.Errorf("NormalizeBSB(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestCheckAccountNumber(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"12345", true},
		{"123456789", true},
		{"000123456", true},
		{"1234", false},
		{"1234567890", false},
		{"12345678a", false},
		{"1234-5678", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if err := CheckAccountNumber(tt.in); (err == nil) != tt.ok {
				t.Errorf("CheckAccountNumber(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}

func TestMaskAccountNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"123456789", "******789"},
		{"12345", "**345"},
		{"123", "***"},
	}
	for _, tt := range tests {
		if got := MaskAccountNumber(tt.in); got != tt.want {
			t.Errorf("MaskAccountNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDirectDebitTransitions(t *testing.T) {
	for _, step := range [][2]Status{
		{StatusProcessing, StatusPending}, {StatusProcessing, StatusFailed},
		{StatusPending, StatusApproved}, {StatusPending, StatusDeclined},
	} {
		if !CanTransition(step[0], step[1]) {
			t.Errorf("got %s -> %s refused, want allowed", step[0], step[1])
		}
	}
	if CanTransition(StatusDeclined, StatusApproved) {
		t.Errorf("got a dishonoured debit allowed to clear, want refused")
	}
}
