package checkout_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink/internal/apitest"
)

// start runs the site (API and payment pages) on a fresh SQLite file.
func start(t testing.TB) *apitest.Env {
	t.Helper()
	return apitest.Start(t, apitest.Options{})
}

// startPostgres is start on a fresh PostgreSQL database.
func startPostgres(t testing.TB) *apitest.Env {
	t.Helper()
	return apitest.Start(t, apitest.Options{DSN: pg.Database(t)})
}

// link creates a payment link of AUD amount and returns its response.
func link(t testing.TB, env *apitest.Env, m *apitest.Merchant, amount string, extra map[string]any) apitest.Response {
	t.Helper()
	b := map[string]any{"amount": amount, "currency": "AUD", "merchantReference": "ORDER-42",
		"customer": map[string]any{"first_name": "Jo", "last_name": "Citizen", "email": "jo@example.com",
			"reference": "CUST-7", "city": "Sydney", "country_code": "AU"}}
	for k, v := range extra {
		b[k] = v
	}
	r := env.Post("/v5/payment-links", m, b)
	if r.Status != http.StatusOK {
		t.Fatalf("create link: got %d %s, want 200", r.Status, r.Raw)
	}
	return r
}

// browser is an HTTP client with cookies, like one browser.
type browser struct {
	t      testing.TB
	c      *http.Client
	origin string
}

func newBrowser(t testing.TB, env *apitest.Env) *browser {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{t: t, c: c, origin: env.Server.URL}
}

// page is a fetched page.
type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return page{status: res.StatusCode, header: res.Header, body: string(raw)}
}

// quote posts body to the live surcharge quote of the page at pageURL,
// with the CSRF token csrf, as the page's script does.
func (b *browser) quote(pageURL, csrf, body string) page {
	req, _ := http.NewRequest(http.MethodPost, pageURL+"/surcharge", strings.NewReader(body))
	req.Header.Set("X-CSRF-Token", csrf)
	return b.do(req)
}

func (b *browser) get(u string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return b.do(req)
}

func (b *browser) post(u string, form url.Values) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// postFrom is post from the remote address addr, served by the site's
// handler directly: a loopback connection cannot come from elsewhere.
func (b *browser) postFrom(env *apitest.Env, addr, u string, form url.Values) page {
	b.t.Helper()
	req := httptest.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr
	for _, c := range b.c.Jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	env.Server.Config.Handler.ServeHTTP(w, req)
	return page{status: w.Code, header: w.Header(), body: w.Body.String()}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the page's CSRF token.
func (p page) csrf(t testing.TB) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no CSRF token in page (status %d)", p.status)
	}
	return m[1]
}

// cardForm is a filled card form.
func cardForm(csrf, number string) url.Values {
	return url.Values{"csrf": {csrf}, "card_holder": {"Jo Citizen"}, "card_number": {number},
		"card_expiry": {"12/39"}, "card_cvc": {"123"}, "first_name": {"Jo"}, "email": {"jo@example.com"}}
}
