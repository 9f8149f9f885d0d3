package webhook_test

import (
	"testing"

	"github.com/paylink/paylink/internal/webhook"
)

// TestReceiverKeys: rows are held under their merchant and normalised
// endpoint. Two merchants on one host, or one merchant's two paths, are
// two receivers, and so are http and https on one host (ports 80 and
// 443); spellings of one endpoint (case, an explicit default port, a
// trailing dot, an empty path) are one.
func TestReceiverKeys(t *testing.T) {
	const base = "https://hooks.example.com/a"
	for _, c := range []struct {
		mid, url string
		same     bool
	}{
		{"M1", "https://HOOKS.example.com/a", true},
		{"M1", "HTTPS://hooks.example.com:443/a", true},
		{"M1", "https://hooks.example.com./a", true},
		{"M1", "https://hooks.example.com/a?x=1", true},
		{"M1", "http://hooks.example.com/a", false},
		{"M1", "https://hooks.example.com:8443/a", false},
		{"M1", "https://hooks.example.com/b", false},
		{"M1", "https://hooks.example.com/A", false},
		{"M2", base, false},
	} {
		a, b := webhook.ReceiverKey("M1", base), webhook.ReceiverKey(c.mid, c.url)
		if (a == b) != c.same {
			t.Errorf("%s %s: got key %q beside %q for %s %s, want same %v", c.mid, c.url, b, a, "M1", base, c.same)
		}
	}
	if a, b := webhook.ReceiverKey("M1", "https://h.example"), webhook.ReceiverKey("M1", "https://h.example:443/"); a != b {
		t.Errorf("an empty path and /: got keys %q and %q, want one", a, b)
	}
}
