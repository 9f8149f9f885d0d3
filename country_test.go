package paylink

import (
	"strings"
	"testing"
)

func TestIsCountryCode(t *testing.T) {
	if n := len(strings.Fields(countryCodes)); n != 249 {
		t.Fatalf("table holds %d codes, ISO 3166-1 assigns 249", n)
	}
	for _, c := range []string{"AU", "GB", "US", "NZ", "AX", "ZW", "AD"} {
		if !IsCountryCode(c) {
			t.Errorf("%q refused", c)
		}
	}
	for _, c := range []string{"", "A", "AUS", "au", "Au", "UK", "ZZ", "EU", "12", "D ", " D", "E A"} {
		if IsCountryCode(c) {
			t.Errorf("%q accepted", c)
		}
	}
}
