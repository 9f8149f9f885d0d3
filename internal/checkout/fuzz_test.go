package checkout_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// pageActions are the hosted page's form targets, relative to a link's page.
var pageActions = []string{"", "/surcharge", "/wallet/applepay", "/wallet/applepay/confirm", "/wallet/nope/confirm",
	"/zip", "/zip/confirm"}

// FuzzPagesNeverAnswer5xx posts arbitrary form bodies (with and without
// the page's real CSRF token) to every form of the hosted page and the
// virtual terminal: the answer must be below 500 whatever arrives.
func FuzzPagesNeverAnswer5xx(f *testing.F) {
	for i, seed := range []string{
		"card_number=4111111111111111&card_expiry=12%2F39&card_cvc=123&card_holder=Jo",
		"card_number=4000000000000002&card_expiry=1339&card_cvc=12a",
		"card_number=&first_name=%3Cscript%3E&email=x",
		"card_number=4111111111111111&card_expiry=12%2F39&timezone=Mars%2FOlympus&invoice_number=" + strings.Repeat("9", 300),
		"number=4111111111111111",
		"%zz=%zz",
	} {
		f.Add(uint8(i), seed, i%2 == 0, i%3 == 0)
	}
	env := start(f)
	m := env.Onboard()
	f.Fuzz(func(t *testing.T, action uint8, form string, withCSRF, terminal bool) {
		env := env.For(t)
		r := link(t, env, m, "10.50", nil)
		page, vt := pageURLs(r)
		if terminal {
			page = vt
		}
		b := newBrowser(t, env)
		body := form
		if withCSRF {
			body += "&csrf=" + url.QueryEscape(b.get(page).csrf(t))
		}
		req, _ := http.NewRequest(http.MethodPost, page+pageActions[int(action)%len(pageActions)], strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if p := b.do(req); p.status >= http.StatusInternalServerError {
			t.Fatalf("POST %q: got %d, want below 500:\n%s", body, p.status, p.body)
		}
	})
}
