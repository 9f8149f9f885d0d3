package checkout

import "testing"

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
