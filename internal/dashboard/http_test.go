package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base32"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/dashboard"
	"github.com/paylink/paylink/internal/httpx"
	"github.com/paylink/paylink/internal/mailer"
	"github.com/paylink/paylink/internal/mailer/mailertest"
	"github.com/paylink/paylink/internal/processor"
	"github.com/paylink/paylink/internal/sqlstore"
	"github.com/paylink/paylink/internal/vault"
)

// The dashboard's HTTP contract: sessions, redirects, CSRF, roles,
// isolation between merchants, throttling and headers.

func TestWithoutSessionRedirectsToSignIn(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	b := newBrowser(t, env)
	for _, path := range []string{"/dashboard/", "/dashboard/team", "/dashboard/audit", "/dashboard/account", "/dashboard/payments", "/dashboard/nowhere"} {
		t.Run(path, func(t *testing.T) {
			p := b.get(path)
			want := "/dashboard/login?next=" + url.QueryEscape(path) // back to the page after signing in
			if p.status != http.StatusSeeOther || p.header.Get("Location") != want {
				t.Errorf("got %d to %q, want 303 to %s", p.status, p.header.Get("Location"), want)
			}
		})
	}
	t.Run("POST logout", func(t *testing.T) {
		p := b.post("/dashboard/logout", url.Values{})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/login" {
			t.Errorf("got %d to %q, want 303 to /dashboard/login", p.status, p.header.Get("Location"))
		}
	})
}

func TestSecurityHeadersOnEveryPage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := newBrowser(t, env)
	login := b.get("/dashboard/login")
	b.mustSignIn("admin@example.com")
	pages := map[string]page{"login": login}
	for _, path := range []string{"/dashboard/", "/dashboard/team", "/dashboard/audit", "/dashboard/account", "/dashboard/nowhere"} {
		pages[path] = b.get(path)
	}
	for name, p := range pages {
		t.Run(name, func(t *testing.T) {
			csp := p.header.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'none'", "script-src 'self';", "frame-ancestors 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-") || strings.Count(csp, "script-src") != 1 {
				t.Errorf("CSP %q allows scripts beyond the dashboard's own files", csp)
			}
			if !regexp.MustCompile(`<script src="/dashboard/static/app\.js\?v=[0-9a-f]{12}" defer></script>`).MatchString(p.body) || strings.Contains(p.body, "<script>") {
				t.Errorf("the page does not load the dashboard's script, or has an inline one")
			}
			if got := p.header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control: got %q, want no-store", got)
			}
			if got := p.header.Get("Referrer-Policy"); got != "same-origin" {
				t.Errorf("Referrer-Policy: got %q, want same-origin", got)
			}
		})
	}
	if p := pages["/dashboard/nowhere"]; p.status != http.StatusNotFound {
		t.Errorf("unknown page: got %d, want 404", p.status)
	}
}

// TestIcon: every page names the icon, and the icon and the /favicon.ico
// browsers ask for anyway are served (a 404 there lowers Lighthouse's
// best practices score), public, to anyone.
func TestIcon(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	b := newBrowser(t, env)
	if p := b.get("/dashboard/login"); !strings.Contains(p.body, `<link rel="icon" href="/dashboard/static/favicon.svg"`) {
		t.Errorf("sign-in page: got %s, want a link to the icon", p.body)
	}
	for _, path := range []string{"/dashboard/static/favicon.svg", "/favicon.ico"} {
		t.Run(path, func(t *testing.T) {
			p := b.get(path)
			if p.status != http.StatusOK || p.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(p.body, "<svg") {
				t.Errorf("got %d %q %.40q, want 200 image/svg+xml <svg...", p.status, p.header.Get("Content-Type"), p.body)
			}
		})
	}
}

// TestScript: the dashboard's one script is served, public, as
// JavaScript, and reloads a page restored from the back/forward cache
// (TestBrowserBackAfterAnActionShowsNow runs it). Pages load the script
// and the style at addresses naming their build's versions, kept a year
// there; another build's address is not kept (an upgrade's other
// instance answering it would have its own file kept under it).
func TestScript(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	b := newBrowser(t, env)
	p := b.get("/dashboard/static/app.js")
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		p.header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(p.body, `addEventListener("pageshow"`) {
		t.Errorf("got %d %q %q, want 200 text/javascript, nosniff, the pageshow handler", p.status, p.header.Get("Content-Type"), p.body)
	}
	login := b.get("/dashboard/login").body
	for _, file := range []string{"app.js", "app.css"} {
		content := b.get("/dashboard/static/" + file).body
		own := "/dashboard/static/" + file + "?v=" + httpx.AssetVersion([]byte(content))
		if !strings.Contains(login, own) {
			t.Errorf("the sign-in page does not load %s", own)
		}
		for addr, want := range map[string]string{own: "public, max-age=31536000, immutable",
			"/dashboard/static/" + file + "?v=000000000000": "no-store", "/dashboard/static/" + file: "public, max-age=3600"} {
			if got := b.get(addr); got.body != content || got.header.Get("Cache-Control") != want {
				t.Errorf("%s: got Cache-Control %q (same file %v), want %q", addr, got.header.Get("Cache-Control"), got.body == content, want)
			}
		}
	}
}

func TestSignInDoesNotRevealEmails(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "known@example.com", paylink.RoleStaff)
	b := newBrowser(t, env)
	wrong := b.signIn("known@example.com", "not the password at all")
	unknown := b.signIn("nobody@example.com", "not the password at all")
	if wrong.status != http.StatusUnauthorized || unknown.status != wrong.status {
		t.Errorf("status: got %d (wrong password) and %d (unknown email), want 401 for both", wrong.status, unknown.status)
	}
	a := strings.ReplaceAll(wrong.body, "known@example.com", "EMAIL")
	u := strings.ReplaceAll(unknown.body, "nobody@example.com", "EMAIL")
	if a != u {
		t.Errorf("pages differ:\nwrong password: %s\nunknown email:  %s", a, u)
	}
}

func TestSignInThrottle(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		b := newBrowser(t, env)
		for i := range paylink.SignInFailureLimit {
			if p := b.signIn("staff@example.com", "wrong password number"); p.status != http.StatusUnauthorized {
				t.Fatalf("failure %d: got %d, want 401", i+1, p.status)
			}
		}
		if p := b.signIn("staff@example.com", password); p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "900" {
			t.Fatalf("right password after %d failures: got %d with Retry-After %q, want 429 with 900", paylink.SignInFailureLimit, p.status, p.header.Get("Retry-After"))
		}
		if p := b.signIn("other@example.com", "wrong password number"); p.status != http.StatusUnauthorized {
			t.Errorf("another email: got %d, want 401 (the throttle is per email)", p.status)
		}
		env.Clock.Advance(paylink.SignInFailureWindow + time.Second)
		b.mustSignIn("staff@example.com")
	})
}

// TestSignInLockoutIsAuditedOnce: a lock-out leaves one audit row
// (user.sign_in_throttled, denied, naming the limit) and one WARN line,
// however many attempts it refuses, and neither holds the password tried;
// once the window has passed, a new lock-out is audited again.
func TestSignInLockoutIsAuditedOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, dsn string) {
		env := apitest.Start(t, apitest.Options{DSN: dsn})
		m := env.Onboard()
		u := addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
		b := newBrowser(t, env)
		lockOut := func() {
			t.Helper()
			for i := range paylink.SignInFailureLimit {
				if p := b.signIn("staff@example.com", "wrong password number"); p.status != http.StatusUnauthorized {
					t.Fatalf("failure %d: got %d, want 401", i+1, p.status)
				}
			}
			for i := range 15 {
				pw := "wrong password number"
				if i%3 == 0 {
					pw = password
				}
				if p := b.signIn("staff@example.com", pw); p.status != http.StatusTooManyRequests {
					t.Fatalf("attempt %d past the limit: got %d, want 429", i+1, p.status)
				}
			}
		}
		throttleRows := func() []*paylink.AuditEvent {
			t.Helper()
			rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{Action: paylink.AuditSignInThrottled, Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		lockOut()
		rows := throttleRows()
		if len(rows) != 1 {
			t.Fatalf("throttle rows after 15 refused attempts: got %d, want 1", len(rows))
		}
		// The refused attempts wrote nothing: the next failure recorded
		// follows the last one kept (each refusal inserted a failure and
		// deleted it: abuse sweep).
		if p := b.signIn("nobody@example.com", "wrong password number"); p.status != http.StatusUnauthorized {
			t.Fatalf("another email's failure: got %d, want 401", p.status)
		}
		var last int
		if err := env.WriterDB(t).QueryRow(`SELECT MAX(id) FROM signin_failures`).Scan(&last); err != nil {
			t.Fatal(err)
		}
		if last != paylink.SignInFailureLimit+1 {
			t.Errorf("the failure after 15 refusals has id %d, want %d: refusals wrote rows", last, paylink.SignInFailureLimit+1)
		}
		if r := rows[0]; r.Outcome != paylink.OutcomeDenied || r.Detail != "limit=email_address" || r.ObjectID != u.ID ||
			r.MerchantID != m.ID || r.SourceIP == "" {
			t.Errorf("throttle row: got %+v, want denied, detail limit=email_address, the user and merchant, the source address", r)
		}
		logs := env.LogText()
		if n := strings.Count(logs, "dashboard sign-in locked out"); n != 1 || !strings.Contains(logs, `"level":"WARN","msg":"dashboard sign-in locked out`) {
			t.Errorf("lock-out log lines: got %d, want 1 at WARN:\n%s", n, logs)
		}
		for _, secret := range []string{"wrong password number", password} {
			if strings.Contains(logs, secret) || strings.Contains(fmt.Sprint(rows[0]), secret) {
				t.Errorf("the log or the throttle row holds a password tried (%q)", secret)
			}
		}
		env.Clock.Advance(paylink.SignInFailureWindow + time.Second)
		lockOut()
		if n := len(throttleRows()); n != 2 {
			t.Errorf("throttle rows after a second lock-out a window later: got %d, want 2", n)
		}
	})
}

// TestSignInThrottlePerAddress: failures for many emails from one address
// (every request of this client comes from 127.0.0.1) answer 429 with
// Retry-After, with the same page for a known and an unknown email. The
// rule is tested on both engines at the Service level.
func TestSignInThrottlePerAddress(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	b := newBrowser(t, env)
	for i := range paylink.SignInIPFailureLimit {
		if p := b.signIn(fmt.Sprintf("guess%d@example.com", i), "wrong password number"); p.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: got %d, want 401", i+1, p.status)
		}
	}
	known := b.signIn("staff@example.com", password)
	unknown := b.signIn("nobody@example.com", password)
	for name, p := range map[string]page{"known email": known, "unknown email": unknown} {
		if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "900" || !strings.Contains(p.body, "network address") {
			t.Errorf("%s: got %d with Retry-After %q, want 429 with 900 and the address message", name, p.status, p.header.Get("Retry-After"))
		}
	}
	if a, u := strings.ReplaceAll(known.body, "staff@example.com", "EMAIL"), strings.ReplaceAll(unknown.body, "nobody@example.com", "EMAIL"); a != u {
		t.Errorf("pages differ:\nknown email:   %s\nunknown email: %s", a, u)
	}
	env.Clock.Advance(paylink.SignInFailureWindow + time.Second)
	b.mustSignIn("staff@example.com")
}

func TestCookieFlags(t *testing.T) {
	tests := []struct {
		name       string
		base       string
		wantSecure bool
	}{
		{"http base URL", "http://127.0.0.1", false},
		{"https base URL", "https://pay.example.com", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, svc, m := startWithBase(t, tt.base)
			if _, err := svc.CreateUser(context.Background(), paylink.NewUser{MerchantID: m.ID, Email: "a@example.com",
				Role: paylink.RoleAdmin, Password: password}); err != nil {
				t.Fatal(err)
			}
			b := &browser{t: t, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, base: srv.URL}
			login := b.get("/dashboard/login")
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/login", strings.NewReader(url.Values{
				"csrf": {login.csrf()}, "email": {"a@example.com"}, "password": {password}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, c := range (&http.Response{Header: login.header}).Cookies() {
				req.AddCookie(c)
			}
			res := b.do(req)
			if res.status != http.StatusSeeOther {
				t.Fatalf("sign in: got %d, want 303 (%s)", res.status, res.body)
			}
			var got *http.Cookie
			for _, c := range (&http.Response{Header: res.header}).Cookies() {
				if c.Name == "paylink_dashboard" {
					got = c
				}
			}
			if got == nil || got.Value == "" {
				t.Fatalf("no session cookie in %v", res.header["Set-Cookie"])
			}
			if !got.HttpOnly || got.SameSite != http.SameSiteLaxMode || got.Secure != tt.wantSecure || got.Path != "/dashboard" {
				t.Errorf("cookie: got HttpOnly=%v SameSite=%v Secure=%v Path=%q, want true Lax %v /dashboard",
					got.HttpOnly, got.SameSite, got.Secure, got.Path, tt.wantSecure)
			}
		})
	}
}

// startWithBase serves the dashboard of a Service whose base URL is base
// (apitest always uses the loopback URL) and onboards a merchant.
func startWithBase(t *testing.T, base string) (*httptest.Server, *paylink.Service, *paylink.Merchant) {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), filepath.Join(t.TempDir(), "paylink.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, err := vault.New(bytes.Repeat([]byte{7}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := paylink.NewService(paylink.Config{BaseURL: base}, paylink.Deps{Store: st, Vault: v, Processor: &processor.Sandbox{},
		Passwords: apitest.Passwords(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	h, err := dashboard.New(svc)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	m, _, err := svc.CreateMerchant(context.Background(), paylink.NewMerchant{Name: "Acme Pty Ltd", TradingName: "Acme", Country: "AU",
		Settings: paylink.MerchantSettings{Surcharge: paylink.DefaultSurchargeRates()}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, svc, m
}

func TestCSRFRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	tok := b.token()
	before := auditActions(t, env, m.ID)
	tests := []struct {
		name   string
		origin string
		path   string
		form   url.Values
	}{
		{"invite without token", env.Server.URL, "/dashboard/team/invite", url.Values{"email": {"x@example.com"}, "role": {"staff"}}},
		{"invite with a wrong token", env.Server.URL, "/dashboard/team/invite", url.Values{"csrf": {tok + "x"}, "email": {"x@example.com"}, "role": {"staff"}}},
		{"invite from another origin", "https://evil.example", "/dashboard/team/invite", url.Values{"csrf": {tok}, "email": {"x@example.com"}, "role": {"staff"}}},
		{"require two-factor without token", "", "/dashboard/team/security", url.Values{"require": {"on"}}},
		{"sign out without token", env.Server.URL, "/dashboard/logout", url.Values{}},
		{"sign in without token", env.Server.URL, "/dashboard/login", url.Values{"email": {"admin@example.com"}, "password": {password}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := b.postFrom(tt.origin, tt.path, tt.form); p.status != http.StatusForbidden {
				t.Errorf("got %d, want 403", p.status)
			}
		})
	}
	if after := auditActions(t, env, m.ID); len(after) != len(before) {
		t.Errorf("audit rows: got %v after refused posts, want unchanged %v", after, before)
	}
	if p := b.get("/dashboard/"); p.status != http.StatusOK {
		t.Errorf("session after a refused sign-out: got %d, want 200 (still signed in)", p.status)
	}
	mm, err := env.Service.Merchant(context.Background(), m.ID)
	if err != nil || mm.Settings.Dashboard.RequireTOTP {
		t.Errorf("two-factor requirement: got %v (%v), want unchanged false", mm.Settings.Dashboard.RequireTOTP, err)
	}
	if p := b.post("/dashboard/team/invite", url.Values{"csrf": {tok}, "email": {"x@example.com"}, "role": {"staff"}, "idempotency_key": {"k-invite"}}); p.status != http.StatusOK {
		t.Errorf("invite with the token: got %d, want 200", p.status)
	}
}

func TestRoleLimits(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	admin := addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	addUser(t, env, m, "viewer@example.com", paylink.RoleViewer)
	tests := []struct {
		email string
		get   map[string]int
		posts []string // actions it may not do
	}{
		{"admin@example.com", map[string]int{"/dashboard/": 200, "/dashboard/team": 200, "/dashboard/audit": 200}, nil},
		{"staff@example.com", map[string]int{"/dashboard/": 200, "/dashboard/team": 403, "/dashboard/audit": 403},
			[]string{"/dashboard/team/invite", "/dashboard/team/" + admin.ID + "/role", "/dashboard/team/" + admin.ID + "/remove", "/dashboard/team/security",
				"/dashboard/team/invites/" + strings.Repeat("ab", 32) + "/revoke"}},
		{"viewer@example.com", map[string]int{"/dashboard/": 200, "/dashboard/team": 403, "/dashboard/audit": 403},
			[]string{"/dashboard/team/invite", "/dashboard/team/" + admin.ID + "/remove", "/dashboard/team/invites/" + strings.Repeat("ab", 32) + "/revoke"}},
	}
	for _, tt := range tests {
		t.Run(tt.email, func(t *testing.T) {
			b := signedIn(t, env, tt.email)
			for path, want := range tt.get {
				if p := b.get(path); p.status != want {
					t.Errorf("GET %s: got %d, want %d", path, p.status, want)
				}
			}
			tok := b.token()
			before := auditActions(t, env, m.ID)
			for _, path := range tt.posts {
				form := url.Values{"csrf": {tok}, "email": {"new@example.com"}, "role": {"viewer"}, "require": {"on"}}
				if p := b.post(path, form); p.status != http.StatusForbidden {
					t.Errorf("POST %s: got %d, want 403", path, p.status)
				}
			}
			if after := auditActions(t, env, m.ID); len(after) != len(before) {
				t.Errorf("audit rows after refused actions: got %v, want %v", after, before)
			}
		})
	}
	u, err := env.Service.Team(context.Background(), admin)
	if err != nil || len(u) != 3 || u[0].Role != paylink.RoleAdmin {
		t.Errorf("team after refused actions: got %d users (%v), want 3 with the admin still admin", len(u), err)
	}
}

func TestMerchantsAreIsolated(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	a, other := env.Onboard(), env.Onboard()
	addUser(t, env, a, "admin@a.example", paylink.RoleAdmin)
	victim := addUser(t, env, other, "admin@other.example", paylink.RoleAdmin)
	addUser(t, env, other, "second@other.example", paylink.RoleAdmin)
	ob := signedIn(t, env, "admin@other.example") // leaves audit rows of the other merchant
	b := signedIn(t, env, "admin@a.example")
	tok := b.token()
	for _, path := range []string{"/dashboard/team/" + victim.ID + "/role", "/dashboard/team/" + victim.ID + "/remove"} {
		if p := b.post(path, url.Values{"csrf": {tok}, "role": {"viewer"}}); p.status != http.StatusNotFound {
			t.Errorf("POST %s for another merchant's user: got %d, want 404", path, p.status)
		}
	}
	if ob.get("/dashboard/").status != http.StatusOK {
		t.Error("the other merchant's admin lost the session")
	}
	for _, path := range []string{"/dashboard/team", "/dashboard/audit"} {
		if p := b.get(path); strings.Contains(p.body, "other.example") || strings.Contains(p.body, victim.ID) {
			t.Errorf("%s shows the other merchant's users or rows", path)
		}
	}
	if p := b.get("/dashboard/audit?actor=" + victim.ID); !strings.Contains(p.body, "No audit rows match.") {
		t.Errorf("audit rows of the other merchant's admin: got rows, want none")
	}
}

func TestIdleAndAbsoluteExpiry(t *testing.T) {
	env := apitest.Start(t, apitest.Options{Dashboard: []dashboard.Option{dashboard.WithIdleTimeout(15 * time.Minute)}})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	t.Run("idle", func(t *testing.T) {
		b := signedIn(t, env, "staff@example.com")
		env.Clock.Advance(14 * time.Minute)
		if p := b.get("/dashboard/"); p.status != http.StatusOK {
			t.Fatalf("after 14 idle minutes: got %d, want 200", p.status)
		}
		env.Clock.Advance(14 * time.Minute)
		if p := b.get("/dashboard/"); p.status != http.StatusOK {
			t.Fatalf("14 minutes after the last use: got %d, want 200 (idle time restarts)", p.status)
		}
		env.Clock.Advance(15*time.Minute + time.Second)
		if p := b.get("/dashboard/"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/login?done=expired") {
			t.Errorf("after 15 idle minutes: got %d to %q, want 303 to the sign-in page saying the session ended", p.status, p.header.Get("Location"))
		}
	})
	t.Run("absolute", func(t *testing.T) {
		b := signedIn(t, env, "staff@example.com")
		for elapsed := time.Duration(0); elapsed < paylink.SessionMaxAge-10*time.Minute; elapsed += 10 * time.Minute {
			env.Clock.Advance(10 * time.Minute)
			if p := b.get("/dashboard/"); p.status != http.StatusOK {
				t.Fatalf("after %v of use: got %d, want 200", elapsed+10*time.Minute, p.status)
			}
		}
		env.Clock.Advance(10 * time.Minute)
		if p := b.get("/dashboard/"); p.status != http.StatusSeeOther {
			t.Errorf("after 12 hours: got %d, want 303 to the sign-in page", p.status)
		}
	})
}

func TestSignOutAndPasswordChangeRevoke(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	one, two := newBrowser(t, env), newBrowser(t, env)
	one.mustSignIn("staff@example.com")
	two.mustSignIn("staff@example.com")
	stolen := two.sessionCookie()
	if p := two.post("/dashboard/logout", url.Values{"csrf": {two.token()}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: got %d, want 303", p.status)
	}
	replay := newBrowser(t, env)
	u, _ := url.Parse(env.Server.URL + "/dashboard/")
	replay.c.Jar.SetCookies(u, []*http.Cookie{stolen})
	if p := replay.get("/dashboard/"); p.status != http.StatusSeeOther {
		t.Errorf("signed-out session cookie: got %d, want 303 to the sign-in page", p.status)
	}
	if p := one.get("/dashboard/"); p.status != http.StatusOK {
		t.Fatalf("the other session after one signed out: got %d, want 200", p.status)
	}
	three := signedIn(t, env, "staff@example.com")
	p := one.post("/dashboard/account/password", url.Values{"csrf": {one.token()}, "current_password": {password},
		"new_password": {"a brand new long passphrase"}, "confirm": {"a brand new long passphrase"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("change password: got %d, want 303 (%s)", p.status, p.body)
	}
	for name, b := range map[string]*browser{"this session": one, "another session": three} {
		if p := b.get("/dashboard/"); p.status != http.StatusSeeOther {
			t.Errorf("%s after the password change: got %d, want 303 to the sign-in page", name, p.status)
		}
	}
	acts := auditActions(t, env, m.ID)
	for _, want := range []string{paylink.AuditSignIn, paylink.AuditSignOut, paylink.AuditPasswordChange} {
		if count(acts, want) == 0 {
			t.Errorf("audit actions %v lack %s", acts, want)
		}
	}
}

// invite makes a viewer's invite for email as the signed-in admin, with
// the idempotency key "k-invite", and returns its link.
func invite(t *testing.T, admin *browser, email string) string {
	t.Helper()
	p := admin.post("/dashboard/team/invite", url.Values{"csrf": {admin.token()}, "email": {email}, "role": {"viewer"}, "idempotency_key": {"k-invite"}})
	link := regexp.MustCompile(`id="invite-url" class="wide" readonly value="([^"]+)"`).FindStringSubmatch(p.body)
	if p.status != http.StatusOK || link == nil {
		t.Fatalf("invite: got %d without an invite link (%s)", p.status, p.body)
	}
	return link[1]
}

func TestInviteFlow(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	admin := signedIn(t, env, "admin@example.com")
	path := strings.TrimPrefix(invite(t, admin, "New@Example.com"), env.Server.URL)
	// The page reloaded (the browser sends the form again) makes no
	// second invite and shows no link.
	reload := admin.post("/dashboard/team/invite", url.Values{"csrf": {admin.token()}, "email": {"New@Example.com"}, "role": {"viewer"}, "idempotency_key": {"k-invite"}})
	if reload.status != http.StatusOK || strings.Contains(reload.body, `id="invite-url"`) || !strings.Contains(reload.body, "already made") {
		t.Errorf("the invite form sent again: got %d (%s), want the team page saying it was already made", reload.status, reload.body)
	}
	if n := strings.Count(strings.Join(auditActions(t, env, m.ID), " "), "user.invite"); n != 1 {
		t.Errorf("got %d user.invite audit rows, want 1", n)
	}
	guest := newBrowser(t, env)
	form := guest.get(path)
	if form.status != http.StatusOK || !strings.Contains(form.body, "new@example.com") {
		t.Fatalf("invite page: got %d (%s)", form.status, form.body)
	}
	weak := guest.post(path, url.Values{"csrf": {form.csrf()}, "password": {"password1234"}, "confirm": {"password1234"}})
	if weak.status != http.StatusBadRequest {
		t.Errorf("common password: got %d, want 400", weak.status)
	}
	done := guest.post(path, url.Values{"csrf": {form.csrf()}, "password": {password}, "confirm": {password}})
	if done.status != http.StatusSeeOther {
		t.Fatalf("accept: got %d, want 303 (%s)", done.status, done.body)
	}
	again := newBrowser(t, env)
	if p := again.get(path); p.status != http.StatusNotFound {
		t.Errorf("used invite: got %d, want 404", p.status)
	}
	guest.mustSignIn("new@example.com")
	if p := guest.get("/dashboard/team"); p.status != http.StatusForbidden {
		t.Errorf("invited viewer on the team page: got %d, want 403", p.status)
	}
}

// TestInviteOfAnAdminGoneSinceIsRefused: an invite opened while its
// maker was an admin, and sent after the maker went without the removal's
// clean-up (a removal from before that rule), is refused when posted:
// deleted, audited as a denied acceptance, and no user made.
func TestInviteOfAnAdminGoneSinceIsRefused(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	left := addUser(t, env, m, "left@example.com", paylink.RoleAdmin)
	admin := signedIn(t, env, "left@example.com")
	path := strings.TrimPrefix(invite(t, admin, "backup@example.com"), env.Server.URL)
	guest := newBrowser(t, env)
	form := guest.get(path)
	if form.status != http.StatusOK {
		t.Fatalf("invite page: got %d", form.status)
	}
	if err := env.Store.Update(context.Background(), func(tx paylink.Tx) error { return tx.DeleteUser(m.ID, left.ID) }); err != nil {
		t.Fatal(err)
	}
	p := guest.post(path, url.Values{"csrf": {form.csrf()}, "password": {password}, "confirm": {password}})
	if p.status != http.StatusNotFound {
		t.Errorf("accept: got %d, want 404 (the invite is not valid)", p.status)
	}
	if n := strings.Count(strings.Join(auditActions(t, env, m.ID), " "), paylink.AuditInviteAccept); n != 1 {
		t.Errorf("got %d %s audit rows, want the denied one", n, paylink.AuditInviteAccept)
	}
	if _, err := env.Service.UserByEmail(context.Background(), "backup@example.com"); paylink.AsError(err).Kind != paylink.KindNotFound {
		t.Errorf("the invited user: got %v, want none made", err)
	}
	err := env.Store.View(context.Background(), func(tx paylink.Tx) error {
		list, err := tx.Invites(m.ID, env.Clock.Now())
		if err == nil && len(list) != 0 {
			t.Errorf("outstanding invites: got %d, want the refused one deleted", len(list))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInvitesRevokedOnTheTeamPage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	admin := signedIn(t, env, "admin@example.com")
	link := invite(t, admin, "new@example.com")
	team := admin.get("/dashboard/team")
	revoke := regexp.MustCompile(`action="(/dashboard/team/invites/[0-9a-f]{64}/revoke)"`).FindStringSubmatch(team.body)
	if revoke == nil || !strings.Contains(team.body, "Outstanding invites") || !strings.Contains(team.body, "<td>admin@example.com</td>") {
		t.Fatalf("team page: got %d without the invite, its admin and a revoke form (%s)", team.status, team.body)
	}
	if strings.Contains(team.body, strings.TrimPrefix(link, env.Server.URL+"/dashboard/invite/")) {
		t.Error("the team page shows the invite's token")
	}
	done := admin.post(revoke[1], url.Values{"csrf": {admin.token()}})
	if done.status != http.StatusOK || !strings.Contains(done.body, "Invite for new@example.com revoked") || strings.Contains(done.body, "Outstanding invites") {
		t.Errorf("revoke: got %d (%s), want the team page saying so without the invite", done.status, done.body)
	}
	again := admin.post(revoke[1], url.Values{"csrf": {admin.token()}})
	if again.status != http.StatusNotFound || !strings.Contains(again.body, "no such invite") || !strings.Contains(again.body, `id="invite"`) {
		t.Errorf("revoke twice: got %d (%s), want 404 on the team page", again.status, again.body)
	}
	if p := newBrowser(t, env).get(strings.TrimPrefix(link, env.Server.URL)); p.status != http.StatusNotFound {
		t.Errorf("a revoked invite's link: got %d, want 404", p.status)
	}
	if n := count(auditActions(t, env, m.ID), paylink.AuditInviteRevoke); n != 1 {
		t.Errorf("got %d %s audit rows, want 1", n, paylink.AuditInviteRevoke)
	}
}

// recoveryCodes are the recovery codes a page shows.
var recoveryCodes = regexp.MustCompile(`<code>([a-z0-9]{5}-[a-z0-9]{5})</code>`)

// codesOn returns the recovery codes a page shows.
func codesOn(body string) []string {
	var codes []string
	for _, m := range recoveryCodes.FindAllStringSubmatch(body, -1) {
		codes = append(codes, m[1])
	}
	return codes
}

// enrolTOTP turns two-factor sign-in on for b's user on the account page
// and returns the recovery codes shown.
func enrolTOTP(t *testing.T, env *apitest.Env, b *browser) []string {
	t.Helper()
	p := b.post("/dashboard/account/totp", url.Values{"csrf": {b.token()}})
	if !strings.Contains(p.body, `<svg class="qr"`) {
		t.Errorf("set-up page has no QR code")
	}
	sm := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(p.body)
	if sm == nil {
		t.Fatalf("set-up page shows no secret: %s", p.body)
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(sm[1])
	if err != nil {
		t.Fatal(err)
	}
	p = b.post("/dashboard/account/totp/confirm", url.Values{"csrf": {b.token()}, "code": {paylink.TOTPCode(secret, env.Clock.Now())}, "password": {password}})
	codes := codesOn(p.body)
	if p.status != http.StatusOK || len(codes) != 10 {
		t.Fatalf("confirm: got %d with %d recovery codes, want 200 with 10", p.status, len(codes))
	}
	return codes
}

// signInWithCode signs email in with password and then code, and returns
// the code page's answer.
func signInWithCode(t *testing.T, env *apitest.Env, email, code string) page {
	t.Helper()
	b := newBrowser(t, env)
	b.signIn(email, password)
	codePage := b.get("/dashboard/login/totp")
	return b.post("/dashboard/login/totp", url.Values{"csrf": {codePage.csrf()}, "code": {code}})
}

func TestRecoveryCodesRegenerated(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	staff := signedIn(t, env, "staff@example.com")
	if p := staff.post("/dashboard/account/totp/recovery-codes", url.Values{"csrf": {staff.token()}, "password": {password}}); p.status != http.StatusConflict {
		t.Errorf("new codes without two-factor: got %d, want 409", p.status)
	}

	b := signedIn(t, env, "admin@example.com")
	// A set-up begun and left: another session of the user (a stolen
	// cookie) sees its secret but cannot finish it without the password.
	b.post("/dashboard/account/totp", url.Values{"csrf": {b.token()}})
	thief := signedIn(t, env, "admin@example.com")
	sm := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(thief.get("/dashboard/account").body)
	if sm == nil {
		t.Fatal("the pending set-up is not shown")
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(sm[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"", "not the password"} {
		p := thief.post("/dashboard/account/totp/confirm", url.Values{"csrf": {thief.token()}, "code": {paylink.TOTPCode(secret, env.Clock.Now())}, "password": {pw}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Password: not right") || !strings.Contains(p.body, `id="setup-password-error"`) ||
			len(codesOn(p.body)) != 0 {
			t.Errorf("confirm with password %q: got %d (%s), want 400 on the password field and no codes", pw, p.status, p.body)
		}
	}
	old := enrolTOTP(t, env, b)
	if p := signInWithCode(t, env, "admin@example.com", old[0]); p.status != http.StatusSeeOther {
		t.Fatalf("sign in with a recovery code: got %d, want 303", p.status)
	}
	if p := b.get("/dashboard/account"); !strings.Contains(p.body, "9 unused recovery codes left") {
		t.Errorf("account page after one code was spent: got %s, want it to say 9 are left", p.body)
	}
	wrong := b.post("/dashboard/account/totp/recovery-codes", url.Values{"csrf": {b.token()}, "password": {"not the password"}})
	if wrong.status != http.StatusBadRequest || !strings.Contains(wrong.body, "Password: not right") ||
		!strings.Contains(wrong.body, `id="codes-password-error"`) || len(codesOn(wrong.body)) != 0 {
		t.Errorf("wrong password: got %d (%s), want 400 naming the form's password field and no codes", wrong.status, wrong.body)
	}
	differ := b.post("/dashboard/account/password", url.Values{"csrf": {b.token()}, "current_password": {password},
		"new_password": {"a long new passphrase"}, "confirm": {"another long passphrase"}})
	if differ.status != http.StatusBadRequest || !strings.Contains(differ.body, `id="confirm-error"`) {
		t.Errorf("new passwords that differ: got %d (%s), want 400 on the confirmation field", differ.status, differ.body)
	}
	off := b.post("/dashboard/account/totp/disable", url.Values{"csrf": {b.token()}, "password": {"not the password"}})
	if off.status != http.StatusBadRequest || !strings.Contains(off.body, "Password: not right") || strings.Contains(off.body, "New password: not right") ||
		!strings.Contains(off.body, `id="totp-password-error"`) {
		t.Errorf("turning two-factor off with a wrong password: got %d (%s), want 400 on its own field", off.status, off.body)
	}
	p := b.post("/dashboard/account/totp/recovery-codes", url.Values{"csrf": {b.token()}, "password": {password}})
	fresh := codesOn(p.body)
	if p.status != http.StatusOK || len(fresh) != 10 || !strings.Contains(p.body, "the old ones no longer work") {
		t.Fatalf("new codes: got %d with %d codes (%s), want 200 with 10", p.status, len(fresh), p.body)
	}
	if p := signInWithCode(t, env, "admin@example.com", old[1]); p.status != http.StatusUnauthorized {
		t.Errorf("an old unused code: got %d, want 401", p.status)
	}
	if p := signInWithCode(t, env, "admin@example.com", fresh[0]); p.status != http.StatusSeeOther {
		t.Errorf("a new code: got %d, want 303", p.status)
	}
	if n := count(auditActions(t, env, m.ID), paylink.AuditRecoveryCodes); n != 1 {
		t.Errorf("got %d %s audit rows, want 1", n, paylink.AuditRecoveryCodes)
	}
}

func TestTwoFactorSignIn(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	b := signedIn(t, env, "admin@example.com")
	codes := enrolTOTP(t, env, b)
	b.post("/dashboard/logout", url.Values{"csrf": {b.token()}})

	b2 := newBrowser(t, env)
	if p := b2.signIn("admin@example.com", password); p.header.Get("Location") != "/dashboard/login/totp" {
		t.Fatalf("sign in with two-factor: got %d to %q, want the code page", p.status, p.header.Get("Location"))
	}
	if p := b2.get("/dashboard/"); p.header.Get("Location") != "/dashboard/login/totp" {
		t.Errorf("home before the code: got %d to %q, want the code page", p.status, p.header.Get("Location"))
	}
	codePage := b2.get("/dashboard/login/totp")
	if p := b2.post("/dashboard/login/totp", url.Values{"csrf": {codePage.csrf()}, "code": {"000000"}}); p.status != http.StatusUnauthorized {
		t.Errorf("wrong code: got %d, want 401", p.status)
	}
	if p := b2.post("/dashboard/login/totp", url.Values{"csrf": {codePage.csrf()}, "code": {codes[0]}}); p.status != http.StatusSeeOther {
		t.Fatalf("recovery code: got %d, want 303 (%s)", p.status, p.body)
	}
	b2.token()

	b3 := newBrowser(t, env)
	b3.signIn("admin@example.com", password)
	codePage = b3.get("/dashboard/login/totp")
	if p := b3.post("/dashboard/login/totp", url.Values{"csrf": {codePage.csrf()}, "code": {codes[0]}}); p.status != http.StatusUnauthorized {
		t.Errorf("spent recovery code: got %d, want 401", p.status)
	}

	// The admin requires two-factor sign-in: staff without it see only the account page.
	if p := b2.post("/dashboard/team/security", url.Values{"csrf": {b2.token()}, "require": {"on"}}); p.status != http.StatusSeeOther {
		t.Fatalf("require two-factor: got %d, want 303", p.status)
	}
	s := signedIn(t, env, "staff@example.com")
	if p := s.get("/dashboard/"); p.header.Get("Location") != "/dashboard/account" {
		t.Errorf("staff without two-factor: got %d to %q, want the account page", p.status, p.header.Get("Location"))
	}
	acts := auditActions(t, env, m.ID)
	for _, want := range []string{paylink.AuditTOTPEnable, paylink.AuditSignInFailed, paylink.AuditTOTPRequirement} {
		if count(acts, want) == 0 {
			t.Errorf("audit actions %v lack %s", acts, want)
		}
	}
}

// TestPendingSessionSignsOut: a session opened by the password and
// waiting for its second factor can be ended from the code page (its
// "Cancel and sign out" form): the session is deleted, not only the
// cookie, so whoever cannot give the code leaves nothing open.
func TestPendingSessionSignsOut(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	enrolTOTP(t, env, b)

	pending := newBrowser(t, env)
	if p := pending.signIn("admin@example.com", password); p.header.Get("Location") != "/dashboard/login/totp" {
		t.Fatalf("sign in with two-factor: got %d to %q, want the code page", p.status, p.header.Get("Location"))
	}
	cookie := pending.sessionCookie()
	codePage := pending.get("/dashboard/login/totp")
	if !strings.Contains(codePage.body, `action="/dashboard/logout"`) {
		t.Errorf("the code page has no sign-out form")
	}
	out := pending.post("/dashboard/logout", url.Values{"csrf": {codePage.csrf()}})
	if out.status != http.StatusSeeOther || out.header.Get("Location") != "/dashboard/login?done=signed-out" {
		t.Errorf("sign out: got %d to %q, want 303 to /dashboard/login?done=signed-out", out.status, out.header.Get("Location"))
	}
	again := newBrowser(t, env)
	u, _ := url.Parse(env.Server.URL + "/dashboard/")
	again.c.Jar.SetCookies(u, []*http.Cookie{cookie})
	if p := again.get("/dashboard/login/totp"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/dashboard/login?") {
		t.Errorf("the signed-out session's cookie: got %d to %q, want 303 to the sign-in page", p.status, p.header.Get("Location"))
	}
	if acts := auditActions(t, env, m.ID); count(acts, paylink.AuditSignOut) != 1 {
		t.Errorf("audit actions %v: want one %s", acts, paylink.AuditSignOut)
	}
}

func TestSessionsAcrossInstances(t *testing.T) {
	dsn := pg.Database(t)
	one := apitest.Start(t, apitest.Options{DSN: dsn})
	two := apitest.Start(t, apitest.Options{DSN: dsn, Clock: one.Clock})
	m := one.Onboard()
	addUser(t, one, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, one, "admin@example.com")
	c := b.sessionCookie()
	other := newBrowser(t, two)
	u, _ := url.Parse(two.Server.URL + "/dashboard/")
	other.c.Jar.SetCookies(u, []*http.Cookie{c})
	p := other.get("/dashboard/team")
	if p.status != http.StatusOK || !strings.Contains(p.body, "admin@example.com") {
		t.Fatalf("the session on the second instance: got %d, want 200 with the team", p.status)
	}
	if p := other.post("/dashboard/logout", url.Values{"csrf": {p.csrf()}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign out on the second instance: got %d, want 303", p.status)
	}
	if p := b.get("/dashboard/"); p.status != http.StatusSeeOther {
		t.Errorf("the first instance after sign-out on the second: got %d, want 303", p.status)
	}
}

// TestInviteMailed: with a mailer configured, an invite is also mailed
// to the invited address (here to a fake SMTP server at the edge): the
// page says so and still shows the link once; the mail holds the link,
// the merchant's name as plain text, and no password or other secret. A
// mail that cannot be sent leaves the invite made and its link shown.
func TestInviteMailed(t *testing.T) {
	const name = `Acme <b>&amp;</b> "Coffee" & Co`
	srv := mailertest.Start(t, "paylink", "smtp password")
	tests := []struct {
		name, smtpPassword string
		mailed             bool
	}{
		{"sent", "smtp password", true},
		{"not sent", "wrong smtp password", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mail, err := mailer.New(mailer.Config{Addr: srv.Addr, From: "paylink <no-reply@example.com>", Username: "paylink", Password: tt.smtpPassword})
			if err != nil {
				t.Fatal(err)
			}
			env := apitest.Start(t, apitest.Options{Dashboard: []dashboard.Option{dashboard.WithMailer(mail)}})
			m := env.Onboard(func(n *paylink.NewMerchant) { n.TradingName = name })
			addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
			admin := signedIn(t, env, "admin@example.com")
			before := len(srv.Messages())
			csrf := admin.token()
			p := admin.post("/dashboard/team/invite", url.Values{"csrf": {csrf}, "email": {"new@example.com"}, "role": {"staff"}, "idempotency_key": {"k-invite"}})
			link := regexp.MustCompile(`id="invite-url" class="wide" readonly value="([^"]+)"`).FindStringSubmatch(p.body)
			if p.status != http.StatusOK || link == nil {
				t.Fatalf("invite: got %d without the link, want 200 with it (%s)", p.status, p.body)
			}
			msgs := srv.Messages()[before:]
			if !tt.mailed {
				if len(msgs) != 0 || !strings.Contains(p.body, "could not be sent") {
					t.Errorf("got %d messages and page %s, want none and the failure said", len(msgs), p.body)
				}
				if g := newBrowser(t, env).get(strings.TrimPrefix(link[1], env.Server.URL)); g.status != http.StatusOK {
					t.Errorf("the shown link: got %d, want 200", g.status)
				}
				return
			}
			if !strings.Contains(p.body, "Invite sent by email to new@example.com") || !strings.Contains(p.body, "also sent by email") {
				t.Errorf("page: got %s, want it to say the invite was mailed", p.body)
			}
			if len(msgs) != 1 || len(msgs[0].To) != 1 || msgs[0].To[0] != "new@example.com" || msgs[0].From != "no-reply@example.com" {
				t.Fatalf("messages: got %+v, want one from no-reply@example.com to new@example.com", msgs)
			}
			head, body, err := msgs[0].Parse()
			if err != nil {
				t.Fatal(err)
			}
			subject, err := new(mime.WordDecoder).DecodeHeader(head.Get("Subject"))
			if err != nil || !strings.Contains(subject, name) {
				t.Errorf("subject: got %q (%v), want the merchant's name %q", subject, err, name)
			}
			for _, want := range []string{link[1], name, "admin@example.com", "as staff"} {
				if !strings.Contains(body, want) {
					t.Errorf("mail body %q lacks %q", body, want)
				}
			}
			for _, secret := range []string{password, "smtp password", admin.sessionCookie().Value, csrf, m.Creds.CompanyToken, "&lt;", "&amp;amp;"} {
				if strings.Contains(msgs[0].Data, secret) || strings.Contains(body, secret) {
					t.Errorf("mail holds %q, want it not to", secret)
				}
			}
			guest := newBrowser(t, env)
			if g := guest.get(strings.TrimPrefix(link[1], env.Server.URL)); g.status != http.StatusOK || !strings.Contains(g.body, "new@example.com") {
				t.Errorf("the mailed link: got %d, want the invite page", g.status)
			}
		})
	}
}

// TestCardNumbersTypedIntoFormsAreNotShownBack: a card number pasted into
// the payments search (a 400: the search takes the last 4 digits), a
// refused payment link form or the audit filter comes back masked, in
// the boxes and in every link of the page, never whole.
func TestCardNumbersTypedIntoFormsAreNotShownBack(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	const pan, grouped = "4111111111111111", "5555 5555 5555 4444"
	shown := func(name string, p page, wantStatus int) {
		t.Helper()
		if p.status != wantStatus {
			t.Errorf("%s: got %d, want %d", name, p.status, wantStatus)
		}
		for _, c := range []string{pan, grouped, "5555555555554444", url.QueryEscape(grouped)} {
			if strings.Contains(p.body, c) {
				t.Errorf("%s: the page shows the card number %q", name, c)
			}
		}
		if !strings.Contains(p.body, "411111******1111") && !strings.Contains(p.body, "555555******4444") &&
			!strings.Contains(p.body, url.QueryEscape("411111******1111")) {
			t.Errorf("%s: no masked card number on the page", name)
		}
	}
	shown("payments search", b.get("/dashboard/payments?q="+pan), http.StatusBadRequest)
	shown("links form", b.post("/dashboard/links", url.Values{"csrf": {b.token()}, "amount": {"ten"}, "currency": {"AUD"},
		"merchantReference": {pan}, "customer.first_name": {grouped}}), http.StatusBadRequest)
	shown("audit filter", b.get("/dashboard/audit?actor="+pan+"&action="+url.QueryEscape(grouped)), http.StatusOK)
	ref := env.Post("/v5/purchase", m, env.CardPurchase(m, "4000056655665556", "10.00")).Str("purchase.purchase_reference")
	shown("a payment's back link", b.get("/dashboard/payments/"+ref+"?back="+url.QueryEscape("/dashboard/payments?q="+pan)), http.StatusOK)
}

// TestTheTwoFactorRequirementIsACheckbox: the requirement's form takes
// its checkbox's "on" or nothing; another value is refused with 400 and
// changes nothing, where it was read as "optional".
func TestTheTwoFactorRequirementIsACheckbox(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	p := b.post("/dashboard/team/security", url.Values{"csrf": {b.token()}, "require": {"1"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.body, "is a checkbox") {
		t.Errorf("require=1: got %d, want 400 saying it is a checkbox", p.status)
	}
	rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{MerchantID: m.ID, Action: paylink.AuditTOTPRequirement, Limit: 10})
	if err != nil || len(rows) != 0 {
		t.Errorf("after a refused value: %d audit rows (%v), want none", len(rows), err)
	}
}

// TestTeamChangesAreConfirmed: a role change, a removal and the sign-in
// settings each land on the team page with a notice saying what was done.
func TestTeamChangesAreConfirmed(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	staff := addUser(t, env, m, "staff@example.com", paylink.RoleStaff)
	b := signedIn(t, env, "admin@example.com")
	tok := b.token()
	for _, c := range []struct {
		path   string
		form   url.Values
		notice string
	}{
		{"/dashboard/team/" + staff.ID + "/role", url.Values{"csrf": {tok}, "role": {"viewer"}}, "The role was changed."},
		{"/dashboard/team/security", url.Values{"csrf": {tok}}, "The sign-in settings were saved."},
		{"/dashboard/team/" + staff.ID + "/remove", url.Values{"csrf": {tok}, "confirm": {"yes"}}, "The member was removed."},
	} {
		if strings.HasSuffix(c.path, "/remove") {
			// The list's Remove button asks first and removes nothing.
			ask := b.post(c.path, url.Values{"csrf": {tok}})
			if ask.status != http.StatusOK || !strings.Contains(ask.body, `id="confirm-remove"`) {
				t.Errorf("Remove without confirming: got %d without the question", ask.status)
			}
			if team, _ := env.Service.Team(context.Background(), staffAdmin(t, env, m)); len(team) != 2 {
				t.Errorf("after Remove without confirming: %d members, want 2", len(team))
			}
		}
		p := b.post(c.path, c.form)
		if p.status != http.StatusSeeOther {
			t.Fatalf("POST %s: got %d: %s", c.path, p.status, p.body)
		}
		if page := b.get(p.header.Get("Location")); !strings.Contains(page.body, c.notice) {
			t.Errorf("after POST %s: the team page lacks %q", c.path, c.notice)
		}
	}
	// The audit log names the admin who made the changes by email; the
	// removed member's rows keep its id.
	audit := b.get("/dashboard/audit")
	if !strings.Contains(audit.body, ">admin@example.com</a>") {
		t.Errorf("the audit page does not name the admin by email:\n%s", audit.body)
	}
}

// TestSignInReturnsToThePage: a page asked for without a session, or
// after the session ended unused, is where signing in lands (the sign-in
// page saying the session ended); next never leads off the dashboard.
func TestSignInReturnsToThePage(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	env.Clock.Advance(time.Hour) // past the idle timeout
	p := b.get("/dashboard/team?x=1")
	want := "/dashboard/login?done=expired&next=" + url.QueryEscape("/dashboard/team?x=1")
	if p.header.Get("Location") != want {
		t.Fatalf("an ended session: got %d to %q, want %s", p.status, p.header.Get("Location"), want)
	}
	login := b.get(want)
	if !strings.Contains(login.body, "Your session has ended") || !strings.Contains(login.body, `name="next" value="/dashboard/team?x=1"`) {
		t.Fatalf("the sign-in page lacks the notice or the page to return to:\n%s", login.body)
	}
	done := b.post("/dashboard/login", url.Values{"csrf": {login.csrf()}, "email": {"admin@example.com"}, "password": {password},
		"next": {"/dashboard/team?x=1"}})
	if done.status != http.StatusSeeOther || done.header.Get("Location") != "/dashboard/team?x=1" {
		t.Errorf("signing in: got %d to %q, want the team page", done.status, done.header.Get("Location"))
	}
}

// staffAdmin is m's admin user.
func staffAdmin(t *testing.T, env *apitest.Env, m *apitest.Merchant) *paylink.User {
	t.Helper()
	in, err := env.Service.SignIn(context.Background(), "admin@example.com", password)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := env.Service.StaffSession(context.Background(), in.Token, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ss.User
}

// TestWrongMethodsAre405: a dashboard page asked for under a method it
// does not take is 405 with Allow, as the rest of the site answers; an
// address that is no page is 404.
func TestWrongMethodsAre405(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	b := signedIn(t, env, "admin@example.com")
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodDelete, "/dashboard/payments", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPut, "/dashboard/team/invite", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/dashboard/team/invite", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/dashboard/no-such-page", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, env.Server.URL+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := b.do(req); p.status != tt.status || p.header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: got %d with Allow %q, want %d with %q", tt.method, tt.path, p.status, p.header.Get("Allow"), tt.status, tt.allow)
		}
	}
}

// TestAFormSentWithoutASessionSaysItWasNotCarriedOut: a refund form sent
// with no session cookie at all (signed out in another tab, which clears
// the cookie for every tab) goes to the sign-in page saying the form was
// not carried out, as one whose session ended does (verification sweep:
// it said nothing, and signing in led back to the page as if done).
func TestAFormSentWithoutASessionSaysItWasNotCarriedOut(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	ref := purchase(t, env, m, "10.00", false)
	p := newBrowser(t, env).post("/dashboard/payments/"+ref+"/refund", url.Values{"amount": {"1.00"}})
	if loc := p.header.Get("Location"); p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/login?done=expired_form") {
		t.Errorf("a form without a session: got %d to %q, want the sign-in page saying it was not carried out", p.status, loc)
	}
	if got := stored(t, env, m, ref).Refunded; got != 0 {
		t.Errorf("refunded %d, want nothing", got)
	}
}

// TestABrowserLeavingEarlyIsNoError: a browser that closes the
// connection after the first bytes of a page or of the payments export
// leaves no ERROR line (webhooks sweep: every such page logged "dashboard
// render ... broken pipe" at ERROR, written as it rendered; second
// verification sweep: the export the same).
func TestABrowserLeavingEarlyIsNoError(t *testing.T) {
	env := apitest.Start(t, apitest.Options{})
	m := env.Onboard()
	addUser(t, env, m, "admin@example.com", paylink.RoleAdmin)
	for range paylink.MaxPaymentPage + 20 { // long answers: still being written when the browser leaves
		env.Post("/v5/purchase", m, env.CardPurchase(m, "4111111111111111", "5.00"))
	}
	b := signedIn(t, env, "admin@example.com")
	for _, path := range []string{"/dashboard/payments", "/dashboard/payments?format=csv"} {
		for range 10 { // a browser leaves before the last write on most of these, not all
			conn := b.rawGet(path)
			first := make([]byte, 200)
			if _, err := io.ReadFull(conn, first); err != nil || !strings.HasPrefix(string(first), "HTTP/1.1 200") {
				t.Fatalf("%s: first bytes: got %q, %v", path, first, err)
			}
			conn.Close()
		}
	}
	if p := b.get("/dashboard/payments"); p.status != http.StatusOK || len(p.body) < 15000 {
		t.Fatalf("the page afterwards: got %d, %d bytes; want 200 and a long page", p.status, len(p.body))
	}
	if logs := env.LogText(); strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a browser leaving early was logged as an error:\n%s", logs)
	}
}
