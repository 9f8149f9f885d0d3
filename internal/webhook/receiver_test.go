package webhook_test

import (
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/webhook"
)

// TestReceiverKeys: rows are held under their merchant and normalised
// host. Two merchants on one host are two receivers, and so are http and
// https on one host (ports 80 and 443); spellings of one host (case, an
// explicit default port or one with a leading zero, a trailing dot, an
// IPv6 address written two ways) are one, and so are one merchant's
// paths on it (a path per order must not make every webhook a receiver
// of its own, never held). A merchant's company webhook and its payment
// links' dynamic ones on one host are two receivers (spec 6.2.4: a
// failure at one does not delay the other), its dynamic paths on a host
// one. A key stays short whatever the URL's length.
func TestReceiverKeys(t *testing.T) {
	const base = "https://hooks.example.com/a"
	for _, c := range []struct {
		mid, url string
		same     bool
	}{
		{"M1", "https://HOOKS.example.com/a", true},
		{"M1", "HTTPS://hooks.example.com:443/a", true},
		{"M1", "https://hooks.example.com:0443/a", true},
		{"M1", "https://hooks.example.com./a", true},
		{"M1", "https://hooks.example.com/a?x=1", true},
		{"M1", "https://hooks.example.com/orders/1042", true},
		{"M1", "https://hooks.example.com/%7Ehook", true},
		{"M1", "http://hooks.example.com/a", false},
		{"M1", "https://hooks.example.com:8443/a", false},
		{"M2", base, false},
	} {
		a, b := webhook.ReceiverKey("M1", base), webhook.ReceiverKey(c.mid, c.url)
		if (a == b) != c.same {
			t.Errorf("%s %s: got key %q beside %q for %s %s, want same %v", c.mid, c.url, b, a, "M1", base, c.same)
		}
	}
	dyn := webhook.TargetReceiverKey("M1", paylink.TargetDynamic, base)
	if dyn == webhook.ReceiverKey("M1", base) {
		t.Errorf("company and dynamic webhooks on one host: got one key %q, want two", dyn)
	}
	if other := webhook.TargetReceiverKey("M1", paylink.TargetDynamic, "https://HOOKS.example.com/orders/1042"); other != dyn {
		t.Errorf("two dynamic paths on one host: got keys %q and %q, want one", dyn, other)
	}
	if a, b := webhook.ReceiverKey("M1", "https://[2001:db8::1]/x"), webhook.ReceiverKey("M1", "https://[2001:DB8:0::1]:443/y"); a != b {
		t.Errorf("one IPv6 address written two ways: got keys %q and %q, want one", a, b)
	}
	long := webhook.ReceiverKey("M1", "https://hooks.example.com/"+strings.Repeat("%E6%BC%A2", 2000))
	if len(long) > 100 {
		t.Errorf("a URL with a long path: got a key of %d bytes, want it short (an index entry)", len(long))
	}
}
