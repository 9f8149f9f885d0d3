package paylink

import "testing"

// TestASCIIHost: internationalised labels in their "xn--" form, as
// golang.org/x/net/idna (and so net/http's dialing) writes them; the
// vectors are RFC 3492's and well-known IDNA test names.
func TestASCIIHost(t *testing.T) {
	for in, want := range map[string]string{
		"bücher.example":        "xn--bcher-kva.example",
		"BÜCHER.Example":        "xn--bcher-kva.example",
		"xn--bcher-kva.example": "xn--bcher-kva.example",
		"münchen.de":            "xn--mnchen-3ya.de",
		"mañana.com":            "xn--maana-pta.com",
		"例え.テスト":                "xn--r8jz45g.xn--zckzah",
		"☃.net":                 "xn--n3h.net",
		"hooks.example.com":     "hooks.example.com",
		"2001:db8::1":           "2001:db8::1",
	} {
		if got := asciiHost(in); got != want {
			t.Errorf("asciiHost(%q): got %q, want %q", in, got, want)
		}
	}
}
