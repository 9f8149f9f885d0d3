package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/paylink/paylink"
	"github.com/paylink/paylink/internal/apitest"
	"github.com/paylink/paylink/internal/pgtest"
)

// pg is the package's throwaway PostgreSQL.
var pg pgtest.Shared

func TestMain(m *testing.M) {
	stop := startBrowser()
	pg.Start()
	code := m.Run()
	stop()
	pg.Stop()
	os.Exit(code)
}

// eachEngine runs fn on SQLite and on PostgreSQL.
func eachEngine(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, "") })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database(t)) })
}

// password is every test user's password.
const password = "correct staple battery horse"

// addUser creates a user of m with a role.
func addUser(t *testing.T, env *apitest.Env, m *apitest.Merchant, email string, role paylink.Role) *paylink.User {
	t.Helper()
	u, err := env.Service.CreateUser(context.Background(), paylink.NewUser{MerchantID: m.ID, Email: email, Role: role, Password: password})
	if err != nil {
		t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// browser is an HTTP client with its own cookies that does not follow
// redirects, so tests see each 303.
type browser struct {
	t    *testing.T
	env  *apitest.Env
	c    *http.Client
	base string
}

func newBrowser(t *testing.T, env *apitest.Env) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &browser{t: t, env: env, c: c, base: env.Server.URL}
}

// page is a response with its body read.
type page struct {
	status int
	header http.Header
	body   string
}

// csrf is the token of the page's first form.
func (p page) csrf() string {
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return m[1]
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

// get fetches a path.
func (b *browser) get(path string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post submits a form as a browser would: with this site's Origin.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	return b.postFrom(b.base, path, form)
}

// postFrom submits a form with an Origin header ("" for none).
func (b *browser) postFrom(origin, path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return b.do(req)
}

// signIn submits the sign-in form and returns the answer.
func (b *browser) signIn(email, pw string) page {
	b.t.Helper()
	p := b.get("/dashboard/login")
	return b.post("/dashboard/login", url.Values{"csrf": {p.csrf()}, "email": {email}, "password": {pw}})
}

// mustSignIn signs in and fails unless it lands on the dashboard.
func (b *browser) mustSignIn(email string) {
	b.t.Helper()
	p := b.signIn(email, password)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/dashboard/" {
		b.t.Fatalf("sign in %s: got %d to %q, want 303 to /dashboard/ (%s)", email, p.status, p.header.Get("Location"), p.body)
	}
}

// signedIn is a new browser signed in as email (a user with the tests'
// password).
func signedIn(t *testing.T, env *apitest.Env, email string) *browser {
	t.Helper()
	b := newBrowser(t, env)
	b.mustSignIn(email)
	return b
}

// rawGet sends GET path with b's cookies on a connection of its own, with
// a small receive buffer (a slow reader), and returns it to read the
// answer from: tests that leave a page early or read it by halves.
func (b *browser) rawGet(path string) net.Conn {
	b.t.Helper()
	u, _ := url.Parse(b.base + "/dashboard/")
	var cookies []string
	for _, c := range b.c.Jar.Cookies(u) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		b.t.Fatal(err)
	}
	conn.(*net.TCPConn).SetReadBuffer(2048)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nConnection: close\r\n\r\n", path, u.Host, strings.Join(cookies, "; "))
	return conn
}

// token is the CSRF token of a signed-in page.
func (b *browser) token() string {
	b.t.Helper()
	p := b.get("/dashboard/")
	if p.status != http.StatusOK || p.csrf() == "" {
		b.t.Fatalf("home: got %d without a token, want 200 with one", p.status)
	}
	return p.csrf()
}

// sessionCookie is the browser's dashboard session cookie.
func (b *browser) sessionCookie() *http.Cookie {
	u, _ := url.Parse(b.base + "/dashboard/")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "paylink_dashboard" {
			return c
		}
	}
	return nil
}

// auditActions lists the merchant's audit actions, oldest first.
func auditActions(t *testing.T, env *apitest.Env, mid string) []string {
	t.Helper()
	rows, err := env.Service.AuditLog(context.Background(), paylink.AuditFilter{MerchantID: mid, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, r.Action)
	}
	return out
}

// count is how many times s occurs in list.
func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
