package paylink

import "testing"

// TestReturnAddressKeepsTheMerchantsQuery: the challenge page sends the
// customer back to the merchant's address with purchase_reference added
// and the rest of its query as written (spec sweep: it was rebuilt
// through url.Values, which dropped pairs holding ';' or a bad escape and
// sorted and re-encoded the rest).
func TestReturnAddressKeepsTheMerchantsQuery(t *testing.T) {
	for raw, want := range map[string]string{
		"https://m.example/r":                            "https://m.example/r?purchase_reference=pr_X",
		"https://m.example/r?order=5;lang=en":            "https://m.example/r?order=5;lang=en&purchase_reference=pr_X",
		"https://m.example/r?x=%zz&order=5":              "https://m.example/r?x=%zz&order=5&purchase_reference=pr_X",
		"https://m.example/r?z=1&a=a%20b":                "https://m.example/r?z=1&a=a%20b&purchase_reference=pr_X",
		"https://m.example/r?order=5#frag":               "https://m.example/r?order=5&purchase_reference=pr_X#frag",
		"https://m.example/r?purchase_reference=old&z=1": "https://m.example/r?z=1&purchase_reference=pr_X",
		"https://m.example/r?purchase%5Freference=old":   "https://m.example/r?purchase_reference=pr_X",
		"https://m.example/r?a=1&&b=2&":                  "https://m.example/r?a=1&b=2&purchase_reference=pr_X",
	} {
		got, err := returnAddress(raw, "pr_X")
		if err != nil || got != want {
			t.Errorf("returnAddress(%q): got %q, %v; want %q", raw, got, err, want)
		}
	}
}
